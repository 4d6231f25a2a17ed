"""The agent's sandbox and scope manifest, carried to a Ray worker and re-rooted there.

On the coordinator, ``pack_scope`` reads the request's sandbox (the paths the agent may
write) and its wave's scope manifest, whose bytes must still have the digest the session
gave: a manifest changed since is refused before the agent starts. On the worker,
``unpack_scope`` checks the bytes against that digest again, re-roots them to the
worker's clone (the agent's workspace there; the state root a directory beside the clone
that the agent's sandbox does not grant) and writes them with a digest of their own, so
the agent's hooks judge the same grants, commands and limits against the worker's paths,
and check the digest on every call as they do locally. The sandbox's paths inside the
coordinator's worktree become the same paths inside the clone; other paths (the plan's
``sandbox_writable``) are kept where the worker has them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from seawall.errors import RunnerError
from seawall.runner import AgentRequest
from seawall.sandbox.policy import SandboxPolicy

__all__ = ["PackedScope", "WorkerScope", "pack_scope", "unpack_scope"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PackedScope:
    """What travels: the sandbox's writable paths and the manifest's bytes and digest."""

    sandbox: tuple[str, ...] | None = None
    sandbox_describe: str = ""
    manifest: bytes | None = None
    manifest_sha256: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerScope:
    """The sandbox and manifest of the agent on the worker, for its ``AgentRequest``."""

    sandbox: SandboxPolicy | None = None
    manifest: Path | None = None
    manifest_sha256: str = ""


def pack_scope(request: AgentRequest) -> PackedScope:
    """The request's sandbox and manifest, ready to travel; ``RunnerError`` when the
    manifest cannot be read or no longer has its digest."""
    sandbox = None
    describe = ""
    if request.sandbox is not None:
        sandbox = tuple(os.path.realpath(path) for path in request.sandbox.writable)
        describe = request.sandbox.describe
    if request.manifest is None:
        return PackedScope(sandbox=sandbox, sandbox_describe=describe)
    try:
        data = Path(request.manifest).read_bytes()
    except OSError as exc:
        raise RunnerError(
            f"task {request.task_id!r}: cannot read the scope manifest {request.manifest}: {exc}"
        ) from exc
    if request.manifest_sha256 and _digest(data) != request.manifest_sha256.strip().lower():
        raise RunnerError(
            f"task {request.task_id!r}: the scope manifest {request.manifest} changed after "
            "seawall wrote it; the agent is not started"
        )
    return PackedScope(
        sandbox=sandbox,
        sandbox_describe=describe,
        manifest=data,
        manifest_sha256=request.manifest_sha256 or _digest(data),
    )


def unpack_scope(
    packed: PackedScope,
    *,
    task_id: str,
    local_root: str,
    clone: Path,
    workspace: Path,
    state_root: Path,
) -> WorkerScope:
    """The agent's sandbox and manifest on this worker (see the module docstring).

    ``local_root`` is the coordinator's worktree, ``clone`` the worker's copy of it,
    ``workspace`` the agent's directory inside the clone, ``state_root`` where the
    re-rooted manifest is written. Raises ``RunnerError`` when the manifest's bytes do
    not have their digest, or it is not a manifest of this agent's session.
    """
    sandbox = None
    if packed.sandbox is not None:
        paths = [_relocated(path, local_root, clone) for path in packed.sandbox]
        kept = tuple(path for path in paths if path.exists())
        sandbox = SandboxPolicy(writable=kept, describe=packed.sandbox_describe)
    if packed.manifest is None:
        return WorkerScope(sandbox=sandbox)
    from seawall.scope.manifest import (
        ManifestError,
        load_manifest,
        manifest_digest,
        manifest_path,
        write_manifest,
    )

    if _digest(packed.manifest) != packed.manifest_sha256.strip().lower():
        raise RunnerError(f"task {task_id!r}: the scope manifest changed on its way to the worker")
    try:
        header = json.loads(packed.manifest)
        path = manifest_path(state_root, str(header["session"]), int(header["wave"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(packed.manifest)
        manifest = load_manifest(path, digest=packed.manifest_sha256)
    except (ManifestError, ValueError, KeyError, TypeError) as exc:
        raise RunnerError(f"task {task_id!r}: the scope manifest is unusable: {exc}") from exc
    agents = tuple(
        replace(agent, workspace=str(workspace)) if agent.task_id == task_id else agent
        for agent in manifest.agents
    )
    written = write_manifest(replace(manifest, repo=str(state_root), agents=agents))
    return WorkerScope(sandbox=sandbox, manifest=written, manifest_sha256=manifest_digest(written))


def _relocated(path: str, local_root: str, clone: Path) -> Path:
    """``path`` inside the coordinator's worktree as the same path inside the clone."""
    here = Path(path)
    root = Path(local_root)
    if here == root or here.is_relative_to(root):
        return clone / here.relative_to(root)
    return here


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
