"""What a wave produced: its merge's conflicts and drops, its checks, what it set aside
or adopted of the user's files, and each agent's counts. ``seawall.state.ledger`` keeps
these records, ``seawall.telemetry`` tells them; ``seawall.model`` names them too.

Every value here is a frozen, slotted, keyword-only dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AdoptedRecord",
    "BaselineChecks",
    "CheckFailure",
    "Dropped",
    "Resolution",
    "RunCounts",
    "SetAsideRecord",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """A merge conflict resolved by the documented policy: the path, the rule that
    decided it (``seawall.git.merge.MergeRule``'s value), the two agents, the one
    whose version was kept, and the fix task queued for the other, if any."""

    path: str
    rule: str
    agents: tuple[str, ...] = ()
    kept: str = ""
    fix_task: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Dropped:
    """An agent whose merge was dropped from the wave, and why."""

    task: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckFailure:
    """The first check command that failed: its exit code (None: it timed out) and the
    tail of its output."""

    command: str
    returncode: int | None = None
    output: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineChecks:
    """The wave base's own run of the checks, when it was checked."""

    commit: str
    failure: CheckFailure | None = None
    no_tests: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SetAsideRecord:
    """Changes of a shared tree outside every agent's scope. ``files`` (writes seawall
    saw an agent make) were taken out of the tree and kept on ``ref``;
    ``left_in_place`` (the user's files that predate the wave, changed during it by an
    agent) only copied there; ``restore`` is the command that puts them back.
    ``outside_scope`` are changes no agent was seen making (the lead's or the user's
    own files, an editor's, a build's): never moved nor copied, only reported. ``ref``
    is "" when nothing was kept on one."""

    ref: str
    files: tuple[str, ...] = ()
    left_in_place: tuple[str, ...] = ()
    restore: str = ""
    outside_scope: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdoptedRecord:
    """The user's files inside in-place agents' scopes when a wave was prepared: copied
    onto ``ref`` before any agent ran; ``restore`` is the exact command that writes the
    copies back. ``files`` were untracked (adopted with ``adopt_user_files``),
    ``ignored`` ignored by git (always adopted)."""

    ref: str
    files: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    restore: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCounts:
    """What the coordinator counted of one agent's run (a snapshot of
    ``seawall.runner.RunCounter``)."""

    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0  # uncached input
    output_tokens: int = 0
    cache_read_tokens: int = 0  # input read from the provider's cache
    cache_write_tokens: int = 0  # input written to the provider's cache
    elapsed_s: float = 0.0
    last_tool: str | None = None
    cost_estimated: bool = False

    @property
    def tokens(self) -> int:
        """Every input and output token, cached input included (``budgets.tokens``)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )
