"""After a wave: each agent's actual changes checked against its scope.

The changed paths come from the agent's history (its checkpoints and commits against
the wave's base commit; ``changed_paths`` reads them with pygit2). In ``strict`` the
out-of-scope files are excluded from the merge and reported; in ``warn`` they are
merged and reported; ``off`` reports nothing.

A symbolic link is judged by its target too (``link_targets`` reads the text of each
changed link from the agent's work): the text is read from the link's directory, as the
kernel reads it, through the links of the same tree on the way (``link_destination``);
a link whose target is outside the scope, or outside the workspace, is out of scope
like a file written there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from seawall.model import Enforcement
from seawall.scope.manifest import ScopeManifest
from seawall.scope.matcher import ScopeMatcher

__all__ = [
    "ScopeVerification",
    "changed_paths",
    "link_destination",
    "link_targets",
    "verify_changes",
    "verify_wave",
]

_MAX_HOPS = 40  # the kernel's own limit on links followed in one lookup


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
    links: Mapping[str, str] | None = None,
) -> ScopeVerification:
    """Split ``changed`` (repository-relative paths) into in-scope and out-of-scope;
    ``links`` maps each changed symbolic link to its text (see ``link_targets``)."""
    matcher = ScopeMatcher(tuple(scope), workspace=workspace, session=session)
    links = links or {}
    inside: list[str] = []
    outside: list[str] = []
    for path in dict.fromkeys(changed):
        target = path
        if path in links:
            target = link_destination(path, links[path], links.get, workspace=workspace) or ""
        if enforcement is Enforcement.OFF or (
            matcher.matches_relative(path) and target and _inward(matcher, target)
        ):
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


def _inward(matcher: ScopeMatcher, target: str) -> bool:
    """A link's target in the scope: the file itself, or a directory whose files are."""
    return matcher.matches_relative(target) or matcher.matches_relative(f"{target}/_")


def link_destination(
    path: str, text: str, link_text: Callable[[str], str | None], *, workspace: Path
) -> str | None:
    """Where the link at ``path`` (workspace-relative) with ``text`` points, as a
    workspace-relative path, following the links ``link_text`` knows on the way; None
    when it points outside the workspace (or through too many links)."""
    root = PurePosixPath(workspace.as_posix())
    current, rest = PurePosixPath(path).parent, text
    for _ in range(_MAX_HOPS):
        if rest.startswith("/"):
            absolute = PurePosixPath(rest)
            if absolute != root and root not in absolute.parents:
                return None
            current, rest = PurePosixPath(), absolute.relative_to(root).as_posix()
        parts: list[str] = [p for p in current.parts if p != "."]
        pending = [p for p in rest.split("/") if p not in ("", ".")]
        followed = False
        while pending:
            part = pending.pop(0)
            if part == "..":
                if not parts:
                    return None  # above the workspace
                parts.pop()
                continue
            parts.append(part)
            inner = link_text("/".join(parts))
            if inner is not None:  # a link on the way: read its text from its directory
                current, rest = PurePosixPath(*parts[:-1]), "/".join([inner, *pending])
                followed = True
                break
        if not followed:
            return "/".join(parts) or "."
    return None


def link_targets(repo: Path, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """The text of every symbolic link among ``paths`` in ``commit``'s tree, and of the
    links on the way to their targets (so chains resolve)."""
    import pygit2

    from seawall.git.repo import open_repository

    repository = open_repository(repo)
    tree = repository.revparse_single(commit).peel(pygit2.Commit).tree
    cache: dict[str, str | None] = {}

    def text(path: str) -> str | None:
        if path not in cache:
            try:
                entry = tree[path]
            except KeyError:
                cache[path] = None
            else:
                linked = entry.filemode == pygit2.enums.FileMode.LINK
                blob = repository[entry.id] if linked else None
                data = blob.data if isinstance(blob, pygit2.Blob) else None
                cache[path] = data.decode("utf-8", "surrogateescape") if data is not None else None
        return cache[path]

    found = {path: value for path in paths if (value := text(path)) is not None}
    for path, value in list(found.items()):
        link_destination(path, value, text, workspace=Path("/nonexistent-workspace"))
    found.update({path: value for path, value in cache.items() if value is not None})
    return found
