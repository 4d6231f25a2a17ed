"""Every kind of record ``events.jsonl`` holds: a closed set, one class per kind.

``TelemetryEvent`` is their union, tagged by the ``event`` key; ``KINDS`` the classes
and ``BY_TAG`` each class by its kind. Every record has ``ts`` and ``session``.

The session (``session_records``):
    ``session_started``, ``session_halted``, ``session_finished``, ``session_killed``,
    ``lead_released``, ``breaker_reset``, ``git_lock_removed``, ``published``,
    ``notify_failed``.
A wave (``wave_records``):
    ``wave_planned``, ``scope_collision``, ``worktree_fallback``, ``worktree_recreated``,
    ``worktree_kept``, ``agent_commits_absorbed``, ``unattributed_changes``,
    ``repo_state_changed``, ``scope_violation``, ``checks``, ``merge_refused``,
    ``merge``, ``recovery``, ``carryover``, ``carryover_closed``,
    ``breaker_not_halting``, ``wave_finished``, ``wave_rebased``.
An agent (``agent_records``):
    ``agent_finished``, ``agent_start_failed``, ``agent_salvaged``, ``orphan_stopped``,
    ``remote_orphans_unchecked``, ``breaker_tripped``, ``stagnation_detected``,
    ``scope_warning``, ``scope_denied``, ``checkpoint_failed``.
"""

from __future__ import annotations

from typing import Final, TypeAlias, get_args

from seawall.telemetry.agent_records import (
    AgentFinished,
    AgentSalvaged,
    AgentStartFailed,
    BreakerTripped,
    CheckpointFailed,
    OrphanStopped,
    RemoteOrphansUnchecked,
    ScopeDenied,
    ScopeWarning,
    StagnationDetected,
)
from seawall.telemetry.base import TelemetryRecord
from seawall.telemetry.session_records import (
    BreakerReset,
    GitLockRemoved,
    LeadReleased,
    NotifyFailed,
    Published,
    SessionFinished,
    SessionHalted,
    SessionKilled,
    SessionStarted,
)
from seawall.telemetry.wave_records import (
    AgentCommitsAbsorbed,
    BreakerNotHalting,
    CarryoverClosed,
    CarryoverFiled,
    ChecksRun,
    MergeRefused,
    RecoveryDecided,
    RepoStateChanged,
    ScopeCollision,
    ScopeViolation,
    UnattributedChanges,
    WaveFinished,
    WaveMerged,
    WavePlanned,
    WaveRebased,
    WorktreeFallback,
    WorktreeKept,
    WorktreeRecreated,
)

__all__ = ["BY_TAG", "KINDS", "TelemetryEvent"]

TelemetryEvent: TypeAlias = (
    SessionStarted
    | SessionHalted
    | SessionFinished
    | SessionKilled
    | LeadReleased
    | BreakerReset
    | GitLockRemoved
    | Published
    | NotifyFailed
    | WavePlanned
    | ScopeCollision
    | WorktreeFallback
    | WorktreeRecreated
    | WorktreeKept
    | AgentCommitsAbsorbed
    | UnattributedChanges
    | RepoStateChanged
    | ScopeViolation
    | ChecksRun
    | MergeRefused
    | WaveMerged
    | RecoveryDecided
    | CarryoverFiled
    | CarryoverClosed
    | BreakerNotHalting
    | WaveFinished
    | WaveRebased
    | AgentFinished
    | AgentStartFailed
    | AgentSalvaged
    | OrphanStopped
    | RemoteOrphansUnchecked
    | BreakerTripped
    | StagnationDetected
    | ScopeWarning
    | ScopeDenied
    | CheckpointFailed
)

KINDS: Final[tuple[type[TelemetryRecord], ...]] = get_args(TelemetryEvent)
BY_TAG: Final[dict[str, type[TelemetryRecord]]] = {
    str(kind.__struct_config__.tag): kind for kind in KINDS
}
