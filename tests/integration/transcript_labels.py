"""Careful human labels of stretches of the real transcripts: stuck, or only looking stuck.

A step is a tool call or the end of a run (a ``Final``), counted from 1 in the order
``seawall replay`` reads them. ``stop_at`` is the step where a careful reader would have
stopped the agent; a stuck stretch must be flagged within one step of it, and a
productive stretch must not trip anything. ``marker`` is text of the call at
``first``, so a label that no longer points at its stretch fails loudly.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HELD_OUT", "HELD_OUT_LABELS", "LABELS", "Stretch"]

HELD_OUT_LABELS = Path(__file__).with_name("heldout_labels.toml")
"""Public fixtures kept out of tuning: labelled there, scored only by ``seawall replay
--score``, and left out of every test here (see that file)."""
HELD_OUT: frozenset[str] = frozenset(
    stretch["transcript"] for stretch in tomllib.loads(HELD_OUT_LABELS.read_text())["stretch"]
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stretch:
    file: str  # relative to the transcripts folder
    first: int
    last: int
    stuck: bool
    reason: str
    marker: str
    stop_at: int | None = None  # for a stuck stretch
    breaker: str | None = None  # the breaker that should flag it, e.g. "command-failures"


LABELS: tuple[Stretch, ...] = (
    Stretch(
        file="marot__spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
        first=133,
        last=147,
        stuck=True,
        # 139, not 142: the commits at 133 and 136 fail on the finding at 57:13, the one at
        # 139 on the same finding beside a Credo block; step 139 is that third failure's
        # result, and a trip there (hook mode: on its PostToolUse) refuses the fourth
        # identical commit at 142. Labelled 142, a trip at 141-143 would let it run.
        stop_at=139,
        breaker="command-failures",
        marker="git add -A && git commit",
        reason="the same commit hits the same Dialyzer finding "
        "(`otel_trace_helpers.ex:57:13:pattern_match`) at steps 133, 136, 139 and 142 (at 139 "
        "beside a Credo finding, at 142 one line lower after a comment was added above it); "
        "edits between change nothing the check sees, and the agent ends by bypassing the "
        "check with --no-verify at 147. After the third identical failure there is nothing "
        "new to learn.",
    ),
    Stretch(
        file="link-assistant__hive-mind/issue-729-codex-loop/rapid-loop-section.txt",
        first=6,
        last=15,
        stuck=True,
        stop_at=8,
        breaker="command-failures",
        marker="",
        reason="an orchestrator restarts the Codex agent ten times and every run ends in the "
        "same turn.failed (usage limit): a restart loop with one failure signature. Three "
        "identical failed runs in a row are enough.",
    ),
    Stretch(
        file="link-assistant__hive-mind/pr-4-ci-log-issue/session-1-log.txt",
        first=39,
        last=67,
        stuck=False,
        marker="gh pr checks 4 --watch",
        reason="waiting on CI: `gh pr checks` exits non-zero while checks fail or are "
        "pending, two waits time out, but each poll sees new runs after a push and the agent "
        "fixes the workflows between polls (steps 47-56, 61-64) until every check passes.",
    ),
    Stretch(
        file="link-assistant__hive-mind/issue-724/solution-draft-2.txt",
        first=45,
        last=63,
        stuck=False,
        marker="npm install",
        reason="npm install in the background, `sleep 30` and BashOutput to collect it, "
        "then a push and `sleep 60` / `gh run list` polls of a CI run still in progress: "
        "waiting, not looping.",
    ),
    Stretch(
        file="link-assistant__hive-mind/issue-724/solution-draft-2.txt",
        first=156,
        last=173,
        stuck=False,
        marker="sleep 30 && gh run list",
        reason="`sleep N && gh run list` with growing waits: the run goes from in_progress "
        "to failure, the agent reads the log, bumps the version, pushes and polls the new "
        "run until it succeeds.",
    ),
    Stretch(
        file="marot__spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        first=42,
        last=48,
        stuck=False,
        marker="mix test",
        reason="a test run moved to the background; the agent reads its output file with "
        "`tail` through Bash and with TaskOutput until it completes: waiting through the "
        "shell.",
    ),
    Stretch(
        file="marot__spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        first=34,
        last=38,
        stuck=False,
        marker="mix test",
        reason="the same: a backgrounded test run polled by `tail` and three TaskOutput calls "
        "with growing timeouts, then the agent moves on.",
    ),
    Stretch(
        file="marot__spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        first=94,
        last=128,
        stuck=False,
        marker="mix test test/spotter_web/live/project_review_live_test.exs",
        reason="one test file run six times with edits between: each run fails differently "
        "or passes; test-fix iteration.",
    ),
    Stretch(
        file="marot__spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
        first=171,
        last=235,
        stuck=False,
        marker="mix test",
        reason="after the stuck commit: tests and Dialyzer rerun between real changes, each "
        "run on new code.",
    ),
    Stretch(
        file="marot__spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        first=53,
        last=59,
        stuck=False,
        marker="session_li",
        reason="seven edits of one LiveView file in a row, each a different hunk of one "
        "change: progress, not thrashing.",
    ),
    Stretch(
        file="link-assistant__hive-mind/issue-724/solution-draft-2.txt",
        first=93,
        last=125,
        stuck=False,
        marker="solve.repository.lib.mjs",
        reason="paging through a large file in ranges before editing it: a sequential read "
        "that ends in an edit is preparation, not a pagination spiral.",
    ),
    Stretch(
        file="yuanyuanyuan__stark-repo-analyzer-skill/codex-events.jsonl",
        first=1,
        last=3,
        stuck=False,
        marker="cat",
        reason="three different reference documents read with `cat` before starting.",
    ),
)
