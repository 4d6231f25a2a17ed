"""``seawall adapters list|check``: which adapters are installed, and do they work.

``list`` shows every tracker and runner name with its kind and the distribution (and
version) that provides it. ``check`` loads each of them (or, given a plan, builds the
plan's tracker and runners), then lists one page of issues from the tracker and asks
each runner's executable for its ``--version``. Exit 1 when anything is broken; an
adapter whose optional extra is not installed is said (with its install line) but fails
only when the plan checked uses it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seawall.cli.documents import AdapterCheck, AdapterRow
    from seawall.model import TrackerConfig
    from seawall.runner import AgentRunner

__all__ = ["add_tracker_option", "parse_option", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    adapters = subparsers.add_parser(
        "adapters",
        help="list and check the installed trackers and runners",
        description="List the tracker and runner adapters (built-in and from packages "
        "registered under the seawall.trackers / seawall.runners entry points), or check "
        "that they load and work.",
    )
    steps = adapters.add_subparsers(dest="step", metavar="STEP", required=True)
    listing = steps.add_parser(
        "list",
        help="every adapter name, its kind and its package",
        description="List every adapter name with its kind (tracker or runner), the "
        "package that provides it and its version.",
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_list)
    check = steps.add_parser(
        "check",
        help="load every adapter, or build and probe a plan's",
        description="Without PLAN: import every adapter and check it implements its port. "
        "With PLAN: build the plan's tracker and runners, list the tracker's carryover "
        "issues, and run each runner's executable with --version. Exit 1 on any failure.",
    )
    check.add_argument("plan", nargs="?", help="the plan file (TOML)")
    check.add_argument("--repo", type=Path, default=None, help="repository root (default: cwd)")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(handler=_check)


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as a TOML value (``3``, ``true``, ``["a"]``), else a
    string: ``--tracker-option timeout=5`` is the integer 5, ``url=x`` the string "x"."""
    import tomllib

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    if isinstance(value, list):
        value = tuple(str(item) for item in value)
    return key.strip(), value


def add_tracker_option(parser: argparse.ArgumentParser) -> None:
    """``--tracker-option KEY=VALUE`` (repeatable): one of the tracker's ``options``."""
    parser.add_argument(
        "--tracker-option",
        dest="tracker_options",
        metavar="KEY=VALUE",
        type=parse_option,
        action="append",
        default=[],
        help="a tracker setting, as in [session.tracker.options] (repeatable; VALUE is "
        'read as TOML: 5, true, "text"; anything else is a string)',
    )


def tracker_config(config: TrackerConfig, args: argparse.Namespace) -> TrackerConfig:
    """``config`` with ``--tracker`` and ``--tracker-option`` applied."""
    from dataclasses import replace
    from types import MappingProxyType

    kind = getattr(args, "tracker", None) or config.kind
    pairs = getattr(args, "tracker_options", None) or []
    if kind != config.kind:
        config = replace(config, kind=kind, options=MappingProxyType({}))
    if pairs:
        config = replace(config, options=MappingProxyType({**config.options, **dict(pairs)}))
    return config


def _rows() -> list[AdapterRow]:
    from seawall.cli.documents import AdapterRow
    from seawall.registry import RUNNER_GROUP, TRACKER_GROUP, entries

    return [
        AdapterRow(
            name=entry.name,
            kind=entry.kind,
            package=entry.package,
            version=entry.version,
            target=entry.target,
            builtin=entry.builtin,
            collides_with=entry.collides_with,
        )
        for group in (TRACKER_GROUP, RUNNER_GROUP)
        for entry in entries(group)
    ]


def _list(args: argparse.Namespace) -> int:
    rows = _rows()
    if args.json:
        from seawall.cli.documents import AdapterList
        from seawall.codec import encode_text

        print(encode_text(AdapterList(adapters=tuple(rows))))
        return 0
    for row in rows:
        clash = f"  (error: collides with the built-in {row.collides_with!r})"
        print(
            f"{row.kind:<8} {row.name:<16} {row.package} {row.version}"
            + (clash if row.collides_with else "")
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    from seawall.cli.documents import AdapterChecks

    results = _check_plan(args) if args.plan else _check_all()
    failed = [r for r in results if not r.ok]
    if args.json:
        from seawall.codec import encode_text

        print(encode_text(AdapterChecks(ok=not failed, adapters=tuple(results))))
    else:
        for row in results:
            mark = "ok  " if row.ok else "FAIL"
            if row.ok and row.extra:
                mark = "off "
            print(f"{mark} {row.kind:<8} {row.name:<16} {row.detail}")
        if failed:
            print(f"{len(failed)} broken adapter(s)")
    return 1 if failed else 0


def _check_all() -> list[AdapterCheck]:
    from seawall.cli.documents import AdapterCheck
    from seawall.errors import ConfigurationError, MissingExtraError
    from seawall.registry import RUNNER_GROUP, TRACKER_GROUP, entries, load, resolve
    from seawall.runner import AgentRunner, undeclared_processes

    results = []
    for group in (TRACKER_GROUP, RUNNER_GROUP):
        for entry in entries(group):
            extra = None
            try:
                if entry.collides_with:
                    resolve(group, entry.name)  # raises the collision error
                loaded = load(entry)
                ok, detail = True, f"loads ({entry.source})"
                if isinstance(loaded, type) and issubclass(loaded, AgentRunner):
                    warning = undeclared_processes(loaded)
                    detail += f"; warning: {warning}" if warning else ""
            except MissingExtraError as exc:  # optional: broken only for a plan using it
                ok, extra = True, exc.extra
                detail = f"optional extra {exc.extra!r} not installed: {exc.hint}"
            except ConfigurationError as exc:
                ok, detail = False, str(exc)
            results.append(
                AdapterCheck(name=entry.name, kind=entry.kind, ok=ok, detail=detail, extra=extra)
            )
    return results


def _check_plan(args: argparse.Namespace) -> list[AdapterCheck]:
    from seawall.cli.documents import AdapterCheck
    from seawall.errors import ConfigurationError, TrackerError
    from seawall.plan import load_plan
    from seawall.plan.adapters import checked_adapters

    plan = load_plan(args.plan)
    root = (args.repo or Path.cwd()).resolve()
    results: list[AdapterCheck] = []
    try:
        with checked_adapters(plan, root=root) as adapters:
            tracker = plan.session.tracker.kind
            try:
                issues = adapters.tracker.list_issues(plan.session.tracker.label)
                ok, detail = True, f"listed {len(issues)} open carryover issue(s)"
            except TrackerError as exc:
                ok, detail = False, str(exc)
            results.append(AdapterCheck(name=tracker, kind="tracker", ok=ok, detail=detail))
            for name, runner in adapters.runners.items():
                ok, detail = _probe(name, runner, root)
                results.append(AdapterCheck(name=name, kind="runner", ok=ok, detail=detail))
    except ConfigurationError as exc:
        results.append(
            AdapterCheck(name=plan.path or "plan", kind="plan", ok=False, detail=str(exc))
        )
    return results


def _probe(name: str, runner: AgentRunner, cwd: Path) -> tuple[bool, str]:
    """The session preflight's probe: the runner's program resolves and answers."""
    from seawall.errors import RunnerError
    from seawall.runner import undeclared_processes
    from seawall.session.preflight import probe_runner

    warning = undeclared_processes(type(runner))
    note = f"; warning: {warning}" if warning else ""
    probe = runner.probe()
    if probe is None:
        return True, f"built ({type(runner).__name__} starts no local program){note}"
    try:
        probe_runner(name, probe, cwd=cwd)
    except RunnerError as exc:
        return False, str(exc)
    return True, f"`{' '.join((probe.executable, *probe.version_args))}` answered{note}"
