"""The pre-dispatch collision check of a wave's scopes.

Each pair of tasks is classified:

- ``concrete``: there is a file (or directory) both may write: equal exact paths, an
  exact path under the other's directory or glob, or nested directory grants;
- ``glob-prefix``: globs whose literal prefixes overlap, so a file may match both;
- ``disjoint``: no file can be in both scopes.

A task with an empty scope writes nothing and overlaps no one. For an in-place wave,
overlapping tasks are either split (greedy, in task order: the later ones wait for a later
wave) or
the whole wave moves to worktrees, per ``OverlapPolicy``; a worktree wave keeps its
overlaps (the merge deals with them) and only reports them. ``CollisionReport.lines``
is what ``seawall plan`` prints.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from enum import StrEnum

from seawall.model import Isolation, OverlapPolicy, Task, Wave
from seawall.scope.matcher import compile_grant, grant_matches

__all__ = ["CollisionReport", "Overlap", "OverlapKind", "check_pair", "plan_collisions"]


class OverlapKind(StrEnum):
    CONCRETE = "concrete"
    GLOB_PREFIX = "glob-prefix"
    DISJOINT = "disjoint"


@dataclass(frozen=True, slots=True, kw_only=True)
class Overlap:
    """How the scopes of tasks ``a`` and ``b`` meet; ``where`` names the shared paths."""

    a: str
    b: str
    kind: OverlapKind
    where: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CollisionReport:
    """The collision check of one wave and what was done about it."""

    wave: int
    isolation: Isolation
    policy: OverlapPolicy
    overlaps: tuple[Overlap, ...]
    waves: tuple[Wave, ...]
    action: str

    @property
    def colliding(self) -> tuple[Overlap, ...]:
        return tuple(o for o in self.overlaps if o.kind is not OverlapKind.DISJOINT)

    def lines(self) -> list[str]:
        """Human-readable lines for ``seawall plan``."""
        out = [f"wave {self.wave}: scope check ({self.isolation}): {self.action}"]
        for overlap in self.colliding:
            where = ", ".join(overlap.where)
            out.append(f"  {overlap.a} x {overlap.b}: {overlap.kind} overlap ({where})")
        if len(self.waves) > 1:
            out.append(f"  wave {self.wave} runs {', '.join(self.waves[0].task_ids)}")
            later = [task for wave in self.waves[1:] for task in wave.task_ids]
            out.append(f"  a later wave runs {', '.join(later)}")
        return out


def check_pair(a: Task, b: Task) -> Overlap:
    """Classify the overlap of two tasks' scopes."""
    concrete: list[str] = []
    fuzzy: list[str] = []
    for ga, gb in itertools.product(a.scope, b.scope):
        kind, where = _grant_overlap(ga, gb)
        if kind is OverlapKind.CONCRETE:
            concrete.append(where)
        elif kind is OverlapKind.GLOB_PREFIX:
            fuzzy.append(where)
    if concrete:
        return Overlap(
            a=a.id, b=b.id, kind=OverlapKind.CONCRETE, where=tuple(dict.fromkeys(concrete))
        )
    if fuzzy:
        return Overlap(
            a=a.id, b=b.id, kind=OverlapKind.GLOB_PREFIX, where=tuple(dict.fromkeys(fuzzy))
        )
    return Overlap(a=a.id, b=b.id, kind=OverlapKind.DISJOINT)


def plan_collisions(wave: Wave, *, policy: OverlapPolicy) -> CollisionReport:
    """Check ``wave`` pairwise and split or move it when it runs in place."""
    overlaps = tuple(check_pair(a, b) for a, b in itertools.combinations(wave.tasks, 2))
    conflicts = {frozenset((o.a, o.b)) for o in overlaps if o.kind is not OverlapKind.DISJOINT}
    waves, action = _resolve(wave, policy, conflicts)
    return CollisionReport(
        wave=wave.number,
        isolation=wave.isolation,
        policy=policy,
        overlaps=overlaps,
        waves=waves,
        action=action,
    )


def _resolve(
    wave: Wave, policy: OverlapPolicy, conflicts: set[frozenset[str]]
) -> tuple[tuple[Wave, ...], str]:
    if not conflicts:
        return (wave,), "scopes are disjoint"
    if wave.isolation is not Isolation.NONE:
        return (wave,), "overlaps kept: each agent has its own worktree"
    if policy is OverlapPolicy.WORKTREE:
        reason = "overlapping scopes in an in-place wave (overlap policy: worktree)"
        moved = replace(wave, isolation=Isolation.WORKTREE, isolation_reason=reason)
        return (moved,), "moved to worktrees"
    groups = _split(wave.tasks, conflicts)
    waves = tuple(
        replace(
            wave,
            tasks=tuple(group),
            isolation_reason="overlapping scopes run in turn, in waves one after another",
        )
        for group in groups
    )
    return waves, "split: tasks with overlapping scopes wait for a later wave"


def _split(tasks: tuple[Task, ...], conflicts: set[frozenset[str]]) -> list[list[Task]]:
    """Greedy colouring in task order: each task joins the first group it does not clash with."""
    groups: list[list[Task]] = []
    for task in tasks:
        for group in groups:
            if all(frozenset((task.id, other.id)) not in conflicts for other in group):
                group.append(task)
                break
        else:
            groups.append([task])
    return groups


def _literal_prefix(grant: str) -> tuple[str, ...]:
    parts = grant.rstrip("/").split("/")
    out: list[str] = []
    for part in parts:
        if "*" in part:
            break
        out.append(part)
    return tuple(out)


def _grant_overlap(ga: str, gb: str) -> tuple[OverlapKind, str]:
    na, ra = compile_grant(ga)
    nb, rb = compile_grant(gb)
    exact_a = ra is None and not na.endswith("/")
    exact_b = rb is None and not nb.endswith("/")
    if exact_a and grant_matches(nb, rb, na):
        return OverlapKind.CONCRETE, na
    if exact_b and grant_matches(na, ra, nb):
        return OverlapKind.CONCRETE, nb
    if exact_a or exact_b:
        return OverlapKind.DISJOINT, ""
    if ra is None and rb is None:  # two directory grants
        if na.startswith(nb) or nb.startswith(na):
            return OverlapKind.CONCRETE, max(na, nb, key=len)
        return OverlapKind.DISJOINT, ""
    pa, pb = _literal_prefix(na), _literal_prefix(nb)
    short, long = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    if long[: len(short)] == short:
        return OverlapKind.GLOB_PREFIX, f"{na} ~ {nb}"
    return OverlapKind.DISJOINT, ""
