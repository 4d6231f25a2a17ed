"""Session commands: run, demo, status, resume, wave prepare|review, reset, kill."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordinator.model import Plan
    from coordinator.plan_adapters import Adapters
    from coordinator.runner import AgentRunner
    from coordinator.session.engine import Session, SessionResult
    from coordinator.tracker import IssueTracker

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from coordinator.exitcodes import describe

    run = subparsers.add_parser(
        "run",
        help="run a plan as waves of agents",
        description="Run a plan file as a session: waves of agents, merged in sequence, with "
        f"carryover issues for what is left. {describe()}.",
    )
    run.add_argument("plan", help="the plan file (TOML)")
    _common(run)
    _hooks_only(run)
    run.set_defaults(handler=_run)

    demo = subparsers.add_parser(
        "demo",
        help="an offline demo session on a throwaway repository",
        description="Run an offline session of scripted agents on a throwaway repository, "
        "showing every recovery path, and print the final STATE.md.",
    )
    demo.add_argument(
        "--dir",
        type=Path,
        help="where to create the demo repository (default: a new temporary directory)",
    )
    demo.add_argument(
        "--issues",
        type=Path,
        help="the demo tracker's issue folder "
        "(default: ~/.cache/seawall/demo-issues, kept across runs)",
    )
    demo.set_defaults(handler=_demo)

    status = subparsers.add_parser(
        "status",
        help="the current session's waves and agents",
        description="Show a session's waves, agents and breaker.",
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    _where(status)
    status.set_defaults(handler=_status)

    resume = subparsers.add_parser(
        "resume",
        help="finish an interrupted or halted session",
        description="Continue the newest unfinished session from its ledger: after a crash "
        "(even SIGKILL) or a breaker trip. A tripped breaker is cleared, keeping its counters. "
        f"The exit codes are those of `seawall run`. {describe()}.",
    )
    _where(resume)
    resume.add_argument("--runner", help="run every task with this runner")
    resume.add_argument("--tracker", help="file carryovers with this tracker")
    from coordinator.cli.adapters import add_tracker_option

    add_tracker_option(resume)
    _hooks_only(resume)
    resume.add_argument(
        "--rebase",
        action="store_true",
        help="when the target branch moved under the session (someone else committed), "
        "merge the wave onto its new tip instead of halting",
    )
    resume.set_defaults(handler=_resume)

    kill = subparsers.add_parser(
        "kill",
        help="end a halted session for good",
        description="Mark a session killed: it will not continue.",
    )
    _where(kill)
    kill.set_defaults(handler=_kill)

    reset = subparsers.add_parser(
        "reset",
        help="clear an agent's tripped breaker after review",
        description="Clear the per-agent breaker of TASK (hook mode) after a person reviewed it.",
    )
    reset.add_argument("--agent", required=True, metavar="TASK", help="the agent's task id")
    _where(reset)
    reset.set_defaults(handler=_reset)

    wave = subparsers.add_parser(
        "wave",
        help="step mode for a lead agent that dispatches agents itself",
        description="Step mode: `prepare` plans and prepares the next wave and prints each "
        "agent's prompt, workspace and scope; `review` reads each agent's final text "
        '(JSON {"outputs": {"TASK": "text"}} on stdin) and reviews, merges and recovers.',
    )
    steps = wave.add_subparsers(dest="step", metavar="STEP", required=True)
    prepare = steps.add_parser("prepare", help="prepare the next wave")
    prepare.add_argument("plan", nargs="?", help="the plan file (to start a new session)")
    prepare.add_argument("--json", action="store_true", help="print JSON (the default)")
    _where(prepare)
    prepare.set_defaults(handler=_wave_prepare)
    watch = steps.add_parser(
        "watch",
        help="watch the transcripts the lead's agents write, live",
        description="Follow the agent transcript files in DIR (e.g. Claude Code's "
        "subagents/agent-*.jsonl) while the prepared wave runs: detectors and breakers act "
        "on every line, findings go to events.jsonl and trips to BLOCKED.md. Stops after "
        "--for seconds or on Ctrl-C, then runs the post-wave checks.",
    )
    watch.add_argument("directory", type=Path, help="the folder the transcripts are written to")
    watch.add_argument("--pattern", default="agent-*.jsonl", help="transcript file names")
    watch.add_argument(
        "--for",
        dest="seconds",
        type=float,
        default=None,
        help="stop after this many seconds (default: until Ctrl-C)",
    )
    _where(watch)
    watch.set_defaults(handler=_wave_watch)
    review = steps.add_parser("review", help="review the prepared wave")
    review.add_argument("--json", action="store_true", help="print JSON (the default)")
    review.add_argument("--input", type=Path, help="read the outputs from this file, not stdin")
    _where(review)
    review.set_defaults(handler=_wave_review)


def _where(parser: argparse.ArgumentParser) -> None:
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


def _accepting(plan: Plan, args: argparse.Namespace) -> Plan:
    """The plan with ``accept_hooks_only`` set when the command line asks for it."""
    if not getattr(args, "accept_hooks_only", False):
        return plan
    from dataclasses import replace

    return replace(plan, session=replace(plan.session, accept_hooks_only=True))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runner",
        help="run every task with this runner (a [runners.NAME] of "
        "the plan or a built-in: scripted, command, claude-code, codex)",
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
    from coordinator.cli.adapters import add_tracker_option

    add_tracker_option(parser)


def _runner(plan: Plan, name: str | None) -> AgentRunner | None:
    if not name:
        return None
    from coordinator.model import RunnerSpec
    from coordinator.runner import build_runner

    return build_runner(plan.runners.get(name) or RunnerSpec(name=name, kind=name))


def _tracker(plan: Plan, args: argparse.Namespace) -> IssueTracker | None:
    if not args.tracker and not args.tracker_options:
        return None
    from coordinator.cli.adapters import tracker_config
    from coordinator.tracker import open_tracker

    return open_tracker(tracker_config(plan.session.tracker, args), root=args.repo.resolve())


def _adapters(plan: Plan, args: argparse.Namespace) -> Adapters:
    """The plan's tracker and runners, built before anything runs (errors name the field)."""
    from coordinator.cli.adapters import tracker_config
    from coordinator.plan_adapters import build_adapters

    tracker = tracker_config(plan.session.tracker, args)
    return build_adapters(
        plan, root=args.repo.resolve(), runner=getattr(args, "runner", None), tracker=tracker
    )


def _report(result: SessionResult) -> int:
    print(
        f"session {result.session}: {result.phase} after {result.waves} wave(s); "
        f"done: {', '.join(result.done) or 'none'}"
        + (f"; carried over: {', '.join(result.abandoned)}" if result.abandoned else "")
    )
    if result.breaker.get("tripped"):
        print(f"breaker: {result.breaker.get('trigger')}: {result.breaker.get('detail')}")
        print("next: fix the cause and `seawall resume`, or `seawall kill`")
    elif result.halt:
        print(f"halted: {result.halt.get('reason')}: {result.halt.get('detail')}")
        print(f"next: {result.halt.get('next') or 'fix the cause, then `seawall resume`'}")
    if result.checks_failed:
        waves = ", ".join(str(n) for n in result.checks_failed)
        print(f"checks: wave(s) {waves} merged with failing checks (see STATE.md)")
    print(f"state: {result.state_md}")
    return result.exit_code


def _run(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.errors import SeawallError
    from coordinator.plan import load_plan
    from coordinator.session.engine import Session

    plan_path = Path(args.plan)
    plan = _accepting(load_plan(plan_path), args)
    adapters = _adapters(plan, args)
    session = Session(
        plan,
        repo=args.repo,
        runner=adapters.runner,
        runners=adapters.runners,
        tracker=adapters.tracker,
        plan_text=plan_path.read_text(encoding="utf-8"),
    )
    print(f"seawall: session {session.session_id} on {session.repo}", file=sys.stderr)
    try:
        return _report(anyio.run(session.run))
    except SeawallError:
        if session.state is not None:
            print(
                f"seawall: session {session.session_id} is recorded; fix the cause, then "
                "`seawall resume`",
                file=sys.stderr,
            )
        raise


def _demo(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.demo import run_demo

    async def main() -> Any:
        return await run_demo(directory=args.dir, issues_dir=args.issues)

    result = anyio.run(main)
    print()
    print(result.state_md.read_text(encoding="utf-8"))
    from adapters.trackers.local import LocalTracker

    issues = LocalTracker(result.repo, issues_dir=result.issues_dir).list_issues("carryover")
    print(f"demo repository: {result.repo}")
    print(f"carryover issues ({len(issues)}) in {result.issues_dir}:")
    for issue in sorted(issues, key=lambda item: item.number):
        print(f"  #{issue.number}: {issue.title}")
    print("run `seawall demo` again: the same carryovers are found, not filed twice")
    return 0 if result.exit_code in (0, 4) else result.exit_code


def _open(args: argparse.Namespace, **kwargs: Any) -> Session:
    from coordinator.session.engine import Session

    return Session.open(args.repo, args.session, **kwargs)


def _state(args: argparse.Namespace) -> Any:
    from coordinator.errors import StateError
    from coordinator.state.store import StateStore, latest_session

    repo = Path(args.repo).resolve()
    session = args.session or latest_session(repo)
    if session is None:
        raise StateError(f"no seawall session in {repo}/.seawall")
    return StateStore(repo, session)


def status_payload(state: Any) -> dict[str, Any]:
    return {
        "session": state.session,
        "phase": str(state.phase),
        "target_branch": state.target_branch,
        "cost_usd": state.cost_usd,
        "waves": [
            {
                "number": wave.number,
                "isolation": wave.isolation,
                "enforcement": wave.enforcement,
                "base": wave.base,
                "phase": str(wave.phase),
                "checks": wave.checks,
                "agents": [
                    {
                        "task": agent.task,
                        "status": agent.status,
                        "summary": agent.summary,
                        "remaining": agent.remaining,
                        "inferred": agent.inferred,
                        "spiral": agent.spiral,
                        "issue": None if agent.issue is None else agent.issue.number,
                        "merged": agent.merged,
                        "turns": agent.turns,
                        "cost_usd": agent.cost_usd,
                        "cost_estimated": agent.cost_estimated,
                        "input_tokens": agent.input_tokens,
                        "output_tokens": agent.output_tokens,
                    }
                    for agent in wave.agents
                ],
            }
            for wave in state.waves
        ],
        "pending": [task["id"] for task in state.pending],
        "breaker": state.breaker,
        "halt": state.halt or None,
    }


def _status(args: argparse.Namespace) -> int:
    store = _state(args)
    state = store.load()
    if args.json:
        print(json.dumps(status_payload(state), indent=2))
        return 0
    print(
        store.paths.state_md.read_text(encoding="utf-8")
        if store.paths.state_md.exists()
        else json.dumps(status_payload(state), indent=2)
    )
    return 0


def _resume(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.session.engine import Session

    probe = _open(args)
    session = Session.open(
        args.repo,
        probe.session_id,
        runner=_runner(probe.plan, args.runner),
        tracker=_tracker(probe.plan, args),
    )
    session.plan = _accepting(session.plan, args)
    return _report(anyio.run(functools.partial(session.resume, rebase=args.rebase)))


def _kill(args: argparse.Namespace) -> int:
    from coordinator.state.ledger import SessionPhase

    store = _state(args)
    with store.lock():
        state = store.load()
        state.phase = SessionPhase.KILLED
        store.save(state)
    store.events.append("session_killed")
    print(f"session {state.session} killed; its work stays on refs/seawall/{state.session}/*")
    return 0


def _reset(args: argparse.Namespace) -> int:
    from coordinator.breakers.store import reset_agent_breaker

    store = _state(args)
    cleared = reset_agent_breaker(store.paths.repo, store.paths.session, args.agent)
    store.events.append("breaker_reset", agent=args.agent, cleared=cleared)
    print(f"{args.agent}: breaker {'cleared' if cleared else 'was not tripped'}")
    return 0


def _wave_prepare(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.plan import load_plan
    from coordinator.session.engine import Session

    if args.plan:
        plan_path = Path(args.plan)
        plan = load_plan(plan_path)
        adapters = _adapters(plan, args)
        session = Session(
            plan,
            repo=args.repo,
            session_id=args.session,
            runners=adapters.runners,
            tracker=adapters.tracker,
            plan_text=plan_path.read_text(encoding="utf-8"),
        )
    else:
        session = _open(args)
    prepared = anyio.run(session.prepare_wave)
    print(
        json.dumps(
            prepared or {"session": session.session_id, "wave": None, "done": True}, indent=2
        )
    )
    return 0


def _wave_review(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.errors import StateError
    from coordinator.lead.steps import dispatched_tasks, parse_outputs, read_outputs

    data = read_outputs(args.input, None if args.input else sys.stdin.read())
    where = str(args.input) if args.input else "standard input"
    parse_outputs(data, None, where=where)  # the shape first: no session is needed for that
    session = _open(args)
    waiting = dispatched_tasks(session)
    if waiting is None:
        raise StateError("no prepared wave is waiting for review; run `wave prepare` first")
    outputs = parse_outputs(data, waiting, where=where)
    report = anyio.run(session.review_wave, outputs)
    print(json.dumps(report, indent=2))
    return 0


def _wave_watch(args: argparse.Namespace) -> int:
    import anyio

    from coordinator.breakers.blocked import append_blocked_note
    from coordinator.errors import StateError
    from coordinator.model import Isolation
    from coordinator.stagnation import AgentMonitor
    from coordinator.tail import TranscriptTailer

    session = _open(args)
    state = session.store.load()
    wave = state.current_wave
    if wave is None:
        raise StateError("no wave is prepared; run `seawall wave prepare` first")
    config = session.plan.session

    def monitor_for(agent: str, path: Path) -> AgentMonitor:
        del path
        return AgentMonitor(
            session=state.session,
            wave=wave.number,
            agent=agent,
            workspace=session.repo,
            repo=session.repo,
            isolation=Isolation(wave.isolation),
            limits=config.breakers,
            stagnation=config.stagnation,
            event_log=session.store.events,
        )

    def on_trip(monitor: AgentMonitor, trip: Any) -> None:
        append_blocked_note(
            session.store.paths.blocked, trip, agent=monitor.agent, wave=wave.number
        )
        print(f"{monitor.agent}: {trip.message(monitor.agent)}", flush=True)

    tailer = TranscriptTailer(
        session=state.session,
        repo=session.repo,
        directory=args.directory,
        monitor_for=monitor_for,
        pattern=args.pattern,
        on_trip=on_trip,
    )

    async def main() -> None:
        with anyio.move_on_after(args.seconds):
            await tailer.run()

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the watch; findings follow
        anyio.run(main)
    findings = tailer.finish()
    for agent, found in sorted(findings.items()):
        patterns = ", ".join(str(f.pattern) for f in found) or "nothing"
        print(f"{agent}: {patterns}")
    return 0
