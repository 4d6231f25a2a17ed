"""Scope and command enforcement: manifests, path matching, the command policy,
enforcement levels, the pre-dispatch collision check and the post-wave verification.

The session loop calls ``build_manifest``/``write_manifest`` before dispatch,
``plan_collisions`` to split or move an overlapping in-place wave, and
``verify_wave`` (with ``changed_paths``) after it. The Claude Code hooks in
``seawall.hooks`` import the submodules directly, to start fast.
"""

from __future__ import annotations

from seawall.scope.collisions import (
    CollisionReport,
    Overlap,
    OverlapKind,
    check_pair,
    plan_collisions,
)
from seawall.scope.command_policy import CommandContext, CommandFinding, CommandPolicy, FindingKind
from seawall.scope.enforce import FAIL_MATRIX, Decision, ErrorClass, Failure, Verdict
from seawall.scope.manifest import (
    AgentScope,
    ManifestError,
    ScopeManifest,
    build_manifest,
    close_manifest,
    find_manifests,
    load_manifest,
    manifest_path,
    write_manifest,
)
from seawall.scope.matcher import PathVerdict, ScopeMatcher
from seawall.scope.verify import ScopeVerification, changed_paths, verify_changes, verify_wave

__all__ = [
    "FAIL_MATRIX",
    "AgentScope",
    "CollisionReport",
    "CommandContext",
    "CommandFinding",
    "CommandPolicy",
    "Decision",
    "ErrorClass",
    "Failure",
    "FindingKind",
    "ManifestError",
    "Overlap",
    "OverlapKind",
    "PathVerdict",
    "ScopeManifest",
    "ScopeMatcher",
    "ScopeVerification",
    "Verdict",
    "build_manifest",
    "changed_paths",
    "check_pair",
    "close_manifest",
    "find_manifests",
    "load_manifest",
    "manifest_path",
    "plan_collisions",
    "verify_changes",
    "verify_wave",
    "write_manifest",
]
