"""``seawall carryover list|validate``: the carryover issues of the configured tracker.

``list`` shows the open carryover issues with number, title, labels and fingerprint.
``validate`` checks the newest session's ledger (``.seawall/<session>/state.json``):
every SPIRAL/FAILED line must point to an issue; the missing ones are filed now.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordinator.tracker import IssueTracker

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``carryover list`` and ``carryover validate``."""
    group = subparsers.add_parser("carryover", help="list and validate carryover issues")
    commands = group.add_subparsers(dest="carryover_command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="list the open carryover issues")
    _tracker_options(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_list)

    validate = commands.add_parser(
        "validate", help="file the carryovers missing from the newest session's history"
    )
    _tracker_options(validate)
    validate.add_argument("--session", help="session id (default: the newest under .seawall/)")
    validate.add_argument(
        "--plan", help="the plan identity used in fingerprints (default: from state.json)"
    )
    validate.add_argument(
        "--dry-run", action="store_true", help="only report what is missing (exit 1 if any)"
    )
    validate.set_defaults(handler=_validate)


def _tracker_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tracker",
        default=None,
        help="tracker name: local, github, gitlab, ... (default: the session's, else local)",
    )
    parser.add_argument("--repo", type=Path, default=None, help="repository root (default: cwd)")
    parser.add_argument(
        "--project", help="owner/name on GitHub or group/project on GitLab (tracker setting)"
    )
    parser.add_argument("--url", help="GitHub Enterprise API URL or self-hosted GitLab URL")
    parser.add_argument("--label", default="carryover", help="the carryover label")


def _open(args: argparse.Namespace) -> IssueTracker:
    from coordinator.model import TrackerConfig
    from coordinator.tracker import open_tracker

    config = TrackerConfig(
        kind=args.tracker or "local", repository=args.project, url=args.url, label=args.label
    )
    return open_tracker(config, root=_root(args))


def _root(args: argparse.Namespace) -> Path:
    return (args.repo or Path.cwd()).resolve()


def _list(args: argparse.Namespace) -> int:
    import json

    from coordinator.carryover import find_marker

    with _open(args) as tracker:
        issues = sorted(tracker.list_issues(args.label), key=lambda issue: issue.number)
    rows = [
        {
            "number": issue.number,
            "title": issue.title,
            "labels": list(issue.labels),
            "fingerprint": find_marker(issue.body),
            "url": issue.url,
        }
        for issue in issues
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not issues:
        print(f"no open issues labelled {args.label!r}")
    for issue in issues:
        fp = find_marker(issue.body) or "(no fingerprint)"
        print(f"#{issue.number}  {issue.title}  [{', '.join(issue.labels)}]  {fp}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from coordinator.carryover import (
        CarryoverFiler,
        covered_tasks,
        file_missing,
        issue_suffix,
        ledger_entries,
        missing_carryovers,
    )
    from coordinator.telemetry import EventLog

    state_path = _state_path(_root(args), args.session)
    state = _load(state_path)
    session = str(state.get("session") or state_path.parent.name)
    entries = ledger_entries(state)
    covered = covered_tasks(state)
    missing = missing_carryovers(entries, covered_tasks=covered)
    if not missing:
        print(f"session {session}: every SPIRAL/FAILED line has its issue")
        return 0
    if args.dry_run:
        for entry in missing:
            print(f"missing: wave {entry.wave}  {entry.task}  {entry.status.upper()}")
        return 1
    plan = _plan_identity(state, args.plan)
    events = EventLog(state_path.parent / "events.jsonl", session=session)
    if args.tracker is None:
        args.tracker = str(state.get("tracker") or "local")
    failed = 0
    with _open(args) as tracker:
        filer = CarryoverFiler(tracker, session=session, label=args.label, events=events)
        for entry, result in file_missing(filer, entries, plan=plan, covered_tasks=covered):
            line = f"wave {entry.wave}  {entry.task}  {entry.status.upper()}"
            if result.skipped == "error":
                failed += 1
                print(f"{line}  error: {result.error}")
            else:
                print(f"{line}  {issue_suffix(result)}  {result.url or ''}".rstrip())
    return 1 if failed else 0


def _state_path(root: Path, session: str | None) -> Path:
    from coordinator.errors import ConfigurationError

    base = root / ".seawall"
    if session:
        path = base / session / "state.json"
        if not path.is_file():
            raise ConfigurationError(f"no ledger for session {session!r}: {path} does not exist")
        return path
    candidates = sorted(base.glob("*/state.json"), key=lambda p: p.stat().st_mtime_ns)
    if not candidates:
        raise ConfigurationError(f"no session ledger found under {base} (*/state.json)")
    return candidates[-1]


def _load(path: Path) -> dict[str, Any]:
    import json

    from coordinator.errors import StateError

    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StateError(f"cannot read the session ledger {path}: {exc}") from exc
    if not isinstance(state, dict):
        raise StateError(f"{path} is not a JSON object")
    return state


def _plan_identity(state: dict[str, Any], override: str | None) -> str:
    """The plan identity: ``--plan``, else the ledger's ``name`` (the plan's session name).

    ``plan`` (a string, or an object with ``identity`` or ``name``) takes precedence over
    ``name`` when a ledger carries it.
    """
    from coordinator.errors import ConfigurationError

    if override:
        return override
    plan = state.get("plan")
    if isinstance(plan, dict):
        plan = plan.get("identity") or plan.get("name")
    if not (isinstance(plan, str) and plan.strip()):
        plan = state.get("name")
    if isinstance(plan, str) and plan.strip():
        return plan
    raise ConfigurationError(
        "the ledger does not name its plan; pass --plan with the plan's [session] name"
    )
