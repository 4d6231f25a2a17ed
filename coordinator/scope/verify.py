"""After a wave: each agent's actual changes checked against its scope.

The changed paths come from the agent's history (its checkpoints and commits against
the wave's base commit; ``changed_paths`` reads them with pygit2). In ``strict`` the
out-of-scope files are excluded from the merge and reported; in ``warn`` they are
merged and reported; ``off`` reports nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from seawall.model import Enforcement
from seawall.scope.manifest import ScopeManifest
from seawall.scope.matcher import ScopeMatcher

__all__ = ["ScopeVerification", "changed_paths", "verify_changes", "verify_wave"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeVerification:
    """The scope check of one agent's changes."""

    task_id: str
    enforcement: Enforcement
    in_scope: tuple[str, ...]
    out_of_scope: tuple[str, ...]

    @property
    def excluded(self) -> tuple[str, ...]:
        """Files the merge must leave out: the out-of-scope ones, in strict only."""
        return self.out_of_scope if self.enforcement is Enforcement.STRICT else ()

    @property
    def clean(self) -> bool:
        return not self.out_of_scope

    def summary(self) -> str:
        """One line for the wave report."""
        if self.clean:
            return f"{self.task_id}: {len(self.in_scope)} changed file(s), all in scope"
        action = "not merged" if self.excluded else "merged"
        files = ", ".join(self.out_of_scope)
        return f"{self.task_id}: out-of-scope changes {action} ({self.enforcement}): {files}"


def verify_changes(
    task_id: str,
    changed: Iterable[str],
    *,
    scope: Iterable[str],
    enforcement: Enforcement,
    session: str = "verify",
    workspace: Path = Path("/"),
) -> ScopeVerification:
    """Split ``changed`` (repository-relative paths) into in-scope and out-of-scope."""
    matcher = ScopeMatcher(tuple(scope), workspace=workspace, session=session)
    inside: list[str] = []
    outside: list[str] = []
    for path in dict.fromkeys(changed):
        if enforcement is Enforcement.OFF or matcher.matches_relative(path):
            inside.append(path)
        else:
            outside.append(path)
    return ScopeVerification(
        task_id=task_id,
        enforcement=enforcement,
        in_scope=tuple(inside),
        out_of_scope=tuple(outside),
    )


def verify_wave(
    manifest: ScopeManifest, changes: Mapping[str, Iterable[str]]
) -> tuple[ScopeVerification, ...]:
    """Verify every agent of ``manifest`` whose changed paths are in ``changes``."""
    results = []
    for agent in manifest.agents:
        if agent.task_id not in changes:
            continue
        results.append(
            verify_changes(
                agent.task_id,
                changes[agent.task_id],
                scope=agent.paths,
                enforcement=manifest.enforcement,
                session=manifest.session,
                workspace=Path(agent.workspace),
            )
        )
    return tuple(results)


def changed_paths(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """Paths that differ between commits ``base`` and ``head`` (both sides of a rename)."""
    from seawall.git.history import tree_changes
    from seawall.git.repo import open_repository

    changes = tree_changes(open_repository(repo), base, head)
    return tuple(dict.fromkeys(path for change in changes for path in change.paths))
