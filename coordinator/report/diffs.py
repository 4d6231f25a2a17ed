"""Each agent's change as a patch file on disk, for the report to link to.

The diff runs from the wave's pinned base to the agent's last commit (its shadow
checkpoint, its ``wip:`` snapshot, or its branch), so an agent that never committed
still has one. A patch already written is not written again.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from seawall.git.repo import safe_component
from seawall.runtime.files import atomic_write_text
from seawall.state.ledger import AgentRecord, SessionState, WaveRecord

__all__ = ["agent_patch", "write_diffs"]


def write_diffs(
    repo: pygit2.Repository, state: SessionState, folder: Path
) -> dict[tuple[int, str], str]:
    """Write ``w<wave>-<task>.diff`` into ``folder``; returns the paths by ``(wave, task)``."""
    written: dict[tuple[int, str], str] = {}
    for wave in state.waves:
        for agent in wave.agents:
            path = folder / f"w{wave.number}-{safe_component(agent.task)}.diff"
            if not path.exists():
                patch = agent_patch(repo, wave, agent)
                if patch is None:
                    continue
                atomic_write_text(path, patch)
            written[(wave.number, agent.task)] = str(path)
    return written


def agent_patch(repo: pygit2.Repository, wave: WaveRecord, agent: AgentRecord) -> str | None:
    """The agent's change so far, from the wave's base to its last commit (a running
    agent's shadow checkpoint included), or None when it has none yet."""
    tip = _tip(repo, wave, agent)
    base = _commit(repo, wave.base)
    if tip is None or base is None:
        return None
    return repo.diff(base, tip).patch or ""


def _tip(repo: pygit2.Repository, wave: WaveRecord, agent: AgentRecord) -> pygit2.Commit | None:
    for rev in (agent.wip, agent.checkpoint):
        commit = _commit(repo, rev)
        if commit is not None:
            return commit
    if agent.branch:
        reference = repo.references.get(f"refs/heads/{agent.branch}")
        if reference is not None:
            return _commit(repo, str(reference.target))
    return None


def _commit(repo: pygit2.Repository, rev: str | None) -> pygit2.Commit | None:
    if not rev:
        return None
    try:
        obj = repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    peeled = obj.peel(pygit2.Commit) if obj is not None else None
    return peeled if isinstance(peeled, pygit2.Commit) else None
