"""The coordinator's hands on the repository.

Workspaces (a worktree per agent, or in place), shadow checkpoints on private refs,
per-agent history and spiral detection, the sequential in-memory merge with its conflict
policy, checks with bisection, and advancing the target branch without losing work.
"""

from seawall.git.checkpoints import Checkpointer, CheckpointKind, CheckpointMode, save_worktree
from seawall.git.checks import (
    BisectResult,
    CheckResult,
    CheckRun,
    WaveIntegration,
    bisect_merges,
    integrate_wave,
    run_checks,
)
from seawall.git.cleanup import PruneReport, WorktreeInfo, list_worktrees, prune_worktrees
from seawall.git.history import (
    AgentHistory,
    ChangeKind,
    EntryKind,
    FileChange,
    HistoryEntry,
    agent_history,
)
from seawall.git.merge import (
    AgentChange,
    AgentMerge,
    FixTask,
    MergeResult,
    MergeRule,
    MergeStatus,
    Resolution,
    agent_change,
    merge_wave,
)
from seawall.git.repo import (
    BasePin,
    agent_branch,
    checkpoint_ref,
    open_repository,
    pin_base,
    safe_component,
)
from seawall.git.revert import RevertResult, revert_agent
from seawall.git.spiral import SignalKind, SpiralSignal, SpiralVerdict, detect_spiral
from seawall.git.target import AdvanceResult, advance_target, check_user_changes
from seawall.git.workspaces import Workspace, prepare_workspaces, require_clean_worktree

__all__ = [
    "AdvanceResult",
    "AgentChange",
    "AgentHistory",
    "AgentMerge",
    "BasePin",
    "BisectResult",
    "ChangeKind",
    "CheckResult",
    "CheckRun",
    "CheckpointKind",
    "CheckpointMode",
    "Checkpointer",
    "EntryKind",
    "FileChange",
    "FixTask",
    "HistoryEntry",
    "MergeResult",
    "MergeRule",
    "MergeStatus",
    "PruneReport",
    "Resolution",
    "RevertResult",
    "SignalKind",
    "SpiralSignal",
    "SpiralVerdict",
    "WaveIntegration",
    "Workspace",
    "WorktreeInfo",
    "advance_target",
    "agent_branch",
    "agent_change",
    "agent_history",
    "bisect_merges",
    "check_user_changes",
    "checkpoint_ref",
    "detect_spiral",
    "integrate_wave",
    "list_worktrees",
    "merge_wave",
    "open_repository",
    "pin_base",
    "prepare_workspaces",
    "prune_worktrees",
    "require_clean_worktree",
    "revert_agent",
    "run_checks",
    "safe_component",
    "save_worktree",
]
