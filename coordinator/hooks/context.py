"""Which session, wave and agent a hook call belongs to.

Claude Code runs the hooks of every agent with the same settings, so each call must
find out whose call it is. The hook is told, never guesses from where the agent works:
a directory an agent can write (its ``cwd``, anything it created) is never searched
for a manifest. In order:

1. ``SEAWALL_MANIFEST`` set (seawall's runners export it with ``SEAWALL_SESSION``,
   ``SEAWALL_WAVE``, ``SEAWALL_TASK_ID`` and ``SEAWALL_MANIFEST_SHA256`` into every
   agent they start): that manifest file, which must be
   ``<repo>/.seawall/<session>/wave-<n>/scope.json``, whose bytes must have the digest
   given (or, without one, the digest seawall wrote beside it), and the named task.
2. ``SEAWALL_SESSION`` set (by a runner, or in the hook command of a lead's settings,
   ``seawall hook pre-tool-use --session S``): that session's manifest in the
   repository (the named wave, else its newest), checked against the digest beside it.
3. A lead's subagent (the call carries Claude Code's ``agent_id``): the identity line
   of its prompt, ``seawall session <s>, wave <n>, task <t>.``, read from its transcript
   (``seawall.hooks.identity``) names the manifest and the task, so each agent of an
   in-place wave gets its own scope. With ``SEAWALL_SESSION`` set, the line must name
   that session.
4. None of these: the live manifests of the repository (not closed, and written in the
   last 12 hours: an older unclosed one is a crashed session's), newest first. An agent
   whose workspace (a worktree) contains the hook's ``cwd``, or the file an edit
   targets, is that agent; otherwise the newest live manifest applies: its single
   agent, or, for an in-place wave whose agents share one tree, the union of the
   wave's scopes. No live manifest: not a seawall agent (``Failure.NO_SESSION``): no
   scope to check, only the command gate.

A named session whose manifest is missing, corrupt or changed, or a task missing from
it, is a failure of the guard, which ``FAIL_MATRIX`` closes in strict
(``SEAWALL_ENFORCEMENT`` gives the level to apply when no readable manifest says it;
the default is ``strict``).

The repository is ``SEAWALL_REPO``, else ``CLAUDE_PROJECT_DIR`` (the main repository
when that is a worktree, through its ``.git`` file); never a walk up from ``cwd``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.hooks.identity import Identity, subagent_identity
from seawall.model import Enforcement, Isolation
from seawall.sandbox.policy import SCRATCH_PREFIX
from seawall.scope.enforce import Failure
from seawall.scope.manifest import (
    AgentScope,
    ManifestError,
    ScopeManifest,
    find_manifests,
    load_manifest,
    manifest_path,
    validate_session_id,
)
from seawall.scope.matcher import ScopeMatcher

__all__ = [
    "STALE_AFTER_S",
    "HookContext",
    "find_repository",
    "resolve_context",
]

_MAX_MANIFESTS = 32
STALE_AFTER_S = 12 * 3600  # an unclosed manifest this old is a crashed session's, not live


@dataclass(frozen=True, slots=True, kw_only=True)
class HookContext:
    """Whose call this is, the rules that apply, and why the guard cannot judge (if so)."""

    cwd: Path
    repo: Path | None
    enforcement: Enforcement
    manifest: ScopeManifest | None = None
    agent: AgentScope | None = None  # None with a manifest: the wave's union applies
    failure: Failure | None = None
    detail: str = ""
    how: str = "none"  # env | agent_id | cwd | target | newest | none
    scratch: Path | None = None  # the agent's own temporary directory (its runner made it)

    @property
    def session(self) -> str | None:
        return self.manifest.session if self.manifest else None

    @property
    def task_id(self) -> str | None:
        return self.agent.task_id if self.agent else None

    @property
    def shared_tree(self) -> bool:
        return self.manifest is not None and self.manifest.isolation is Isolation.NONE

    def matcher(self) -> ScopeMatcher | None:
        """The scope matcher of this agent (or of the whole wave), None without a manifest."""
        if self.manifest is None:
            return None
        if self.agent is not None:
            grants, workspace = self.agent.paths, Path(self.agent.workspace)
        else:
            grants, workspace = self.manifest.union_paths(), Path(self.manifest.repo)
        return ScopeMatcher(
            grants,
            workspace=workspace,
            session=self.manifest.session,
            state_root=Path(self.manifest.repo),
            agent=self.agent.task_id if self.agent is not None else None,
            scratch=self.scratch,
        )


def resolve_context(payload: Mapping[str, object], env: Mapping[str, str]) -> HookContext:
    """Find the session, wave and agent of a hook call (see the module docstring); the
    agent's own temporary directory is its ``TMPDIR`` when seawall's runner made it."""
    found = _resolve(payload, env)
    scratch = env.get("TMPDIR", "")
    if Path(scratch).name.startswith(SCRATCH_PREFIX) and Path(scratch).is_absolute():
        return replace(found, scratch=Path(scratch))
    return found


def _resolve(payload: Mapping[str, object], env: Mapping[str, str]) -> HookContext:
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and raw_cwd else Path.cwd()
    fallback = _fallback_enforcement(env)
    named = env.get("SEAWALL_MANIFEST", "").strip()
    if named:
        return _from_named_manifest(cwd, Path(named), env, fallback)
    repo = find_repository(env)
    session = env.get("SEAWALL_SESSION", "").strip()
    identity = subagent_identity(payload)
    if identity is not None and repo is not None and not env.get("SEAWALL_TASK_ID"):
        if session and identity.session != session:
            return HookContext(
                cwd=cwd,
                repo=repo,
                enforcement=fallback,
                failure=Failure.UNKNOWN_AGENT,
                detail=f"subagent {identity.agent_id} names session {identity.session!r}, "
                f"not {session!r}",
                how="agent_id",
            )
        return _from_identity(cwd, repo, identity, fallback)
    if session:
        return _from_env(cwd, repo, session, env, fallback)
    if repo is None:
        return HookContext(cwd=cwd, repo=None, enforcement=fallback, failure=Failure.NO_SESSION)
    return _from_manifests(cwd, repo, fallback, target=_edit_target(payload, cwd))


def find_repository(env: Mapping[str, str]) -> Path | None:
    """The repository whose ``.seawall/`` holds the session state, or None.

    ``SEAWALL_REPO``, else ``CLAUDE_PROJECT_DIR`` (the main repository when that is a
    worktree of it).
    """
    if env.get("SEAWALL_REPO"):
        return Path(env["SEAWALL_REPO"])
    project = env.get("CLAUDE_PROJECT_DIR")
    if not project:
        return None
    main = _main_repository(Path(project) / ".git")
    return main if main is not None else Path(project)


def _main_repository(git_file: Path) -> Path | None:
    """The main repository of a worktree, from its ``.git`` file (``gitdir: ...``)."""
    try:
        if not git_file.is_file():
            return None
        text = git_file.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    parts = gitdir.parts
    if "worktrees" in parts:
        index = len(parts) - 1 - parts[::-1].index("worktrees")
        return Path(*parts[: index - 1]) if index >= 2 else None
    return None


def _fallback_enforcement(env: Mapping[str, str]) -> Enforcement:
    try:
        return Enforcement(env.get("SEAWALL_ENFORCEMENT", "strict").strip() or "strict")
    except ValueError:
        return Enforcement.STRICT


def _from_env(
    cwd: Path, repo: Path | None, session: str, env: Mapping[str, str], fallback: Enforcement
) -> HookContext:
    def failed(failure: Failure, detail: str) -> HookContext:
        return HookContext(
            cwd=cwd, repo=repo, enforcement=fallback, failure=failure, detail=detail, how="env"
        )

    if repo is None:
        return failed(Failure.MANIFEST_MISSING, f"no repository with session {session!r} state")
    try:
        validate_session_id(session)
        wave = env.get("SEAWALL_WAVE", "").strip()
        if wave:
            path = manifest_path(repo, session, int(wave))
        else:
            found = find_manifests(repo, session)
            if not found:
                return failed(Failure.MANIFEST_MISSING, f"session {session!r} has no manifest")
            path = found[0]
        if not path.exists():
            return failed(Failure.MANIFEST_MISSING, f"no scope manifest at {path}")
        manifest = load_manifest(path, session=session, digest="")
    except (ManifestError, ConfigurationError, ValueError) as exc:
        return failed(Failure.MANIFEST_CORRUPT, str(exc))
    return _with_task(cwd, repo, manifest, env)


def _from_identity(cwd: Path, repo: Path, identity: Identity, fallback: Enforcement) -> HookContext:
    """The manifest and task a subagent's identity line names; the guard fails (and
    closes in strict) when they are missing: the subagent is seawall's, unjudged."""

    def failed(failure: Failure, detail: str) -> HookContext:
        return HookContext(
            cwd=cwd, repo=repo, enforcement=fallback, failure=failure, detail=detail, how="agent_id"
        )

    try:
        path = manifest_path(repo, validate_session_id(identity.session), identity.wave)
        if not path.exists():
            return failed(Failure.MANIFEST_MISSING, f"no scope manifest at {path}")
        manifest = load_manifest(path, session=identity.session, digest="")
    except (ManifestError, ConfigurationError) as exc:
        return failed(Failure.MANIFEST_CORRUPT, str(exc))
    return _named_task(cwd, repo, manifest, identity.task, "agent_id")


def _edit_target(payload: Mapping[str, object], cwd: Path) -> Path | None:
    """The file an Edit, Write, MultiEdit or NotebookEdit call targets, if any."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        return None
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    return cwd / raw


def _from_named_manifest(
    cwd: Path, path: Path, env: Mapping[str, str], fallback: Enforcement
) -> HookContext:
    """The manifest a runner named, at its one legitimate place, with its digest."""

    def failed(failure: Failure, detail: str, repo: Path | None = None) -> HookContext:
        return HookContext(
            cwd=cwd, repo=repo, enforcement=fallback, failure=failure, detail=detail, how="env"
        )

    parts = path.parts
    shaped = (
        path.is_absolute()
        and len(parts) >= 5
        and parts[-1] == "scope.json"
        and parts[-2].startswith("wave-")
        and parts[-4] == ".seawall"
    )
    if not shaped:
        return failed(Failure.MANIFEST_CORRUPT, f"SEAWALL_MANIFEST {str(path)!r} is not a manifest")
    repo = path.parents[3]
    stated = env.get("SEAWALL_REPO", "").strip()
    if stated and os.path.realpath(stated) != os.path.realpath(repo):
        return failed(Failure.MANIFEST_CORRUPT, f"SEAWALL_MANIFEST {path} is not under {stated}")
    if not path.exists():
        return failed(Failure.MANIFEST_MISSING, f"no scope manifest at {path}", repo)
    session = env.get("SEAWALL_SESSION", "").strip() or None
    try:
        manifest = load_manifest(
            path, session=session, digest=env.get("SEAWALL_MANIFEST_SHA256", "")
        )
    except ManifestError as exc:
        return failed(Failure.MANIFEST_CORRUPT, str(exc), repo)
    return _with_task(cwd, repo, manifest, env)


def _with_task(
    cwd: Path, repo: Path, manifest: ScopeManifest, env: Mapping[str, str]
) -> HookContext:
    task = env.get("SEAWALL_TASK_ID", "").strip()
    if not task:
        return _agent_context(cwd, repo, manifest, _agent_by_cwd(manifest, cwd), "env")
    return _named_task(cwd, repo, manifest, task, "env")


def _named_task(cwd: Path, repo: Path, manifest: ScopeManifest, task: str, how: str) -> HookContext:
    """The context of the task a runner or an identity line names; a task the manifest
    does not have is a guard failure."""
    agent = manifest.agent(task)
    if agent is None:
        return HookContext(
            cwd=cwd,
            repo=repo,
            enforcement=manifest.enforcement,
            manifest=manifest,
            failure=Failure.UNKNOWN_AGENT,
            detail=f"task {task!r} has no scope in wave {manifest.wave}",
            how=how,
        )
    return _agent_context(cwd, repo, manifest, agent, how)


def _from_manifests(
    cwd: Path, repo: Path, fallback: Enforcement, *, target: Path | None = None
) -> HookContext:
    live: list[ScopeManifest] = []
    now = time.time()
    for index, path in enumerate(find_manifests(repo)[:_MAX_MANIFESTS]):
        if _age(path, now) > STALE_AFTER_S:
            break  # newest first: the rest are older still
        try:
            manifest = load_manifest(path, digest="")
        except ManifestError as exc:
            if index == 0:
                return HookContext(
                    cwd=cwd,
                    repo=repo,
                    enforcement=fallback,
                    failure=Failure.MANIFEST_CORRUPT,
                    detail=str(exc),
                    how="newest",
                )
            continue
        if manifest.closed is None:
            live.append(manifest)
    for manifest in live:
        agent = _agent_by_cwd(manifest, cwd, worktrees_only=True)
        if agent is not None:
            return _agent_context(cwd, repo, manifest, agent, "cwd")
    if target is not None:  # a subagent that works from the lead's checkout
        for manifest in live:
            agent = _agent_by_cwd(manifest, target, worktrees_only=True)
            if agent is not None:
                return _agent_context(cwd, repo, manifest, agent, "target")
    if not live:
        return HookContext(cwd=cwd, repo=repo, enforcement=fallback, failure=Failure.NO_SESSION)
    newest = live[0]
    return _agent_context(cwd, repo, newest, _agent_by_cwd(newest, cwd), "newest")


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return float("inf")


def _agent_by_cwd(
    manifest: ScopeManifest, cwd: Path, *, worktrees_only: bool = False
) -> AgentScope | None:
    """The agent whose workspace holds ``cwd`` (the deepest one); None when ambiguous."""
    real = os.path.realpath(cwd)
    repo = os.path.realpath(manifest.repo)
    best: list[AgentScope] = []
    best_len = -1
    for agent in manifest.agents:
        workspace = os.path.realpath(agent.workspace)
        if worktrees_only and workspace == repo:
            continue
        if real == workspace or real.startswith(workspace.rstrip("/") + "/"):
            if len(workspace) > best_len:
                best, best_len = [agent], len(workspace)
            elif len(workspace) == best_len:
                best.append(agent)
    if len(best) == 1:
        return best[0]
    if not worktrees_only and len(manifest.agents) == 1:
        return manifest.agents[0]
    return None


def _agent_context(
    cwd: Path, repo: Path, manifest: ScopeManifest, agent: AgentScope | None, how: str
) -> HookContext:
    return HookContext(
        cwd=cwd,
        repo=repo,
        enforcement=manifest.enforcement,
        manifest=manifest,
        agent=agent,
        how=how,
    )
