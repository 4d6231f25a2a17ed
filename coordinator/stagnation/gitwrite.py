"""Git write: a git write into the shared working tree, found on its first
occurrence by parsing the command (``echo "git commit"`` and heredocs are not writes).

Where a write lands decides whether it counts: ``git -C elsewhere`` and scratch
repositories (a ``git init``/``git clone`` earlier in the same command line, or any
directory outside the repository) are not the shared tree. In an agent's own worktree,
commits to its own branch are allowed; ``stash`` (the stash is shared by every
worktree) and ``push`` are not.
"""

from __future__ import annotations

import re
from pathlib import Path

from seawall.breakers.commands import GitInvocation, git_invocations
from seawall.events import ToolCall, shell_command
from seawall.model import Isolation
from seawall.stagnation.finding import Finding, Pattern, Source, Verdict

__all__ = ["GIT_WRITES", "GitWriteDetector", "git_write"]

_ALWAYS = frozenset(
    {"add", "commit", "stash", "push", "mv", "rm", "reset", "restore", "pull", "merge",
     "rebase", "cherry-pick", "revert", "am", "clean", "apply"}
)  # fmt: skip
GIT_WRITES = _ALWAYS | {"checkout", "checkout --"}
_READ_ONLY_STASH = frozenset({"list", "show"})
_DRY_RUN = {
    "clean": frozenset({"-n", "--dry-run"}),
    "apply": frozenset({"--check", "--stat", "--numstat", "--summary"}),
}
_BRANCH_CHECKOUT = frozenset({"-b", "-B", "--orphan", "-t", "--track", "--detach"})
_PATH_CHECKOUT = frozenset({"--theirs", "--ours", "-p", "--patch", "-m", "--merge"})
_SHARED_EVEN_IN_OWN_WORKTREE = frozenset({"stash", "push"})
# a git write needs one of these words somewhere in the command line (a cheap first test)
_WRITE_WORD = re.compile("|".join(sorted(GIT_WRITES - {"checkout --"}, key=len, reverse=True)))


def git_write(invocation: GitInvocation, directory: Path | None = None) -> str | None:
    """The write a git call makes (``"commit"``, ``"checkout --"``), or None for a read.

    ``git checkout`` writes files when it names paths: after ``--``, with
    ``--theirs``/``--ours``/``--patch``, with a tree-ish and paths, or with one operand
    that is a file or directory in ``directory`` (else it switches branches: not a write).
    """
    sub = invocation.subcommand
    args = invocation.args
    if sub == "stash":
        first = next((arg for arg in args if not arg.startswith("-")), "")
        return None if first in _READ_ONLY_STASH else "stash"
    if sub in _ALWAYS:
        return None if not _DRY_RUN.get(sub, frozenset()).isdisjoint(args) else sub
    if sub != "checkout":
        return None
    if "--" in args:
        return "checkout --"
    if not _BRANCH_CHECKOUT.isdisjoint(args):
        return None
    operands = [arg for arg in args if not arg.startswith("-")]
    if not _PATH_CHECKOUT.isdisjoint(args) or len(operands) > 1 or operands == ["."]:
        return "checkout"
    if operands and directory is not None and (directory / operands[0]).exists():
        return "checkout"
    return None


_UNRESOLVED = Path()


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class GitWriteDetector:
    """Finds git writes that land in the shared working tree (live, ``source: tail``)."""

    __slots__ = ("_agent", "_given", "_isolation", "_repo", "_seen", "_workspace", "occurrences")

    def __init__(
        self, *, agent: str, workspace: Path, repo: Path, isolation: Isolation = Isolation.NONE
    ) -> None:
        self._agent = agent
        self._given: tuple[Path, Path] | None = (workspace, repo)  # resolved at the first
        # git call seen: most agents make none, and resolving costs system calls
        self._workspace = self._repo = _UNRESOLVED
        self._isolation = isolation
        self._seen: set[str] = set()
        self.occurrences = 0

    def observe_call(self, call: ToolCall) -> Finding | None:
        """The first new kind of git write ``call`` makes (see ``observe_all``)."""
        found = self.observe_all(call)
        return found[0] if found else None

    def observe_all(self, call: ToolCall, command: str | None = None) -> list[Finding]:
        """A finding for each kind of git write ``call`` makes into the shared tree for
        the first time (``git add -A && git commit`` records both). ``command`` is the
        call's shell command when the caller has it."""
        if command is None:
            command = shell_command(call)
        if command is None or "git" not in command or _WRITE_WORD.search(command) is None:
            return []
        invocations = git_invocations(command)
        if not invocations:
            return []
        if self._given is not None:
            workspace, repo = self._given
            self._workspace, self._repo = Path(workspace).resolve(), Path(repo).resolve()
            self._given = None
        base = self._call_directory(call)
        found: list[Finding] = []
        for invocation in invocations:
            if invocation.after_init:
                continue  # a scratch repository made by this same command line
            target = self._target(invocation, base)
            if target is None:
                continue  # unknown directory: prefer a false negative
            write = git_write(invocation, target)
            if write is None:
                continue
            where = self._shared_target(write, target)
            if where is None:
                continue
            self.occurrences += 1
            if write in self._seen:
                continue
            self._seen.add(write)
            found.append(
                Finding(
                    agent=self._agent,
                    pattern=Pattern.GIT_WRITE,
                    source=Source.TAIL,
                    verdict=Verdict.SURFACE,
                    occurrences=1,
                    evidence=f"`git {write}` in {where} (`{' '.join(command.split())[:160]}`)",
                    subject=write,
                )
            )
        return found

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

    def _shared_target(self, write: str, target: Path) -> str | None:
        """A description of the shared tree the write lands in, or None if it does not."""
        own_worktree = self._isolation is Isolation.WORKTREE and self._workspace != self._repo
        if own_worktree and _within(target, self._workspace):
            if write in _SHARED_EVEN_IN_OWN_WORKTREE:
                return f"the agent's worktree {self._workspace} (`{write}` is shared)"
            return None
        if _within(target, self._repo):
            return f"the shared working tree {self._repo}"
        return None
