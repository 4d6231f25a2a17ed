"""``seawall replay FILE... [--json]``: run recorded transcripts through the breakers.

Each file is one agent's transcript (Claude Code session or subagent JSONL,
``--output-format stream-json``, Codex ``exec --json``, or a log embedding them). Every
event, trip and finding is printed with its file and line, so limits can be tuned
on one's own history: with a plan's ``[session.breakers]`` and ``[session.stagnation]``
limits (``--plan``), else the defaults. ``--score LABELS`` scores them instead against
labelled stretches (``seawall.replay_score``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.model import BreakerLimits, StagnationConfig

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``replay``."""
    replay = subparsers.add_parser(
        "replay",
        help="replay transcripts through the detectors and breakers",
        description="Replay agent transcripts through the detectors and breakers and print "
        "every event, trip and finding with its line number. After a trip the breaker is "
        "reset and the replay goes on. A soft trip (unverified-edits: a nudge to run a "
        "check) is counted apart from the hard trips that stop an agent. Exit codes: 0 no "
        "hard trip, 3 a breaker tripped hard, 1 error.",
    )
    replay.add_argument("files", nargs="*", type=Path, metavar="FILE", help="transcript files")
    replay.add_argument(
        "--score",
        type=Path,
        metavar="LABELS",
        help="score the breakers against the labelled stretches of this TOML or JSON file "
        "(on time, early, late, missed; hard and soft trips of productive stretches)",
    )
    replay.add_argument(
        "--root",
        type=Path,
        help="with --score: where the labelled transcripts are (default: the file's `root`)",
    )
    replay.add_argument("--json", action="store_true", help="print one JSON object per line")
    replay.add_argument("--plan", type=Path, help="take the limits from this plan file")
    replay.add_argument(
        "--only-trips", action="store_true", help="print trips and findings, not every event"
    )
    replay.add_argument(
        "--workspace",
        type=Path,
        help="where the agent worked, for judging git writes (default: the current directory)",
    )
    replay.set_defaults(handler=_replay)


def _replay(args: argparse.Namespace) -> int:
    from seawall.codec import encode_text
    from seawall.errors import ConfigurationError
    from seawall.model import BreakerLimits, StagnationConfig
    from seawall.replay import replay_file

    limits, stagnation = BreakerLimits(), StagnationConfig()
    if args.plan is not None:
        from seawall.plan import load_plan

        session = load_plan(args.plan).session
        limits, stagnation = session.breakers, session.stagnation
    if args.score is not None:
        return _score(args, limits, stagnation)
    if not args.files:
        raise ConfigurationError("seawall replay: give transcript files, or --score LABELS")
    for path in args.files:
        if not path.is_file():
            raise ConfigurationError(f"{path}: no such transcript file")
    stopped = False
    for path in args.files:
        report = replay_file(
            path,
            limits=limits,
            stagnation=stagnation,
            workspace=args.workspace,
            events=not args.only_trips,
        )
        summary = report.summary()
        stopped = stopped or bool(summary.hard_trips)
        for record in report.records:
            if args.json:
                print(encode_text(record, indent=None, ascii_only=False))
            else:
                print(record.text())
        print(encode_text(summary, indent=None) if args.json else summary.text())
    return 3 if stopped else 0


def _score(args: argparse.Namespace, limits: BreakerLimits, stagnation: StagnationConfig) -> int:
    """``--score LABELS``: one line per labelled stretch, then the score; exit code 0
    (a score is a measurement, not a verdict)."""
    from seawall.codec import encode_text
    from seawall.errors import ConfigurationError
    from seawall.replay_score import score_labels

    if args.files:
        raise ConfigurationError("seawall replay --score: the labels name the transcripts")
    scores, total = score_labels(args.score, limits=limits, stagnation=stagnation, root=args.root)
    for row in scores:
        print(encode_text(row, indent=None, ascii_only=False) if args.json else row.text())
    print(encode_text(total, indent=None) if args.json else total.text())
    return 0
