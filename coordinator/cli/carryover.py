"""``seawall carryover list|validate``: the carryover issues of the configured tracker.

``list`` shows the open carryover issues with number, title, labels and fingerprint.
``validate`` checks the newest session's ledger (``.seawall/<session>/state.json``):
every SPIRAL/FAILED line must point to an issue; the missing ones are filed now. It
also closes, as duplicates with a link to the oldest, open issues that carry the same
carryover fingerprint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.carryover import CarryoverResult, LedgerEntry
    from seawall.cli.documents import CarryoverValidation
    from seawall.codec import JsonObject  # the raw ledger the carryover checks read
    from seawall.model import TrackerConfig
    from seawall.tracker import IssueTracker

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``carryover list`` and ``carryover validate``."""
    group = subparsers.add_parser(
        "carryover",
        help="list and validate carryover issues",
        description="The carryover issues of the configured tracker: list the open ones, or "
        "file the ones a session's history lacks.",
    )
    commands = group.add_subparsers(dest="carryover_command", metavar="COMMAND", required=True)

    listing = commands.add_parser(
        "list",
        help="list the open carryover issues",
        description="List the open issues with the carryover label, over all pages.",
    )
    _tracker_options(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_list)

    validate = commands.add_parser(
        "validate",
        help="file the carryovers missing from the newest session's history",
        description="Check that every SPIRAL or FAILED line of a session's Wave History has "
        "its issue, and file the missing ones (deduplicated by fingerprint, so nothing is "
        "filed twice).",
    )
    _tracker_options(validate)
    validate.add_argument("--session", help="session id (default: the newest under .seawall/)")
    validate.add_argument(
        "--plan", help="the plan identity used in fingerprints (default: from state.json)"
    )
    validate.add_argument(
        "--dry-run", action="store_true", help="only report what is missing (exit 1 if any)"
    )
    validate.add_argument("--json", action="store_true", help="print JSON (errors too)")
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
    parser.add_argument("--label", default=None, help="the carryover label (default: carryover)")
    from seawall.cli.adapters import add_tracker_option

    add_tracker_option(parser)


def _open(args: argparse.Namespace, state: JsonObject | None = None) -> IssueTracker:
    """The tracker the options name; unset options come from the session's recorded plan
    when it names the same tracker (another tracker's settings, such as its ``token_env``,
    are never reused)."""
    from dataclasses import replace

    from seawall.cli.adapters import tracker_config
    from seawall.model import TrackerConfig
    from seawall.tracker import open_tracker

    config = _session_tracker(args, state)
    if args.tracker and args.tracker != config.kind:
        config = TrackerConfig(kind=args.tracker, label=config.label)
    config = replace(
        tracker_config(config, args),
        repository=args.project or config.repository,
        url=args.url or config.url,
        label=args.label or config.label,
    )
    return open_tracker(config, root=_root(args))


def _session_tracker(args: argparse.Namespace, state: JsonObject | None) -> TrackerConfig:
    from seawall.errors import ConfigurationError, StateError
    from seawall.model import TrackerConfig
    from seawall.plan import parse_plan

    if state is None:
        try:
            state = _load(_state_path(_root(args), getattr(args, "session", None)))
        except (ConfigurationError, StateError):
            return TrackerConfig()
    text = state.get("plan_text")
    if not isinstance(text, str) or not text:
        return TrackerConfig()
    try:
        return parse_plan(
            text, path=str(state.get("plan_path") or "<recorded plan>")
        ).session.tracker
    except ConfigurationError:
        return TrackerConfig()


def _root(args: argparse.Namespace) -> Path:
    return (args.repo or Path.cwd()).resolve()


def _list(args: argparse.Namespace) -> int:
    from seawall.carryover import find_marker
    from seawall.cli.documents import CarryoverRow
    from seawall.codec import encode_text

    with _open(args) as tracker:
        label = args.label or _session_tracker(args, None).label
        issues = sorted(tracker.list_issues(label), key=lambda issue: issue.number)
    rows = [
        CarryoverRow(
            number=issue.number,
            title=issue.title,
            labels=tuple(issue.labels),
            fingerprint=find_marker(issue.body),
            url=issue.url,
        )
        for issue in issues
    ]
    if args.json:
        from seawall.cli.documents import CarryoverList

        print(encode_text(CarryoverList(label=label, issues=tuple(rows)), ascii_only=False))
        return 0
    if not issues:
        print(f"no open issues labelled {label!r}")
    for issue in issues:
        fp = find_marker(issue.body) or "(no fingerprint)"
        print(f"#{issue.number}  {issue.title}  [{', '.join(issue.labels)}]  {fp}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from seawall.carryover import covered_tasks, ledger_entries, missing_carryovers
    from seawall.cli.documents import CarryoverFiled, CarryoverValidation

    state_path = _state_path(_root(args), args.session)
    state = _load(state_path)
    session = str(state.get("session") or state_path.parent.name)
    entries = ledger_entries(state)
    covered = covered_tasks(state)
    missing = missing_carryovers(entries, covered_tasks=covered)
    if args.dry_run and args.json:
        rows = tuple(
            CarryoverFiled(wave=e.wave, task=e.task, status=str(e.status)) for e in missing
        )
        _print_validation(CarryoverValidation(session=session, dry_run=True, missing=rows))
        return 1 if missing else 0
    if args.dry_run:
        for entry in missing:
            print(f"missing: wave {entry.wave}  {entry.task}  {entry.status.upper()}")
        if not missing:
            print(f"session {session}: every SPIRAL/FAILED line has its issue")
        return 1 if missing else 0
    with _open(args, state) as tracker:
        failed, filed, document = _file_and_dedupe(args, tracker, state, state_path, session)
    _record(state_path, filed)
    if args.json:
        _print_validation(document)
    return 1 if failed else 0


def _print_validation(document: CarryoverValidation) -> None:
    from seawall.codec import encode_text

    print(encode_text(document, ascii_only=False))


def _file_and_dedupe(
    args: argparse.Namespace,
    tracker: IssueTracker,
    state: JsonObject,
    state_path: Path,
    session: str,
) -> tuple[int, list[tuple[LedgerEntry, CarryoverResult]], CarryoverValidation]:
    """File the missing carryovers, then close duplicates; (failures, filed, the
    document ``--json`` prints). Without ``--json`` each is printed as it happens."""
    from seawall.carryover import (
        covered_tasks,
        file_missing,
        issue_suffix,
        ledger_entries,
        missing_carryovers,
    )
    from seawall.carryover.closing import close_duplicates
    from seawall.carryover.filer import CarryoverFiler
    from seawall.cli.documents import CarryoverFiled, CarryoverValidation, DuplicateClosed
    from seawall.telemetry import CarryoverClosed, EventLog

    def say(text: str) -> None:
        if not args.json:
            print(text)

    entries, covered = ledger_entries(state), covered_tasks(state)
    events = EventLog(state_path.parent / "events.jsonl", session=session)
    label = args.label or _session_tracker(args, state).label
    filer = CarryoverFiler(
        tracker,
        session=session,
        label=label,
        events=events,
        lock_path=_root(args) / ".seawall" / "carryover.lock",
    )
    failed = 0
    filed = []
    rows: list[CarryoverFiled] = []
    closed_rows: list[DuplicateClosed] = []
    if not missing_carryovers(entries, covered_tasks=covered):
        say(f"session {session}: every SPIRAL/FAILED line has its issue")
    plan = _plan_identity(state, args.plan)
    for entry, result in file_missing(filer, entries, plan=plan, covered_tasks=covered):
        line = f"wave {entry.wave}  {entry.task}  {entry.status.upper()}"
        ref = result.issue
        rows.append(
            CarryoverFiled(
                wave=entry.wave,
                task=entry.task,
                status=str(entry.status),
                issue=None if ref is None else ref.number,
                url=result.url,
                existing=bool(ref and ref.existing),
                error=result.error if result.skipped == "error" else None,
            )
        )
        if result.skipped == "error":
            failed += 1
            say(f"{line}  error: {result.error}")
        else:
            filed.append((entry, result))
            say(f"{line}  {issue_suffix(result)}  {result.url or ''}".rstrip())
    for closed in close_duplicates(filer):
        closed_rows.append(
            DuplicateClosed(
                number=closed.number, duplicate_of=closed.duplicate_of, error=closed.error
            )
        )
        if closed.error and not closed.closed:
            failed += 1
            say(f"duplicate #{closed.number}: error: {closed.error}")
        else:
            say(f"duplicate #{closed.number} of #{closed.duplicate_of}: closed")
        events.append(
            CarryoverClosed(
                number=closed.number or None,
                reason="duplicate",
                duplicate_of=closed.duplicate_of,
                closed=closed.closed,
                error=closed.error,
            )
        )
    document = CarryoverValidation(
        session=session, dry_run=False, missing=tuple(rows), duplicates=tuple(closed_rows)
    )
    return failed, filed, document


def _record(state_path: Path, filed: list[tuple[LedgerEntry, CarryoverResult]]) -> None:
    """Write the filed issues back into the ledger (and so into STATE.md)."""
    if not filed:
        return
    from seawall.errors import StateError
    from seawall.state.store import StateStore

    store = StateStore(state_path.parent.parent.parent, state_path.parent.name)
    with store.lock():
        try:
            ledger = store.load()
        except StateError as exc:  # the issues are filed; only the bookkeeping is missing
            print(
                f"seawall: warning: the issues were filed but {exc}; the ledger was not updated",
                file=sys.stderr,
            )
            return
        for entry, result in filed:
            ref = result.issue
            ledger.task(entry.task).issue = ref
            for wave in ledger.waves:
                if wave.number == entry.wave:
                    wave.agent(entry.task).issue = ref
        store.save(ledger)


def _state_path(root: Path, session: str | None) -> Path:
    from seawall.errors import ConfigurationError

    base = root / ".seawall"
    if session:
        path = base / session / "state.json"
        if not path.is_file():
            raise ConfigurationError(f"no ledger for session {session!r}: {path} does not exist")
        return path
    from seawall.state.store import find_sessions

    candidates = [path for path, _ in sorted(find_sessions(root), key=lambda item: item[1])]
    if not candidates:
        raise ConfigurationError(f"no session ledger found under {base} (*/state.json)")
    return candidates[-1]


def _load(path: Path) -> JsonObject:
    """The ledger at ``path`` (snapshot and journal) as JSON-shaped values."""
    from seawall.state.store import ledger_data

    return ledger_data(path)


def _plan_identity(state: JsonObject, override: str | None) -> str:
    """The plan identity: ``--plan``, else the ledger's ``name`` (the plan's session name).

    ``plan`` (a string, or an object with ``identity`` or ``name``) takes precedence over
    ``name`` when a ledger carries it.
    """
    from seawall.errors import ConfigurationError

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
