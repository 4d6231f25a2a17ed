"""The repository state a wave must leave as it found it: hooks, configuration, refs and
the branches of local remotes.

``snapshot`` records it before dispatch (``.git/hooks/*``, ``.git/config`` and each
worktree's ``config.worktree``, ``info/attributes`` and ``info/exclude``, every ref but
seawall's own (``refs/seawall/`` and the session's agent branches), and the branches of
every remote that is a local path). ``compare`` lists what differs after the wave;
``restore`` puts hooks, configuration, refs, HEAD and the branches of local remotes
back, keeping what an agent planted (files under ``save_dir``, commits on
``refs/seawall/<session>/quarantine/w<n>/...``) so nothing is lost (see
``seawall.scope.undo``); what cannot be undone is reported with the reason and the
command that does it by hand. Each change names the agent that made it when that can be told (a
worktree's own files, a wave of one agent, the one agent whose commands name it), else
every agent that could have.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pygit2

from seawall.codec import decode, encode
from seawall.git.mount_points import is_empty_read_only
from seawall.runtime.files import atomic_write_bytes
from seawall.scope.state_change import ChangeKind, StateChange
from seawall.scope.undo import restore_head, restore_remote_ref

__all__ = [
    "AgentTrace",
    "ChangeKind",
    "RepoState",
    "StateChange",
    "attribute",
    "check_wave_state",
    "compare",
    "load_snapshot",
    "restore",
    "save_snapshot",
    "snapshot",
    "snapshot_path",
]

_FILES = ("config", "info/attributes", "info/exclude")
_MAX_FILE = 1 << 20  # a hook or config file larger than this is recorded by digest only
_MAX_TRANSCRIPT = 4 << 20  # bytes of a transcript searched for who made a change


@dataclass(frozen=True, slots=True)
class RepoState:
    """Files of the git directory (path -> base64 content, mode) and refs (name -> id)."""

    files: Mapping[str, tuple[str, int]]
    refs: Mapping[str, str]
    remote_refs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgentTrace:
    """What is known of one agent: its workspace and the text of its calls."""

    task_id: str
    workspace: Path
    calls: str = ""

    @classmethod
    def of(cls, task_id: str, workspace: str | Path, transcript: Path) -> AgentTrace:
        """An agent's trace, its calls read from the head of its transcript."""
        try:
            with transcript.open("rb") as handle:
                calls = handle.read(_MAX_TRANSCRIPT).decode("utf-8", "replace")
        except OSError:
            calls = ""
        return cls(task_id=task_id, workspace=Path(workspace), calls=calls)


def snapshot(repo: Path, *, session: str) -> RepoState:
    """The state of ``repo``'s git directory that agents must not change."""
    repository = pygit2.Repository(str(repo))
    gitdir = Path(repository.path)
    files: dict[str, tuple[str, int]] = {}
    for path in _watched(gitdir):
        content = _read(path)
        if content is not None:
            files[path.relative_to(gitdir).as_posix()] = (content, path.stat().st_mode & 0o7777)
    return RepoState(
        files=files, refs=_refs(repository, session), remote_refs=_remote_refs(repository)
    )


def _watched(gitdir: Path) -> list[Path]:
    found = [gitdir / name for name in _FILES if (gitdir / name).is_file()]
    hooks = gitdir / "hooks"
    if hooks.is_dir():
        found.extend(sorted(p for p in hooks.iterdir() if p.is_file() or p.is_symlink()))
    worktrees = gitdir / "worktrees"
    if worktrees.is_dir():
        # an empty read-only one is the mount point Claude Code's sandbox makes while a
        # command runs (seawall.git.mount_points), not a configuration
        found.extend(
            sorted(
                path for path in worktrees.glob("*/config.worktree") if not is_empty_read_only(path)
            )
        )
    return found


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink():
            return "link:" + str(path.readlink())
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > _MAX_FILE:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return base64.b64encode(data).decode("ascii")


def _refs(repository: pygit2.Repository, session: str) -> dict[str, str]:
    own = (f"refs/seawall/{session}/", f"refs/heads/seawall/{session}/")
    refs: dict[str, str] = {}
    for name in ("HEAD", *_ref_names(repository, own)):
        reference = repository.references.get(name)
        if reference is None:
            continue
        target = reference.target
        refs[name] = str(target) if isinstance(target, pygit2.Oid) else f"ref:{target}"
    return refs


def _ref_names(repository: pygit2.Repository, own: tuple[str, ...]) -> list[str]:
    """The names of the repository's references outside the ``own`` namespaces.

    Loose references are the files under the git directory's ``refs/``; the folders of
    the ``own`` namespaces are not entered, so seawall's own references (one per agent
    of every wave so far) cost nothing here. Packed ones are the names ``packed-refs``
    lists. References not kept as files there (a linked worktree's git directory, a
    reftable) are listed by libgit2, which reads every one."""
    gitdir = Path(repository.path)
    if (gitdir / "commondir").exists() or (gitdir / "reftable").exists():
        return [name for name in repository.references if not name.startswith(own)]
    skip = {str(gitdir.joinpath(*prefix.strip("/").split("/"))) for prefix in own}
    names: set[str] = set()
    for root, dirs, files in os.walk(gitdir / "refs"):
        dirs[:] = [d for d in dirs if str(Path(root, d)) not in skip]
        base = Path(root).relative_to(gitdir).as_posix()
        names.update(f"{base}/{name}" for name in files if not name.endswith(".lock"))
    try:
        packed = (gitdir / "packed-refs").read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        packed = ""
    for line in packed.splitlines():
        if line and line[0] not in "#^":
            names.add(line.partition(" ")[2])
    return sorted(
        name for name in names if not name.startswith(own) and pygit2.reference_is_valid_name(name)
    )


def _remote_refs(repository: pygit2.Repository) -> dict[str, str]:
    found: dict[str, str] = {}
    for remote in repository.remotes:
        url = remote.url or ""
        path = Path(url.removeprefix("file://"))
        if not path.is_absolute() or not path.exists():
            continue
        try:
            other = pygit2.Repository(str(path))
        except (pygit2.GitError, KeyError):
            continue
        for name in other.references:
            target = other.references[name].target
            if isinstance(target, pygit2.Oid):
                found[f"{remote.name}:{name}"] = str(target)
    return found


def compare(
    before: RepoState, after: RepoState, agents: Sequence[AgentTrace] = ()
) -> list[StateChange]:
    """Every difference between ``before`` and ``after``, each attributed."""
    changes: list[StateChange] = []
    for name in sorted(set(before.files) | set(after.files)):
        old, new = before.files.get(name), after.files.get(name)
        if old != new:
            area = "hook" if name.startswith("hooks/") else "config"
            changes.append(StateChange(area=area, name=name, kind=_kind(old, new)))
    for area, old_refs, new_refs in (
        ("ref", before.refs, after.refs),
        ("remote", before.remote_refs, after.remote_refs),
    ):
        for name in sorted(set(old_refs) | set(new_refs)):
            old_id, new_id = old_refs.get(name), new_refs.get(name)
            if old_id != new_id:
                kind = _kind(old_id, new_id)
                changes.append(
                    StateChange(area=area, name=name, kind=kind, before=old_id, after=new_id)
                )
    return [replace(change, agents=attribute(change, agents)) for change in changes]


def _kind(old: object, new: object) -> ChangeKind:
    if old is None:
        return ChangeKind.ADDED
    return ChangeKind.REMOVED if new is None else ChangeKind.CHANGED


def attribute(change: StateChange, agents: Sequence[AgentTrace]) -> tuple[str, ...]:
    """The agent that made ``change``, or every agent that could have."""
    everyone = tuple(agent.task_id for agent in agents)
    if len(everyone) <= 1:
        return everyone
    if change.name.startswith("worktrees/"):
        owner = change.name.split("/")[1]
        for agent in agents:
            if _worktree_name(agent.workspace) == owner:
                return (agent.task_id,)
    key = change.name.rsplit("/", 1)[-1].split(":", 1)[-1]
    named = tuple(agent.task_id for agent in agents if key and key in agent.calls)
    return named if len(named) == 1 else everyone


def _worktree_name(workspace: Path) -> str | None:
    dotgit = workspace / ".git"
    try:
        text = dotgit.read_text(encoding="utf-8").strip() if dotgit.is_file() else ""
    except OSError:
        return None
    return Path(text.removeprefix("gitdir:").strip()).name if text.startswith("gitdir:") else None


def restore(
    repo: Path,
    before: RepoState,
    changes: Sequence[StateChange],
    *,
    save_dir: Path,
    quarantine_ref: str,
) -> list[StateChange]:
    """Undo ``changes`` in ``repo`` and in its local remotes; return them with what was
    done. HEAD goes first, while the branch it was moved to still exists."""
    repository = pygit2.Repository(str(repo))
    gitdir = Path(repository.path)
    done: dict[int, StateChange] = {}
    order = sorted(range(len(changes)), key=lambda index: changes[index].name != "HEAD")
    for index in order:
        change = changes[index]
        note = ""
        if change.area in ("hook", "config"):
            restored, saved = _restore_file(gitdir, change, before, save_dir)
        elif change.area == "ref" and change.name == "HEAD":
            restored, saved, note = restore_head(
                repository, change.before, change.after, quarantine_ref
            )
        elif change.area == "ref":
            restored, saved = _restore_ref(repository, change, quarantine_ref)
            note = _unseen_push(repository, change.name)
        else:
            restored, saved, note = restore_remote_ref(
                repository, change.name, change.before, change.after, quarantine_ref
            )
        done[index] = replace(change, restored=restored, saved=saved, note=note)
    return [done[index] for index in range(len(changes))]


def _unseen_push(repository: pygit2.Repository, name: str) -> str:
    """What a moved remote-tracking ref of a remote seawall cannot see may mean."""
    if not name.startswith("refs/remotes/"):
        return ""
    remote = name.removeprefix("refs/remotes/").split("/", 1)[0]
    try:
        url = repository.remotes[remote].url or ""
    except (KeyError, ValueError):
        return ""
    if Path(url.removeprefix("file://")).is_absolute():
        return ""  # a local remote: its own refs are compared and restored
    return (
        f"the agent probably pushed to {remote} ({url}), a remote seawall cannot see or "
        "undo: check it there"
    )


def _restore_file(
    gitdir: Path, change: StateChange, before: RepoState, save_dir: Path
) -> tuple[bool, str | None]:
    path = gitdir / change.name
    saved: str | None = None
    if change.kind is not ChangeKind.REMOVED and (path.exists() or path.is_symlink()):
        keep = save_dir / change.name
        keep.parent.mkdir(parents=True, exist_ok=True)
        path.replace(keep)  # the planted version, kept where agents cannot run it
        if not keep.is_symlink():
            keep.chmod(keep.stat().st_mode & 0o666)
        saved = str(keep)
    original = before.files.get(change.name)
    if original is not None:
        content, mode = original
        if content.startswith(("sha256:", "link:")):
            if content.startswith("link:"):
                path.symlink_to(content.removeprefix("link:"))
            return content.startswith("link:"), saved
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(content))
        path.chmod(mode)
    return True, saved


def _restore_ref(
    repository: pygit2.Repository, change: StateChange, quarantine_ref: str
) -> tuple[bool, str | None]:
    saved: str | None = None
    if change.after is not None and not change.after.startswith("ref:"):
        saved = f"{quarantine_ref}/{change.name.removeprefix('refs/')}"
        repository.references.create(saved, pygit2.Oid(hex=change.after), force=True)
    if change.before is None:
        repository.references.delete(change.name)
    elif change.before.startswith("ref:"):
        repository.references.create(change.name, change.before.removeprefix("ref:"), force=True)
    else:
        repository.references.create(change.name, pygit2.Oid(hex=change.before), force=True)
    return True, saved


def _without_ref(state: RepoState, branch: str) -> RepoState:
    name = f"refs/heads/{branch}"
    return replace(state, refs={k: v for k, v in state.refs.items() if k != name})


def save_snapshot(state: RepoState, path: Path) -> None:
    """Keep ``state`` on disk (a crash between dispatch and review loses nothing)."""
    atomic_write_bytes(path, encode(state) + b"\n")


def load_snapshot(path: Path) -> RepoState:
    """Read a snapshot written by ``save_snapshot``."""
    return decode(path.read_bytes(), RepoState)


def snapshot_path(repo: Path, session: str, wave: int) -> Path:
    """Where the snapshot taken before ``wave`` is kept."""
    return Path(repo) / ".seawall" / session / f"wave-{wave}" / "repo-state.json"


def check_wave_state(
    repo: Path,
    *,
    session: str,
    wave: int,
    agents: Sequence[AgentTrace],
    restore_changes: bool,
    target_branch: str | None = None,
) -> list[StateChange]:
    """Compare the repository with the snapshot taken before ``wave``; undo the changes
    when ``restore_changes``. Runs once per wave: the snapshot is then marked checked.

    The ``target_branch`` is the user's: it is never compared here, so never put back.
    A target branch that moved while the wave ran (a user's commit, a reset, a pull)
    halts the merge instead, naming both tips (``seawall resume --rebase``).
    """
    path = snapshot_path(repo, session, wave)
    if not path.exists():
        return []
    before, after = load_snapshot(path), snapshot(repo, session=session)
    if target_branch is not None:
        before, after = _without_ref(before, target_branch), _without_ref(after, target_branch)
    changes = compare(before, after, agents)
    if changes and restore_changes:
        changes = restore(
            repo,
            before,
            changes,
            save_dir=path.parent / "planted",
            quarantine_ref=f"refs/seawall/{session}/quarantine/w{wave}",
        )
    path.replace(path.with_name("repo-state.checked.json"))
    return changes
