"""Undoing what an agent did to HEAD and to the branches of a local remote.

Both are put back only where nothing is lost: a commit HEAD or a pushed ref pointed at
is first kept on a ref under the wave's quarantine prefix (``refs/seawall/<session>/
quarantine/w<n>/...``). HEAD is restored with ``git checkout``, which refuses rather
than overwrite a file that differs, so the working tree is never clobbered; a refusal
is reported with git's reason. A remote ref is moved back only while it still holds
what the agent pushed, and only when the remote is a repository on a local path;
anything else is reported with the command that restores it by hand.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from seawall.git.repo import run_git

__all__ = ["Undone", "restore_head", "restore_remote_ref"]

Undone = tuple[bool, str | None, str]
"""Whether the change was undone, the quarantine ref that keeps its commit, a note."""


def restore_head(
    repository: pygit2.Repository, before: str | None, after: str | None, quarantine: str
) -> Undone:
    """Put HEAD back at ``before`` (``ref:<branch>`` or a commit id)."""
    saved = None
    if after is not None and not after.startswith("ref:") and after in repository:
        saved = f"{quarantine}/HEAD"
        repository.references.create(saved, pygit2.Oid(hex=after), force=True)
    if before is None:
        return False, saved, "HEAD did not exist before the wave"
    if before.startswith("ref:refs/heads/"):
        target = before.removeprefix("ref:refs/heads/")
        args = ["checkout", "-q", target, "--"]
    elif before.startswith("ref:"):
        return False, saved, f"HEAD pointed at {before.removeprefix('ref:')}, not a branch"
    else:
        target = before
        args = ["checkout", "-q", "--detach", before, "--"]
    if repository.is_bare or not repository.workdir:
        ref = before.removeprefix("ref:")
        if before.startswith("ref:"):
            repository.references.create("HEAD", ref, force=True)
        else:
            repository.references.create("HEAD", pygit2.Oid(hex=before), force=True)
        return True, saved, ""
    done = run_git(args, cwd=Path(repository.workdir), check=False)
    if done.ok:
        return True, saved, ""
    reason = (done.stderr.strip().splitlines() or ["git refused"])[0]
    return False, saved, f"`git checkout {target}` refused ({reason}); HEAD is left where it is"


def restore_remote_ref(
    repository: pygit2.Repository, name: str, before: str | None, after: str | None, quarantine: str
) -> Undone:
    """Put the ref ``name`` (``remote:refs/...``) of a local remote back at ``before``."""
    remote, ref = name.split(":", 1)
    by_hand = (
        f"git push {remote} --delete {ref}"
        if before is None
        else f"git push --force {remote} {before}:{ref}"
    )
    try:
        url = repository.remotes[remote].url or ""
        other = pygit2.Repository(url.removeprefix("file://"))
        current = other.references.get(ref)
        now = None if current is None else str(current.resolve().target)
        if now != after:
            return False, None, f"the remote's {ref} moved again since; by hand: {by_hand}"
        saved = None
        if after is not None:
            saved = f"{quarantine}/remotes/{remote}/{ref.removeprefix('refs/')}"
            keeper = repository if after in repository else other
            keeper.references.create(saved, pygit2.Oid(hex=after), force=True)
            if keeper is other:
                saved = f"{saved} (in the remote)"
        if before is None:
            other.references.delete(ref)
        elif before not in other:
            return False, saved, f"{before[:12]} is no longer in the remote; by hand: {by_hand}"
        else:
            other.references.create(ref, pygit2.Oid(hex=before), force=True)
    except (pygit2.GitError, OSError, KeyError, ValueError) as exc:
        return False, None, f"cannot restore {ref} of {remote}: {exc}; by hand: {by_hand}"
    return True, saved, ""
