"""Session commands: run, demo, status, resume, reset, kill (step mode is in ``wave``)."""

from __future__ import annotations

import argparse
import functools
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seawall.model import Plan
    from seawall.plan.adapters import Adapters
    from seawall.report.progress import Progress
    from seawall.runner import AgentRunner
    from seawall.session.engine import Session, SessionResult
    from seawall.state.store import StateStore
    from seawall.tracker import IssueTracker

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from seawall.exitcodes import help_epilog

    run = subparsers.add_parser(
        "run",
        help="run a plan as waves of agents",
        description="Run a plan file as a session: waves of agents, merged in sequence, with "
        "carryover issues for what is left. It ends by writing the session's HTML report.",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("plan", help="the plan file (TOML)")
    _common(run)
    _json(run)
    _heartbeat(run)
    _hooks_only(run)
    run.set_defaults(handler=_run)

    demo = subparsers.add_parser(
        "demo",
        help="an offline demo session on a throwaway repository",
        description="Run an offline session of scripted agents on a throwaway repository, "
        "showing every recovery path; it ends by pointing at the session's HTML report.",
    )
    demo.add_argument(
        "--dir",
        type=Path,
        help="where to create the demo repository (default: a new temporary directory)",
    )
    demo.add_argument(
        "--issues",
        type=Path,
        help="the demo tracker's issue folder (default: issues/ next to the demo "
        "repository, kept across runs in the same --dir)",
    )
    demo.add_argument(
        "--json",
        action="store_true",
        help="print the outcome as JSON (seawall.demo/1; progress lines on stderr are JSON)",
    )
    demo.set_defaults(handler=_demo)

    status = subparsers.add_parser(
        "status",
        help="the current session's waves and agents",
        description="Show a session's waves, agents and breaker.",
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    where_options(status)
    status.set_defaults(handler=_status)

    resume = subparsers.add_parser(
        "resume",
        help="finish an interrupted or halted session",
        description="Continue the newest unfinished session from its ledger: after a crash "
        "(even SIGKILL) or a breaker trip. A tripped breaker is cleared, keeping its counters.",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where_options(resume)
    resume.add_argument("--runner", help="run every task with this runner")
    resume.add_argument("--tracker", help="file carryovers with this tracker")
    from seawall.cli.adapters import add_tracker_option

    add_tracker_option(resume)
    _hooks_only(resume)
    resume.add_argument(
        "--rebase",
        action="store_true",
        help="when the target branch moved under the session (someone else committed), "
        "merge the wave onto its new tip instead of halting",
    )
    _json(resume)
    _heartbeat(resume)
    resume.set_defaults(handler=_resume)

    kill = subparsers.add_parser(
        "kill",
        help="end a halted session for good",
        description="Mark a session killed: it will not continue.",
    )
    where_options(kill)
    _json(kill)
    kill.set_defaults(handler=_kill)

    reset = subparsers.add_parser(
        "reset",
        help="clear an agent's tripped breaker after review, or a lead's hold",
        description="Clear the per-agent breaker of TASK (hook mode) after a person reviewed "
        "it; or, with --lead, release the repository a lead agent holds for the session's "
        "dispatched wave (its agents are done or gone; the wave stays dispatched).",
    )
    what = reset.add_mutually_exclusive_group(required=True)
    what.add_argument("--agent", metavar="TASK", help="the agent's task id")
    what.add_argument(
        "--lead", action="store_true", help="release the lead's hold on the repository"
    )
    where_options(reset)
    _json(reset)
    reset.set_defaults(handler=_reset)


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (errors too)")


def _heartbeat(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="when stderr is not a terminal, a progress line per running agent this often "
        "(default: 30; 0: only state changes); with --json, progress lines are JSON",
    )


def _progress(args: argparse.Namespace) -> Progress:
    """The run's progress on stderr: a live table in a terminal, lines otherwise."""
    from seawall.report.progress import make_progress

    return make_progress(heartbeat=args.heartbeat, as_json=args.json)


def where_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path.cwd(),
        help="the repository (default: the current directory)",
    )
    parser.add_argument("--session", help="the session id (default: the newest)")


def _hooks_only(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--accept-hooks-only",
        action="store_true",
        help="where no OS sandbox is available, run strict in-place waves with hooks and "
        "the post-wave check as the only barriers (the plan's accept_hooks_only)",
    )
    parser.add_argument(
        "--adopt-user-files",
        action="store_true",
        help="let in-place waves adopt your untracked files inside a task's scope (copied "
        "first, named with the command that restores them) instead of refusing to start "
        "(the plan's adopt_user_files)",
    )


def _accepting(plan: Plan, args: argparse.Namespace) -> Plan:
    """The plan with ``accept_hooks_only`` / ``adopt_user_files`` set when the command
    line asks for them. Its source is then its rendering: the text parsed no longer says
    what the plan is, and the session records (and reopens from) the source."""
    session = plan.session
    hooks_only = session.accept_hooks_only or bool(getattr(args, "accept_hooks_only", False))
    adopt = session.adopt_user_files or bool(getattr(args, "adopt_user_files", False))
    if (hooks_only, adopt) == (session.accept_hooks_only, session.adopt_user_files):
        return plan
    from dataclasses import replace

    from seawall.plan.render import render_plan

    changed = replace(session, accept_hooks_only=hooks_only, adopt_user_files=adopt)
    accepted = replace(plan, session=changed, source="")
    return replace(accepted, source=render_plan(accepted))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runner",
        help="run every task with this runner (a [runners.NAME] of "
        "the plan or a built-in: scripted, command, claude-code, codex, opencode)",
    )
    parser.add_argument(
        "--tracker",
        help="file carryovers with this tracker "
        "(local, memory, github, gitlab, or a third-party name)",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path.cwd(),
        help="the repository (default: the current directory)",
    )
    from seawall.cli.adapters import add_tracker_option

    add_tracker_option(parser)


def _runner(plan: Plan, name: str | None) -> AgentRunner | None:
    if not name:
        return None
    from seawall.model import RunnerSpec
    from seawall.runner import build_runner

    return build_runner(plan.runners.get(name) or RunnerSpec(name=name, kind=name))


def _tracker(plan: Plan, args: argparse.Namespace) -> IssueTracker | None:
    if not args.tracker and not args.tracker_options:
        return None
    from seawall.cli.adapters import tracker_config
    from seawall.tracker import open_tracker

    return open_tracker(tracker_config(plan.session.tracker, args), root=args.repo.resolve())


def _adapters(plan: Plan, args: argparse.Namespace) -> Adapters:
    """The plan's tracker and runners, built before anything runs (errors name the field)."""
    from seawall.cli.adapters import tracker_config
    from seawall.plan.adapters import build_adapters

    tracker = tracker_config(plan.session.tracker, args)
    return build_adapters(
        plan, root=args.repo.resolve(), runner=getattr(args, "runner", None), tracker=tracker
    )


def _report(result: SessionResult, *, as_json: bool = False) -> int:
    from seawall.state.ledger import SessionPhase

    if as_json:
        from seawall.codec import encode_text
        from seawall.session.documents import outcome_document

        print(encode_text(outcome_document(result)))
        return result.exit_code
    print(
        f"session {result.session}: {result.phase} after {result.waves} wave(s); "
        f"done: {', '.join(result.done) or 'none'}"
        + (f"; not merged yet: {', '.join(result.unmerged)}" if result.unmerged else "")
        + (f"; carried over: {', '.join(result.abandoned)}" if result.abandoned else "")
    )
    if result.phase is SessionPhase.HALTED and result.breaker.tripped:
        print(f"breaker: {result.breaker.trigger}: {result.breaker.detail}")
        print("next: fix the cause and `seawall resume`, or `seawall kill`")
    elif result.halt is not None:
        print(f"halted: {result.halt.reason}: {result.halt.detail}")
        print(f"next: {result.halt.next or 'fix the cause, then `seawall resume`'}")
    elif result.phase is SessionPhase.DONE and result.done and not result.merged:
        print("the plan was already finished: every task is done and nothing new was merged")
    if result.checks_failed:
        waves = ", ".join(str(n) for n in result.checks_failed)
        print(f"checks: wave(s) {waves} merged with failing checks (see STATE.md)")
    print(f"state: {result.state_md}")
    if result.report is not None:
        print(f"report: {result.report}")
    return result.exit_code


def _interrupted(repo: Path, session: str) -> None:
    """What Ctrl-C leaves behind, and the command that continues it."""
    print(
        f"seawall: interrupted; session {session} is recorded. Continue it with: "
        f"seawall resume --repo {shlex.quote(str(repo))} --session {shlex.quote(session)}",
        file=sys.stderr,
    )


def _run(args: argparse.Namespace) -> int:
    import anyio

    from seawall.errors import SeawallError
    from seawall.git.repo import open_repository
    from seawall.plan import load_plan
    from seawall.session.engine import Session

    plan_path = Path(args.plan)
    plan = _accepting(load_plan(plan_path), args)
    open_repository(args.repo)  # no session is named before there is a repository for it
    adapters = _adapters(plan, args)
    progress = _progress(args)
    session = Session(
        plan,
        repo=args.repo,
        runner=adapters.runner,
        runners=adapters.runners,
        tracker=adapters.tracker,
        plan_text=plan.source,
        progress=progress,
    )
    progress.log(f"session {session.session_id} on {session.repo}")
    try:
        return _report(anyio.run(session.run), as_json=args.json)
    except KeyboardInterrupt:
        if session.state is not None:
            _interrupted(session.repo, session.session_id)
        raise
    except SeawallError:
        if session.state is not None:
            print(
                f"seawall: session {session.session_id} is recorded; fix the cause, then "
                "`seawall resume`",
                file=sys.stderr,
            )
        raise


def _demo(args: argparse.Namespace) -> int:
    from seawall.cli.demo_output import run_demo_command

    return run_demo_command(args)


def open_session(args: argparse.Namespace, **kwargs: Any) -> Session:
    from seawall.session.engine import Session

    return Session.open(args.repo, args.session, **kwargs)


def session_store(repo: Path, session: str | None) -> StateStore:
    """The store of ``session`` in ``repo`` (default: the newest session there)."""
    from seawall.errors import StateError
    from seawall.state.store import StateStore, latest_session

    root = Path(repo).resolve()
    session = session or latest_session(root)
    if session is None:
        raise StateError(f"no seawall session in {root}/.seawall")
    return StateStore(root, session)


def _state(args: argparse.Namespace) -> StateStore:
    return session_store(args.repo, args.session)


def _status(args: argparse.Namespace) -> int:
    from seawall.report import is_interrupted
    from seawall.state.render import render_state_md

    store = _state(args)
    state = store.load()
    interrupted = is_interrupted(store, state)
    if args.json:
        from seawall.codec import encode_text
        from seawall.session.documents import status_document

        print(encode_text(status_document(state, interrupted=interrupted)))
        return 0
    print(render_state_md(state, interrupted=interrupted))
    return 0


def _resume(args: argparse.Namespace) -> int:
    import anyio

    from seawall.session.engine import Session

    probe = open_session(args)
    session = Session.open(
        args.repo,
        probe.session_id,
        runner=_runner(probe.plan, args.runner),
        tracker=_tracker(probe.plan, args),
        progress=_progress(args),
    )
    session.plan = _accepting(session.plan, args)
    if session.state is not None:  # the ledger records the plan the session runs
        session.state.plan_text = session.plan.source or session.state.plan_text
    try:
        return _report(
            anyio.run(functools.partial(session.resume, rebase=args.rebase)), as_json=args.json
        )
    except KeyboardInterrupt:
        _interrupted(session.repo, session.session_id)
        raise


def _kill(args: argparse.Namespace) -> int:
    from seawall.state.leadlease import release_lease
    from seawall.state.ledger import SessionPhase
    from seawall.telemetry import SessionKilled

    store = _state(args)
    if _ask_running_coordinator(store, args.json):
        return 0
    with store.lock():
        state = store.load()
        state.phase = SessionPhase.KILLED
        store.save(state)
    store.events.append(SessionKilled())
    release_lease(store.paths.repo, state.session)
    refs = f"refs/seawall/{state.session}/*"
    if args.json:
        from seawall.codec import encode_text
        from seawall.session.documents import Killed

        print(encode_text(Killed(session=state.session, phase=state.phase, refs=refs), indent=None))
    else:
        print(f"session {state.session} killed; its work stays on {refs}")
    return 0


def _ask_running_coordinator(store: StateStore, as_json: bool) -> bool:
    """A session a coordinator is running is stopped by that coordinator: ask it (see
    ``seawall.session.user_stop``); False when no coordinator runs the session."""
    from seawall.runtime.files import lock_is_held
    from seawall.state.live import request_stop, session_stop_path

    if not lock_is_held(store.paths.lock):
        return False
    request_stop(session_stop_path(store.paths), via="seawall kill")
    if as_json:
        from seawall.codec import encode_text
        from seawall.session.documents import Killed
        from seawall.state.ledger import SessionPhase

        refs = f"refs/seawall/{store.paths.session}/*"
        document = Killed(
            session=store.paths.session, phase=SessionPhase.RUNNING, refs=refs, requested=True
        )
        print(encode_text(document, indent=None))
    else:
        print(
            f"session {store.paths.session}: its coordinator was asked to stop it; its "
            "running agents stop now, and the session is killed once their wave is recorded"
        )
    return True


def _reset(args: argparse.Namespace) -> int:
    from seawall.breakers.store import reset_agent_breaker
    from seawall.state.leadlease import release_lease
    from seawall.telemetry import BreakerReset, LeadReleased

    store = _state(args)
    if args.lead:
        released = release_lease(store.paths.repo, store.paths.session)
        store.events.append(LeadReleased(released=released))
        if args.json:
            from seawall.codec import encode_text
            from seawall.session.documents import LeadReleased as Released

            document = Released(session=store.paths.session, released=released)
            print(encode_text(document, indent=None))
        else:
            verb = "released" if released else "was not held"
            print(f"session {store.paths.session}: the lead's hold on the repository {verb}")
        return 0
    cleared = reset_agent_breaker(store.paths.repo, store.paths.session, args.agent)
    store.events.append(BreakerReset(agent=args.agent, cleared=cleared))
    if args.json:
        from seawall.codec import encode_text
        from seawall.session.documents import BreakerReset as Reset

        print(encode_text(Reset(agent=args.agent, cleared=cleared), indent=None))
    else:
        print(f"{args.agent}: breaker {'cleared' if cleared else 'was not tripped'}")
    return 0
