"""The words of a carryover: its issue's title and body, the "seen again" note on a
duplicate, and the ``→ issue #N`` suffix of a STATE.md line.

The body says why seawall filed it, what was tried, the evidence (spiral verdict, error
signature, REMAINING), an excerpt of the agent's final message, and what to do next:
the ref holding the work, the command that continues the session and the one that
reruns the plan. The hidden fingerprint marker ends it.
"""

from __future__ import annotations

import re

from seawall.carryover.model import (
    TITLE_LIMIT,
    Carryover,
    CarryoverKind,
    CarryoverResult,
    marker,
)
from seawall.model import IssueRef
from seawall.status_parsing import error_in_text

__all__ = [
    "issue_suffix",
    "parse_issue_suffix",
    "render_body",
    "render_seen_again",
    "render_title",
]

_SUFFIX_PATTERN = re.compile(r"→\s*(issue|existing)\s+#(\d+)")


def render_title(carryover: Carryover) -> str:
    """``[Carryover] [SPIRAL] <task>`` on one line, at most ``TITLE_LIMIT`` characters."""
    task = " ".join((carryover.description or carryover.task_id).split())
    title = f"[Carryover] [{carryover.kind.value}] {task}"
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1].rstrip() + "…"


def render_body(carryover: Carryover) -> str:
    """The issue body: task, what was tried, evidence, the final message, what to do
    next, and the hidden marker."""
    why = {
        CarryoverKind.SPIRAL: "the task spiralled twice and was escalated",
        CarryoverKind.FAILED: "the task failed (the session queues a fix task with corrected "
        "instructions; this issue tracks the work in case that does not land)",
    }[carryover.kind]
    signature = carryover.error_signature.strip() or error_in_text(carryover.final_text)
    evidence = [
        ("Spiral verdict", carryover.spiral_verdict),
        ("Error signature", signature),
        ("REMAINING", carryover.remaining),
    ]
    lines = [
        f"## {carryover.kind.value}: {carryover.description or carryover.task_id}",
        "",
        f"seawall filed this carryover because {why}.",
        "",
        f"- **Task:** `{carryover.task_id}`",
        f"- **Session:** `{carryover.session}`, wave {carryover.wave}",
        f"- **Priority:** {carryover.priority.value}",
        "",
        "### What was tried",
        "",
        carryover.tried.strip() or "_not recorded_",
        "",
        "### Evidence",
        "",
        *(f"- **{name}:** {value.strip() or '_none_'}" for name, value in evidence),
    ]
    if carryover.final_text.strip():
        lines += ["", "### Final message (excerpt)", "", *_quoted(carryover.final_text)]
    if carryover.context.strip():
        lines += ["", "### Context", "", carryover.context.strip()]
    lines += ["", "### Next", "", *_next_steps(carryover)]
    return "\n".join([*lines, "", marker(carryover.fingerprint), ""])


_EXCERPT_LINES = 12
_EXCERPT_CHARS = 1500


def _quoted(text: str) -> list[str]:
    """The last lines of ``text`` (where an agent's conclusion is), as a Markdown quote."""
    lines = text.strip().splitlines()
    cut = len(lines) > _EXCERPT_LINES
    lines = lines[-_EXCERPT_LINES:]
    while len("\n".join(lines)) > _EXCERPT_CHARS and len(lines) > 1:
        lines, cut = lines[1:], True
    excerpt = [f"> {line}".rstrip() for line in lines]
    return (["> …"] if cut else []) + [line[: _EXCERPT_CHARS + 2] for line in excerpt]


def _next_steps(carryover: Carryover) -> list[str]:
    """Where the work is and the commands that continue or rerun it."""
    steps = []
    if carryover.work_ref or carryover.work_commit:
        where = " on ".join(
            f"`{value}`" for value in (carryover.work_commit[:12], carryover.work_ref) if value
        )
        tip = carryover.work_commit[:12] or carryover.work_ref
        diff = f" (see it: `git diff {carryover.base[:12]} {tip}`)" if carryover.base else ""
        steps.append(f"- **Work so far:** {where}{diff}")
    else:
        steps.append("- **Work so far:** none recorded (the agent changed no file)")
    steps.append(
        f"- **Continue the session** (while it is unfinished): "
        f"`seawall resume --session {carryover.session}`"
    )
    plan = carryover.plan_path or "PLAN.toml"
    steps.append(f"- **Rerun the plan** (tasks already done finish at once): `seawall run {plan}`")
    return steps


def render_seen_again(carryover: Carryover) -> str:
    """The comment on an open issue that the same work escalated again."""
    return (
        f"Seen again by seawall session `{carryover.session}` (wave {carryover.wave}): "
        f"task `{carryover.task_id}` is still {carryover.kind.value}."
    )


def issue_suffix(outcome: CarryoverResult | IssueRef) -> str:
    """``→ issue #N`` for a new issue, ``→ existing #N`` for a duplicate, else ``""``."""
    ref = outcome.issue if isinstance(outcome, CarryoverResult) else outcome
    return "" if ref is None else ref.suffix()


def parse_issue_suffix(line: str) -> IssueRef | None:
    """The ``→ issue #N`` / ``→ existing #N`` reference on a STATE.md line, if any."""
    match = _SUFFIX_PATTERN.search(line)
    if match is None:
        return None
    return IssueRef(number=int(match.group(2)), existing=match.group(1) == "existing")
