"""One difference in the repository's state a wave left (a hook, the configuration, a
ref, a local remote's branch), who made it and whether it was put back: what
``seawall.scope.repostate`` finds and the ``repo_state_changed`` telemetry record holds.
Nothing here reads the repository, so the record is light to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ChangeKind", "StateChange"]


class ChangeKind(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChange:
    """One difference between the state before and after a wave."""

    area: str  # hook | config | ref | remote
    name: str  # a path in the git directory, a ref name, or ``remote:ref``
    kind: ChangeKind
    before: str | None = None  # a ref's old id (refs only)
    after: str | None = None
    agents: tuple[str, ...] = ()  # who made it: one agent, or every candidate
    restored: bool = False
    saved: str | None = None  # where the planted version was kept
    note: str = ""  # why it was not restored, and how to do it by hand

    def describe(self) -> str:
        who = self.agents[0] if len(self.agents) == 1 else "one of " + ", ".join(self.agents)
        what = f"{self.area} {self.name} {self.kind}"
        done = "restored" if self.restored else "not restored"
        kept = f", the planted version kept at {self.saved}" if self.saved else ""
        note = f": {self.note}" if self.note else ""
        return f"{what} by {who or 'an unknown process'} ({done}{kept}){note}"
