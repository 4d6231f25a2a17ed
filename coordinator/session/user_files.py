"""The user's own files around an in-place wave.

Before dispatch, the untracked and ignored files of the shared tree are recorded (see
:mod:`seawall.git.baseline`), and those an agent's scope covers are copied onto
``refs/seawall/<session>/user-files-w<n>``, so an agent that overwrites one cannot
lose it. Only what changed during the wave is attributed to agents or set aside
(saved on ``refs/seawall/<session>/unattributed-w<n>``, reported with the command
that restores it) when seawall saw an agent write it; a change no agent was seen making
(the lead's step files, an editor's swap file, a build the user started) is left where
it is and reported, never moved. After the merge, a copied file an unmerged agent's revert left
missing is put back. Some paths are never set aside at all: the agent CLI's
``.claude/`` folder, the plan file and the unattended runner's directory. The empty
mount points Claude Code's sandbox makes while a lead's command runs
(:mod:`seawall.git.mount_points`) are no one's change: never attributed, set aside nor
removed.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from seawall.codec import decode, encode
from seawall.errors import UserFilesInScopeError
from seawall.git.baseline import Baseline, record_baseline, under
from seawall.git.checkpoints import Checkpointer, CheckpointMode
from seawall.git.mount_points import is_mount_point
from seawall.git.repo import dirty_paths, open_repository, repo_relative, workdir
from seawall.git.target import restore_agent_files, restore_path
from seawall.runtime.files import atomic_write_bytes
from seawall.scope.matcher import ScopeMatcher
from seawall.state.ledger import AdoptedRecord, SetAsideRecord, WaveRecord

__all__ = [
    "SetAside",
    "WaveBaselines",
    "adopted_record",
    "baseline_path",
    "dirty_paths_in_scope",
    "kept_paths",
    "put_back_user_files",
    "refuse_user_files",
    "restore_command",
    "restore_set_aside",
    "set_aside_unattributed",
    "take_baseline",
    "user_files_in_scopes",
]

BASELINE_FILE = "baseline.json"


def baseline_path(wave_dir: Path) -> Path:
    return wave_dir / BASELINE_FILE


class WaveBaselines:
    """The baselines of a session's in-place waves, saved in each wave's folder."""

    def __init__(self, repo: Path, session: str, wave_dir: Callable[[int], Path]) -> None:
        self._repo = repo
        self._session = session
        self._wave_dir = wave_dir
        self._known: dict[int, Baseline] = {}

    def take(
        self,
        wave: int,
        *,
        base: str,
        scopes: Sequence[Sequence[str]],
        baseline: Baseline | None = None,
    ) -> Baseline:
        """Record the baseline of ``wave`` now (see :func:`take_baseline`)."""
        self._known[wave] = take_baseline(
            self._repo,
            session=self._session,
            wave=wave,
            base=base,
            scopes=scopes,
            save_to=baseline_path(self._wave_dir(wave)),
            baseline=baseline,
        )
        return self._known[wave]

    def get(self, wave: int) -> Baseline | None:
        """The baseline of ``wave``, or None when none was recorded."""
        if wave not in self._known:
            try:
                data = baseline_path(self._wave_dir(wave)).read_bytes()
            except FileNotFoundError:
                return None
            self._known[wave] = decode(data, Baseline)
        return self._known[wave]


def user_files_in_scopes(
    repo: Path, baseline: Baseline, scopes: Mapping[str, Sequence[str]], *, session: str
) -> dict[str, str]:
    """The user's untracked (not ignored) files inside an in-place task's scope: path ->
    the task whose scope covers it. An agent of that task could overwrite them."""
    ignored = set(baseline.ignored)
    matchers = {
        task: ScopeMatcher(tuple(scope), workspace=repo, session=session)
        for task, scope in scopes.items()
    }
    found: dict[str, str] = {}
    for path in baseline.files():
        if path in ignored:
            continue
        for task, matcher in matchers.items():
            if matcher.matches_relative(path):
                found[path] = task
                break
    return found


def refuse_user_files(found: Mapping[str, str], wave: int) -> UserFilesInScopeError:
    """The error that stops an in-place wave before dispatch, naming each file, its
    task and the three ways on."""
    shown = "; ".join(f"{path} (task {task!r})" for path, task in sorted(found.items())[:10])
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    return UserFilesInScopeError(
        f"wave {wave} works in place, and your untracked file(s) {shown}{more} lie inside "
        "a task's scope, where its agent may overwrite them. Nothing was dispatched. "
        "Commit them, move them out of the scope, or let the wave adopt them (they are "
        "copied first, and the command that writes the copies back is shown): "
        "`seawall resume --adopt-user-files` (`seawall run --adopt-user-files` for a new "
        "session, or `adopt_user_files = true` in [session])",
        tasks=dict(found),
    )


def adopted_record(
    repo: Path, baseline: Baseline, covered: Sequence[str], *, session: str, wave: int
) -> AdoptedRecord | None:
    """What the console, STATE.md, the report and the review JSON say of the user's files
    an in-place wave adopted (copied onto its ``user-files-w<n>`` ref), with the restore
    command."""
    if baseline.copy is None or not covered:
        return None
    ref = f"refs/seawall/{session}/user-files-w{wave}"
    ignored = set(baseline.ignored)
    files = tuple(p for p in covered if p not in ignored)
    kept = tuple(p for p in covered if p in ignored)
    restore = ["git", "-C", str(repo), "restore", f"--source={ref}", "--worktree"]
    command = shlex.join([*restore, "--", *covered])
    return AdoptedRecord(ref=ref, files=files, ignored=kept, restore=command)


def take_baseline(
    repo: Path,
    *,
    session: str,
    wave: int,
    base: str,
    scopes: Sequence[Sequence[str]],
    save_to: Path,
    baseline: Baseline | None = None,
) -> Baseline:
    """Record the tree's untracked and ignored files (or take ``baseline``, recorded
    already); copy those in a scope onto a ref."""

    baseline = record_baseline(repo) if baseline is None else baseline
    matchers = [ScopeMatcher(tuple(scope), workspace=repo, session=session) for scope in scopes]
    covered = [p for p in baseline.files() if any(m.matches_relative(p) for m in matchers)]
    copy = None
    if covered:
        keeper = Checkpointer(
            repo,
            session_id=session,
            task_id=f"user-files-w{wave}",
            base=base,
            mode=CheckpointMode.PATHS,
            dispatch=f"w{wave}",
        )
        copy = keeper.wip("the user's files in an agent's scope, before dispatch", covered)
    baseline = baseline.with_copy(copy)
    save_to.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(save_to, encode(baseline))
    return baseline


def put_back_user_files(repo: Path, baseline: Baseline, paths: Iterable[str]) -> list[str]:
    """Write back copied user files among ``paths`` that are missing now; never overwrite."""
    repository = open_repository(repo)
    tree = baseline.copied(repository)
    if tree is None:
        return []
    root = workdir(repository)
    restored = []
    for path in sorted(set(paths)):
        full = root / path
        if full.exists() or full.is_symlink() or not baseline.predates(path):
            continue
        try:
            tree[path]
        except KeyError:
            continue
        restore_path(repository, root, tree, path)
        restored.append(path)
    return restored


def kept_paths(
    repo: Path, *, plan_path: str, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Paths never set aside: ``.claude/``, the plan file, the runner's directory."""
    env = os.environ if environ is None else environ
    kept = [".claude/"]
    for candidate, folder in ((plan_path, False), (env.get("SEAWALL_RUNNER_DIR", ""), True)):
        if not candidate:
            continue
        relative = repo_relative(repo.resolve(), str(Path(candidate).resolve()))
        if relative is not None:
            kept.append(relative + "/" if folder else relative)
    return kept


def restore_command(repo: Path, session: str, wave: int) -> str:
    """The exact command that puts a wave's set-aside files back."""
    return f"seawall restore --repo {repo} --session {session} --wave {wave}"


def restore_set_aside(repo: Path, aside: SetAsideRecord) -> tuple[list[str], list[str]]:
    """Write a wave's set-aside files back from their ref: (restored, left because a
    file is present there now). Nothing present is ever overwritten."""
    repository = open_repository(repo)
    root = workdir(repository)
    tree = repository.revparse_single(aside.ref).peel(pygit2.Tree)
    restored: list[str] = []
    present: list[str] = []
    for path in aside.files:
        full = root / path
        if full.exists() or full.is_symlink():
            present.append(path)
            continue
        try:
            tree[path]
        except KeyError:
            continue
        restore_path(repository, root, tree, path)
        restored.append(path)
    return restored, present


def dirty_paths_in_scope(
    repo: Path, scope: Sequence[str], *, session: str, baseline: Baseline | None = None
) -> tuple[str, ...]:
    """Files of the main working tree changed during the wave that ``scope`` covers.

    A user file that predates the wave (``baseline``) and still holds what it held then
    is not a change of the wave, and neither is a mount point of Claude Code's sandbox."""

    repository = open_repository(repo)
    root = workdir(repository)
    matcher = ScopeMatcher(tuple(scope), workspace=repo, session=session)
    return tuple(
        sorted(
            p
            for p in dirty_paths(repository)
            if matcher.matches_relative(p)
            and not (baseline is not None and baseline.unchanged(repository, p))
            and not is_mount_point(root, p)
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SetAside:
    """Changes of the shared tree outside every agent's scope: ``files`` (an agent's,
    seen) saved on ``ref`` and removed from the tree, ``left_in_place`` (user files that
    predate the wave, changed by an agent) only copied there, ``outside_scope`` (no agent
    was seen writing them) neither moved nor copied, only reported. ``ref`` is "" when
    nothing was kept on one."""

    ref: str
    files: list[str]
    left_in_place: list[str]
    outside_scope: list[str]

    def record(self, command: str) -> SetAsideRecord:
        """What the ledger, ``status --json`` and the review JSON say about it."""
        return SetAsideRecord(
            ref=self.ref,
            files=tuple(self.files),
            left_in_place=tuple(self.left_in_place),
            restore=command if self.ref else "",
            outside_scope=tuple(self.outside_scope),
        )

    def lines(self, wave: int, command: str) -> list[str]:
        """What the console says about it."""
        lines = []
        if self.files:
            lines.append(
                f"wave {wave}: {len(self.files)} file(s) agents wrote outside every scope "
                f"were set aside on {self.ref}: {', '.join(self.files[:10])}; "
                f"to restore them: {command}"
            )
        if self.left_in_place:
            lines.append(
                f"wave {wave}: your files {', '.join(self.left_in_place[:10])} changed "
                f"during the wave; left in place, a copy is on {self.ref}"
            )
        if self.outside_scope:
            shown = ", ".join(self.outside_scope[:10])
            more = " ..." if len(self.outside_scope) > 10 else ""
            lines.append(
                f"wave {wave}: {len(self.outside_scope)} file(s) changed outside every "
                f"scope by no agent seawall saw (yours, the lead's, a tool's): {shown}{more}; "
                "left in place, not merged"
            )
        return lines


def set_aside_unattributed(
    repo: Path,
    wave: WaveRecord,
    session: str,
    *,
    claimed: set[str],
    seen: Collection[str],
    scopes: Sequence[Sequence[str]],
    baseline: Baseline | None = None,
    kept: Sequence[str] = (),
) -> SetAside | None:
    """Sort the changes of the shared tree that no agent of the wave may own.

    seawall moves only what it saw an agent write: a change in ``seen`` (the files an
    agent's shell commands named as writes) is saved on a ref and reverted; one that
    predates the wave (a user file) is only copied. Every other change outside the
    scopes (``claimed`` ones are the agents' own, judged by the review) is left where it
    is and reported. Paths under ``kept`` and the mount points of Claude Code's sandbox
    are never touched. None when there is nothing to report.
    """

    repository = open_repository(repo)
    root = workdir(repository)
    matchers = [ScopeMatcher(tuple(scope), workspace=repo, session=session) for scope in scopes]
    stray: list[str] = []
    in_place: list[str] = []
    outside: list[str] = []
    for path in sorted(dirty_paths(repository)):
        if path in claimed or under(path, kept) or any(m.matches_relative(path) for m in matchers):
            continue
        if is_mount_point(root, path):
            continue
        if (
            baseline is not None
            and baseline.predates(path)
            and baseline.unchanged(repository, path)
        ):
            continue
        if path not in seen:
            outside.append(path)
        elif baseline is None or not baseline.predates(path):
            stray.append(path)
        else:
            in_place.append(path)
    if not stray and not in_place and not outside:
        return None
    ref = ""
    if stray or in_place:
        keeper = Checkpointer(
            repo,
            session_id=session,
            task_id=f"unattributed-w{wave.number}",
            base=wave.base,
            mode=CheckpointMode.PATHS,
            dispatch=f"w{wave.number}",
        )
        keeper.wip("changes agents made outside every scope in a shared tree", stray + in_place)
        restore_agent_files(repo, wave.base, stray)
        ref = keeper.ref
    return SetAside(ref=ref, files=stray, left_in_place=in_place, outside_scope=outside)
