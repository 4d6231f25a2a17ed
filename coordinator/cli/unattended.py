"""``seawall runner tick|enqueue|status|resume``: the unattended runner's commands.

``tick`` is what a timer runs (cron, a systemd timer, launchd): one tick, then exit.
Settings come from ``<dir>/runner.toml`` (or ``--config``) and ``SEAWALL_RUNNER_*``;
see ``docs/unattended.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.unattended.config import RunnerSettings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``seawall runner`` and its four commands."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dir",
        metavar="PATH",
        help="the runner state directory (default: $SEAWALL_RUNNER_DIR, else ./.seawall/runner)",
    )
    common.add_argument(
        "--repo", metavar="PATH", help="the repository sessions run in (default: [runner] repo)"
    )
    common.add_argument(
        "--config", metavar="FILE", help="the settings file (default: <dir>/runner.toml)"
    )
    runner = subparsers.add_parser(
        "runner",
        help="run queued sessions unattended, one per tick",
        description="A queue of sessions run one per tick from a timer, with a breaker.",
    )
    commands = runner.add_subparsers(dest="runner_command", metavar="COMMAND", required=True)
    tick = commands.add_parser(
        "tick",
        parents=[common],
        help="do one tick: run the next queued item, if allowed",
        description="Run the next queued plan, unless another tick is running or the breaker "
        "refuses new work; record the attempt and the tick.",
    )
    tick.add_argument("--json", action="store_true", help="print JSON (errors too)")
    tick.set_defaults(handler=_tick)
    enqueue = commands.add_parser(
        "enqueue",
        parents=[common],
        help="add a plan file to the queue",
        description="Add a plan file to the end of the queue the ticks work through.",
    )
    enqueue.add_argument("plan", metavar="PLAN", help="the plan file (TOML)")
    enqueue.add_argument("--json", action="store_true", help="print JSON (errors too)")
    enqueue.set_defaults(handler=_enqueue)
    status = commands.add_parser(
        "status",
        parents=[common],
        help="show queue, breaker, blocked reason and last ticks",
        description="Show the queue, the breaker, why new work is refused (if it is) and "
        "the last ticks.",
    )
    status.add_argument("--json", action="store_true", help="print the state as JSON")
    status.add_argument("--ticks", type=int, default=5, metavar="N", help="last ticks to show")
    status.set_defaults(handler=_status)
    resume = commands.add_parser(
        "resume",
        parents=[common],
        help="clear the blocked reason and let the next tick run once despite the breaker",
        description="Clear the queue's blocked reason; the next tick runs once even if the "
        "breaker is open, and its outcome decides whether it closes.",
    )
    resume.add_argument("--json", action="store_true", help="print JSON (errors too)")
    resume.set_defaults(handler=_resume)


def _context(args: argparse.Namespace) -> tuple[Path, RunnerSettings]:
    from dataclasses import replace

    from seawall.unattended.config import load_settings, resolve_runner_dir

    runner_dir = resolve_runner_dir(args.dir).resolve()
    config = Path(args.config) if args.config else None
    settings = load_settings(runner_dir, config_file=config)
    if args.repo:
        settings = replace(settings, repo=Path(args.repo))
    if settings.repo is not None:
        settings = replace(settings, repo=settings.repo.expanduser().resolve())
    return runner_dir, settings


def _tick(args: argparse.Namespace) -> int:
    from seawall.unattended.tick import run_tick

    runner_dir, settings = _context(args)
    _stop_on_sigterm()
    report = run_tick(runner_dir, settings=settings)
    if args.json:
        from seawall.cli.documents import TickDone
        from seawall.codec import encode_text

        print(encode_text(TickDone(tick=report), ascii_only=False))
        return 0
    parts = [f"tick: {report.action}"]
    if report.item:
        parts.append(f"item {report.item}")
    if report.outcome:
        parts.append(f"-> {report.outcome}")
    if report.breaker:
        parts.append(f"(breaker {report.breaker})")
    print(" ".join(parts))
    return 0


def _stop_on_sigterm() -> None:
    """Let a timer's SIGTERM unwind the tick like Ctrl-C, so its session is stopped too."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def _enqueue(args: argparse.Namespace) -> int:
    import time

    from seawall.unattended.paths import RunnerPaths
    from seawall.unattended.queue import QueueFile

    runner_dir, _ = _context(args)
    item = QueueFile(RunnerPaths(dir=runner_dir).queue).enqueue_plan(
        Path(args.plan), now=time.time()
    )
    if args.json:
        from seawall.cli.documents import Queued
        from seawall.codec import encode_text

        print(encode_text(Queued(item=item.id, plan=str(item.plan)), ascii_only=False))
        return 0
    print(f"queued {item.id}: {item.plan}")
    return 0


def _status(args: argparse.Namespace) -> int:
    from seawall.codec import encode_text
    from seawall.unattended.status_view import render_status, runner_status

    runner_dir, settings = _context(args)
    snapshot = runner_status(runner_dir, settings=settings, last_ticks=max(0, args.ticks))
    if args.json:
        print(encode_text(snapshot.document()))
    else:
        print(render_status(snapshot))
    return 0


def _resume(args: argparse.Namespace) -> int:
    from seawall.unattended.paths import RunnerPaths
    from seawall.unattended.queue import QueueFile

    runner_dir, _ = _context(args)
    QueueFile(RunnerPaths(dir=runner_dir).queue).resume()
    if args.json:
        from seawall.cli.documents import RunnerResumed
        from seawall.codec import encode_text

        print(encode_text(RunnerResumed()))
        return 0
    print("resumed: blocked reason cleared; the next tick runs even if the breaker is open")
    return 0
