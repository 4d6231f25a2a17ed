"""Who refused an agent's calls: seawall itself, or the agent CLI's own permission layer.

An agent CLI lists the calls it did not run (Claude Code's ``permission_denials``, kept
as the run's ``denials``), and to the CLI a hook's ``deny`` is one of its own refusals:
the list holds seawall's too. seawall answers a call it refuses in words of its own
(``seawall scope-denied: ...``, ``seawall command-blocked: ...``, ``seawall
breaker/<name> tripped ...``); the coordinator counts the calls so answered
(``AgentRun.guard_denials``) and keeps the last answer. The rest of the list is the
CLI's own. A listed call whose target the last answer names is seawall's; the others
are the CLI's by name when their number says so, and are otherwise shown as the list
the CLI's refusals are among.

Each side says what to do. A user who reads "refused without permission" after a scope
denial looks for a permission setting that is not there: seawall's refusals name the
guard that refused (the task's scope, the command policy, a breaker) and where the plan
sets it; the CLI's name the permission settings to look at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from seawall.state.runs import AgentRun

__all__ = ["GUARD_CLASSES", "GuardAnswer", "Refusals", "guard_answer"]

GUARD_CLASSES = ("scope-denied", "command-blocked")
"""The classes of seawall's refusals as its answers name them (``seawall <class>: ``)."""

_ANSWER = re.compile(
    r"seawall (?:(?P<guard>" + "|".join(GUARD_CLASSES) + r"): "
    r"|(?P<breaker>breaker/[a-z-]+) tripped \([^)]*\): )"
)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_SHOWN = 5  # names listed per note
_QUOTED = 160  # characters of an answer quoted

_WHO = {
    "scope-denied": "its scope guard",
    "command-blocked": "its command policy",
}
_WHAT_TO_DO = {
    "scope-denied": (
        "what a task may change is its `scope` in the plan: widen it, or leave those files "
        "to another task"
    ),
    "command-blocked": (
        "the command policy is the plan's `[session.commands]` (`allow`, `deny`) over "
        "seawall's default list"
    ),
    "breaker": (
        "the breakers' limits are the plan's `[session.breakers]`; after a review, "
        "`seawall reset --agent TASK` re-arms them"
    ),
}
_CLI_SETTINGS = (
    "its own permission settings, not seawall's: see the runner's permissions (for "
    "claude-code, `options.permissions` and any `--permission-mode` in its `argv`) and "
    "the CLI's own settings files"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardAnswer:
    """One of seawall's answers, read: its class (``scope-denied``, ``command-blocked``
    or a breaker's label) and the problem it names."""

    kind: str
    problem: str

    @property
    def who(self) -> str:
        """The part of seawall that refused: ``its scope guard``, ``its command
        policy``, ``its breaker breaker/loop``."""
        return _WHO.get(self.kind) or f"its breaker `{self.kind}`"

    @property
    def what_to_do(self) -> str:
        return _WHAT_TO_DO.get(self.kind) or _WHAT_TO_DO["breaker"]

    def names(self, denial: str) -> bool:
        """Whether this answer is about ``denial`` (``"<tool> <target>"``, as the CLI
        lists it): the answer quotes its target, or names the path it ends with."""
        target = denial.partition(" ")[2].strip()
        if not target:
            return False
        quoted = re.compile(r"(?<![\w./-])" + re.escape(target) + r"(?![\w./-])")
        if quoted.search(self.problem):
            return True
        path = self.problem.split(" ", 1)[0].strip("`")
        return bool(path) and (target == path or target.endswith("/" + path))


def guard_answer(text: str) -> GuardAnswer | None:
    """``text`` read as one of seawall's refusals, or None when it is none."""
    match = _ANSWER.search(text)
    if match is None:
        return None
    rest = text[match.end() :]
    end = _SENTENCE_END.search(rest)
    problem = " ".join((rest[: end.start()] if end else rest).split())
    if len(problem) > _QUOTED:
        problem = problem[: _QUOTED - 1] + "…"
    return GuardAnswer(kind=match.group("guard") or match.group("breaker"), problem=problem)


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusals:
    """The calls refused to one agent, told apart by who refused them."""

    listed: tuple[str, ...] = ()  # what the agent CLI lists as refused, seawall's included
    by_seawall: int = 0  # calls seawall answered with a refusal
    last_answer: str = ""  # the last such answer

    @classmethod
    def of(cls, run: AgentRun) -> Refusals:
        return cls(
            listed=tuple(run.denials),
            by_seawall=run.guard_denials,
            last_answer=run.last_guard_denial,
        )

    @property
    def by_cli(self) -> int:
        """How many of the listed calls the CLI's own permission layer refused."""
        return max(0, len(self.listed) - self.by_seawall)

    @property
    def answer(self) -> GuardAnswer | None:
        return guard_answer(self.last_answer) if self.by_seawall else None

    def split(self) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
        """``(seawall's, the CLI's, exact)``: the listed calls told apart. ``exact`` is
        False when they cannot all be (some of seawall's are unnamed): the CLI's are
        then the calls its refusals are among."""
        if self.by_cli == 0:
            return self.listed, (), True
        if not self.by_seawall:
            return (), self.listed, True
        answer = self.answer
        known = tuple(d for d in self.listed if answer is not None and answer.names(d))
        rest = tuple(d for d in self.listed if d not in known)
        return known, rest, len(rest) == self.by_cli

    def seawall_note(self) -> str | None:
        """What seawall refused, which part of it refused the last, and what to do."""
        if not self.by_seawall:
            return None
        ours, _, _ = self.split()
        head = (
            f"seawall refused {self.by_seawall} call(s) itself (not the agent CLI's "
            f"permission settings){': ' + _names(ours) if ours else ''}"
        )
        answer = self.answer
        if answer is None:
            last = f"; the last: {_cut(self.last_answer)}" if self.last_answer.strip() else ""
            return head + last
        return f"{head}; the last by {answer.who}: {answer.problem}; {answer.what_to_do}"

    def cli_note(self) -> str | None:
        """What the agent CLI refused on its own, and where its permissions are set."""
        count = self.by_cli
        if not count:
            return None
        _, theirs, exact = self.split()
        named = f": {_names(theirs)}" if exact else f", among: {_names(theirs)}"
        return f"the agent CLI refused {count} call(s) without permission{named}; {_CLI_SETTINGS}"

    def notes(self) -> list[str]:
        """One line per side that refused anything: seawall's first."""
        return [note for note in (self.seawall_note(), self.cli_note()) if note]


def _names(denials: tuple[str, ...]) -> str:
    shown = ", ".join(_keep_end(d, 80) for d in denials[:_SHOWN])
    more = f" (+{len(denials) - _SHOWN} more)" if len(denials) > _SHOWN else ""
    return shown + more


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTED else flat[: _QUOTED - 1] + "…"


def _keep_end(text: str, limit: int) -> str:
    """``text`` on one line, cut at the front: the end of a path names the file."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head, _, rest = flat.partition(" ")
    return f"{head} …{rest[-(limit - len(head) - 2) :]}" if rest else "…" + flat[-limit:]
