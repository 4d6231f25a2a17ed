"""Step mode for a lead agent that dispatches its agents itself: wave prepare|watch|review."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from seawall.cli.session import open_session, where_options

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    wave = subparsers.add_parser(
        "wave",
        help="step mode for a lead agent that dispatches agents itself",
        description="Step mode: `prepare` plans and prepares the next wave and prints each "
        "agent's prompt, workspace and scope; `review` reads each agent's final text "
        '(JSON {"outputs": {"TASK": "text"}} on stdin) and reviews, merges and recovers.',
    )
    steps = wave.add_subparsers(dest="step", metavar="STEP", required=True)
    prepare = steps.add_parser(
        "prepare",
        help="prepare the next wave",
        description="Plan and prepare the next wave (start a session when given a plan) "
        "and print each agent's prompt, workspace and scope as JSON (schema "
        'seawall.wave-prepare/1); {"done": true} (seawall.wave-done/1) when no work is '
        "left: then `wave finish` ends the session; seawall.wave-halted/1 and exit code "
        "3 when the session ran its budgets.session_minutes. Until the wave is reviewed "
        "the repository is held for this session's lead.",
    )
    prepare.add_argument("plan", nargs="?", help="the plan file (to start a new session)")
    prepare.add_argument("--json", action="store_true", help="print JSON (the default)")
    where_options(prepare)
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
    where_options(watch)
    watch.add_argument(
        "--json",
        action="store_true",
        help="print each trip, then each agent's findings, as JSON lines (seawall.wave-watch/1)",
    )
    watch.set_defaults(handler=_wave_watch)
    review = steps.add_parser(
        "review",
        help="review the prepared wave",
        description='Read each agent\'s final text (JSON {"outputs": {"TASK": "text"}} on '
        "stdin or --input), then review, merge and recover the prepared wave; print the "
        "wave's report as JSON.",
    )
    review.add_argument("--json", action="store_true", help="print JSON (the default)")
    review.add_argument("--input", type=Path, help="read the outputs from this file, not stdin")
    where_options(review)
    review.set_defaults(handler=_wave_review)
    finish = steps.add_parser(
        "finish",
        help="end a session with nothing left to prepare",
        description="End the session once `wave prepare` says done: file the carryover "
        "issues still missing, publish if configured, write the report. Prints the "
        "session's status as JSON.",
    )
    finish.add_argument("--json", action="store_true", help="print JSON (the default)")
    where_options(finish)
    finish.set_defaults(handler=_wave_finish)


def _wave_prepare(args: argparse.Namespace) -> int:
    import anyio

    from seawall.cli.lead import prepare_for_lead
    from seawall.codec import encode_text
    from seawall.exitcodes import ExitCode
    from seawall.plan import load_plan
    from seawall.report.progress import make_progress
    from seawall.session.engine import Session
    from seawall.session.step_types import PreparedWave, WaveDone, WaveHalted
    from seawall.state.ledger import SessionPhase

    if args.plan:
        from seawall.cli.adapters import tracker_config
        from seawall.plan.adapters import build_adapters

        plan_path = Path(args.plan)
        plan = load_plan(plan_path)
        # the tracker and runners are built before wave 1 (errors name the entry point)
        adapters = build_adapters(
            plan, root=args.repo.resolve(), tracker=tracker_config(plan.session.tracker, args)
        )
        session = Session(
            plan,
            repo=args.repo,
            session_id=args.session,
            runners=adapters.runners,
            tracker=adapters.tracker,
            progress=make_progress(),
        )
    else:
        session = open_session(args, progress=make_progress())
    prepare_for_lead(session.repo, session.plan.session.worktree_root)
    prepared = anyio.run(session.prepare_wave)
    state = session.state
    if prepared is None and state is not None and state.phase is SessionPhase.HALTED:
        halted = WaveHalted(
            session=session.session_id,
            phase=state.phase,
            halt=state.halt,
            then=f"`seawall resume --session {session.session_id}` continues it",
        )
        print(encode_text(halted))
        return ExitCode.HALTED
    answer: PreparedWave | WaveDone = prepared or WaveDone(
        session=session.session_id,
        then=f"`seawall wave finish --session {session.session_id}` ends the session",
    )
    print(encode_text(answer))
    return 0


def _wave_finish(args: argparse.Namespace) -> int:
    import anyio

    from seawall.codec import encode_text
    from seawall.errors import StateError
    from seawall.report.progress import make_progress
    from seawall.session.documents import status_document

    session = open_session(args, progress=make_progress())
    anyio.run(session.finish)
    if session.state is None:
        raise StateError(f"session {session.session_id} has no ledger")
    print(encode_text(status_document(session.state)))
    return 0


def _wave_review(args: argparse.Namespace) -> int:
    import anyio

    from seawall.codec import encode_text
    from seawall.errors import StateError
    from seawall.lead.steps import dispatched_tasks, parse_outputs, read_outputs

    data = read_outputs(args.input, None if args.input else sys.stdin.read())
    where = str(args.input) if args.input else "standard input"
    parse_outputs(data, None, where=where)  # the shape first: no session is needed for that
    from seawall.report.progress import make_progress

    session = open_session(args, progress=make_progress())
    waiting = dispatched_tasks(session)
    if waiting is None:
        raise StateError("no prepared wave is waiting for review; run `wave prepare` first")
    outputs = parse_outputs(data, waiting, where=where)
    report = anyio.run(session.review_wave, outputs)
    print(encode_text(report))
    return 0


def _wave_watch(args: argparse.Namespace) -> int:
    import anyio

    from seawall.breakers.blocked import append_blocked_note
    from seawall.breakers.project_check import limits_with_check
    from seawall.breakers.trip import Trip
    from seawall.cli.documents import WaveWatchFindings, WaveWatchTrip
    from seawall.codec import encode_text
    from seawall.errors import StateError
    from seawall.stagnation import AgentMonitor
    from seawall.stagnation.transcript_tail import TranscriptTailer

    session = open_session(args)
    state = session.store.load()
    wave = state.current_wave
    if wave is None:
        raise StateError("no wave is prepared; run `seawall wave prepare` first")
    config = session.plan.session
    limits = limits_with_check(config, session.repo)  # the check a soft trip names

    def monitor_for(agent: str, path: Path) -> AgentMonitor:
        del path
        return AgentMonitor(
            session=state.session,
            wave=wave.number,
            agent=agent,
            workspace=session.repo,
            repo=session.repo,
            isolation=wave.isolation,
            limits=limits,
            stagnation=config.stagnation,
            event_log=session.store.events,
        )

    def on_trip(monitor: AgentMonitor, trip: Trip) -> None:
        append_blocked_note(
            session.store.paths.blocked, trip, agent=monitor.agent, wave=wave.number
        )
        message = trip.message(monitor.agent)
        if args.json:
            line = WaveWatchTrip(
                agent=monitor.agent,
                breaker=trip.kind.label,
                soft=trip.self_service,
                evidence=trip.evidence,
                message=message,
            )
            print(encode_text(line, indent=None, ascii_only=False), flush=True)
        else:
            print(f"{monitor.agent}: {message}", flush=True)

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
        if args.json:
            patterns = tuple(str(f.pattern) for f in found)
            done = WaveWatchFindings(agent=agent, patterns=patterns)
            print(encode_text(done, indent=None, ascii_only=False))
        else:
            print(f"{agent}: {', '.join(str(f.pattern) for f in found) or 'nothing'}")
    return 0
