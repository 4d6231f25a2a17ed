"""Edit history for agents whose runner names no edits: their workspace, watched.

A runner whose events carry the agent's edits (``AgentRunner.reports_edits``: Claude
Code, Codex, opencode, stream-json commands) gets a shadow checkpoint after each edit
call. Any other agent (a plain command such as aider or a script, a callable that writes
by itself) would get one checkpoint, at its end: its history would hold one edit, and the
spiral rule ("the same file edited 3+ times within one agent's run") could never fire.

For those agents the session watches the workspace with the kernel's file notifications
(inotify, through ``watchfiles``; it polls where the kernel has none) and takes one
checkpoint per *burst* of writes: writes no further apart than ``BURST_MS`` are one edit.
What a burst changed is the agent's when it lies in the agent's own tree (a worktree) or,
in place, inside its scope (scopes of agents sharing the tree never overlap). Only files
written are taken as the agent's: a file that vanished from its tree is not made its edit
(the merge's guard against deleting files an agent never touched stays whole). Idle, the
watch costs next to nothing (a thread asleep in the kernel, woken to look at its stop
signal); busy, an agent causes at most one checkpoint per ``BURST_MS`` however fast it
writes (``tests/bench/bench_edit_watch.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
from watchfiles import Change, DefaultFilter, awatch

__all__ = ["BURST_MS", "LONGEST_BURST_MS", "EditWatches", "watch_edits"]

BURST_MS = 150
"""Writes no further apart than this are one edit (one checkpoint)."""

LONGEST_BURST_MS = 1000
"""A stream of writes to ever new files is cut into edits of at most this length."""

_IGNORED_DIRS = (".seawall",)
_RESTARTS = 3  # a watch that broke is started again (writes meanwhile go unseen)
_log = logging.getLogger(__name__)

OnBurst = Callable[[tuple[str, ...]], Awaitable[None]]


async def watch_edits(
    workspace: Path,
    *,
    belongs: Callable[[str], bool],
    on_burst: OnBurst,
    stop: anyio.Event,
    on_problem: Callable[[str], None] | None = None,
) -> str:
    """Call ``on_burst(paths)`` for each burst of writes under ``workspace`` until
    ``stop`` is set; ``paths`` are workspace-relative, those ``belongs`` accepts, sorted.

    The kernel watches the tree from the first time this task runs (before its first
    wait), so a caller that lets it run once before starting the agent misses no write.
    A watch that breaks (no notification left: the kernel's ``max_user_watches``; a
    vanished workspace; a file name that is not UTF-8) is started again, a few times.
    Returns "" when the watch ran to its stop unbroken, else what broke it; the agent runs
    on whatever happens here, its last checkpoint taken at its end as always.
    """
    # resolved before the first wait (a symlinked workspace: paths come back resolved)
    root = Path(os.path.realpath(workspace))  # noqa: ASYNC240
    ignore = DefaultFilter(ignore_dirs=(*DefaultFilter.ignore_dirs, *_IGNORED_DIRS))
    problem = ""
    for _ in range(_RESTARTS + 1):
        try:
            async for changes in awatch(
                root,
                watch_filter=ignore,
                debounce=LONGEST_BURST_MS,
                step=BURST_MS,
                stop_event=stop,
            ):
                paths = _written_files(root, changes)
                mine = tuple(path for path in paths if belongs(path))
                if mine:
                    await on_burst(mine)
            return problem
        except Exception as exc:  # noqa: BLE001 - a broken watch must never end the agent
            # the kernel's watches ran out, the tree vanished, a name that is not UTF-8
            cause = exc.exceptions[0] if isinstance(exc, ExceptionGroup) else exc
            _log.debug("workspace watch of %s broke: %r", root, cause)
            problem = f"the watch of its workspace for edits broke ({cause})"
            if on_problem is not None:
                on_problem(problem)
            if stop.is_set():
                return problem
    return f"{problem}, {_RESTARTS + 1} times: it was given up"


def _written_files(root: Path, changes: set[tuple[Change, str]]) -> list[str]:
    """The files a burst wrote, relative to ``root``: not those deleted, and not a folder
    made (its files are)."""
    return sorted(
        {
            rel
            for change, path in changes
            if change is not Change.deleted
            and (rel := _relative(root, path))
            and not Path(path).is_dir()
        }
    )


def _relative(root: Path, path: str) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return ""


@dataclass(slots=True)
class _Tree:
    """One watched tree and the agents following it (token -> what belongs, where to)."""

    stop: anyio.Event = field(default_factory=anyio.Event)
    followers: dict[int, tuple[Callable[[str], bool], OnBurst, Callable[[str], None]]] = field(
        default_factory=dict
    )

    def broke(self, problem: str) -> None:
        for _, _, on_problem in list(self.followers.values()):
            on_problem(problem)

    async def burst(self, paths: tuple[str, ...]) -> None:
        for belongs, on_burst, _ in list(self.followers.values()):
            mine = tuple(path for path in paths if belongs(path))
            if mine:
                await on_burst(mine)


class EditWatches:
    """The workspace watches of a wave: one per tree, shared by the agents working in it
    (every in-place agent follows the one watch of the repository; each worktree agent
    its own), run in ``group`` while anyone follows them."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self._group = group
        self._trees: dict[str, _Tree] = {}
        self._tokens = itertools.count()

    @contextlib.asynccontextmanager
    async def follow(
        self,
        workspace: Path,
        *,
        belongs: Callable[[str], bool],
        on_burst: OnBurst,
        on_problem: Callable[[str], None],
    ) -> AsyncIterator[None]:
        """Call ``on_burst`` with the paths of each burst in ``workspace`` that
        ``belongs`` accepts, while inside; ``on_problem`` hears why the watch broke."""
        root = os.path.realpath(workspace)  # noqa: ASYNC240 - the key, before any wait
        tree = self._trees.get(root)
        if tree is None:
            tree = self._trees[root] = _Tree()
            self._group.start_soon(self._watch, root, tree)
            await anyio.lowlevel.checkpoint()  # the kernel watches the tree before the agent starts
        token = next(self._tokens)
        tree.followers[token] = (belongs, on_burst, on_problem)
        try:
            yield
        finally:
            del tree.followers[token]
            if not tree.followers and self._trees.get(root) is tree:
                del self._trees[root]
                tree.stop.set()

    async def _watch(self, root: str, tree: _Tree) -> None:
        await watch_edits(
            Path(root),
            belongs=_anywhere,
            on_burst=tree.burst,
            stop=tree.stop,
            on_problem=tree.broke,
        )


def _anywhere(path: str) -> bool:
    return True
