"""PSA-007 git write: a git write into the shared working tree, found on its first
occurrence by parsing the command (``echo "git commit"`` and heredocs are not writes).

Where a write lands decides whether it counts: ``git -C elsewhere`` and scratch
repositories (a ``git init``/``git clone`` earlier in the same command line, or any
directory outside the repository) are not the shared tree. In an agent's own worktree,
commits to its own branch are allowed; ``stash`` (the stash is shared by every
worktree) and ``push`` are not.
"""

from __future__ import annotations

from pathlib import Path

from coordinator.breakers.commands import GitInvocation, git_invocations
from coordinator.events import ToolCall, shell_command
from coordinator.model import Isolation
from coordinator.stagnation.finding import Finding, Pattern, Source, Verdict

__all__ = ["GIT_WRITES", "GitWriteDetector", "git_write"]

GIT_WRITES = frozenset({"add", "commit", "stash", "push", "mv", "rm", "reset"})
_READ_ONLY_STASH = frozenset({"list", "show"})
_SHARED_EVEN_IN_OWN_WORKTREE = frozenset({"stash", "push"})


def git_write(invocation: GitInvocation) -> str | None:
    """The write a git call makes (``"commit"``, ``"checkout --"``), or None for a read."""
    sub = invocation.subcommand
    if sub == "stash":
        first = next((arg for arg in invocation.args if not arg.startswith("-")), "")
        return None if first in _READ_ONLY_STASH else "stash"
    if sub in GIT_WRITES:
        return sub
    if sub == "checkout" and "--" in invocation.args:
        return "checkout --"
    return None


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class GitWriteDetector:
    """Finds git writes that land in the shared working tree (live, ``source: tail``).

    One finding per command line, naming every write in it not reported before
    (``git add -A && git commit`` is ``add+commit``)."""

    __slots__ = ("_agent", "_isolation", "_repo", "_seen", "_workspace", "occurrences")

    def __init__(
        self, *, agent: str, workspace: Path, repo: Path, isolation: Isolation = Isolation.NONE
    ) -> None:
        self._agent = agent
        self._workspace = Path(workspace).resolve()
        self._repo = Path(repo).resolve()
        self._isolation = isolation
        self._seen: set[str] = set()
        self.occurrences = 0

    def observe_call(self, call: ToolCall) -> Finding | None:
        command = shell_command(call)
        if command is None or "git" not in command:
            return None
        invocations = git_invocations(command)
        if not invocations:
            return None
        base = self._call_directory(call)
        new: dict[str, str] = {}  # every write of the command line not seen before
        for invocation in invocations:
            write = git_write(invocation)
            if write is None:
                continue
            where = self._shared_target(invocation, write, base)
            if where is None:
                continue
            self.occurrences += 1
            if write not in self._seen:
                new.setdefault(write, where)
        if not new:
            return None
        self._seen.update(new)
        writes = ", ".join(f"`git {write}`" for write in new)
        places = " and ".join(dict.fromkeys(new.values()))
        return Finding(
            agent=self._agent,
            pattern=Pattern.GIT_WRITE,
            source=Source.TAIL,
            verdict=Verdict.SURFACE,
            occurrences=1,
            evidence=f"{writes} in {places} (`{' '.join(command.split())[:160]}`)",
            subject="+".join(new),
        )

    def _call_directory(self, call: ToolCall) -> Path:
        for name in ("cwd", "workdir"):
            value = call.arguments.get(name)
            if isinstance(value, str) and value:
                return self._resolve(self._workspace, value)
        return self._workspace

    @staticmethod
    def _resolve(base: Path, target: str) -> Path:
        return (base / Path(target).expanduser()).resolve()

    def _target(self, invocation: GitInvocation, base: Path) -> Path | None:
        """The directory the git call works in, or None when it cannot be known."""
        directory = base
        if invocation.cwd == "$":
            if not (invocation.directory or "").startswith("/"):
                return None
        elif invocation.cwd is not None:
            directory = self._resolve(base, invocation.cwd)
        for value in (invocation.directory, invocation.work_tree):
            if value is not None:
                if "$" in value:
                    return None
                directory = self._resolve(directory, value)
        if invocation.git_dir is not None and invocation.work_tree is None:
            if "$" in invocation.git_dir:
                return None
            directory = self._resolve(directory, invocation.git_dir).parent
        return directory

    def _shared_target(self, invocation: GitInvocation, write: str, base: Path) -> str | None:
        """A description of the shared tree the write lands in, or None if it does not."""
        if invocation.after_init:
            return None  # a scratch repository made by this same command line
        target = self._target(invocation, base)
        if target is None:
            return None  # unknown directory: prefer a false negative
        own_worktree = self._isolation is Isolation.WORKTREE and self._workspace != self._repo
        if own_worktree and _within(target, self._workspace):
            if write in _SHARED_EVEN_IN_OWN_WORKTREE:
                return f"the agent's worktree {self._workspace} (`{write}` is shared)"
            return None
        if _within(target, self._repo):
            return f"the shared working tree {self._repo}"
        return None
