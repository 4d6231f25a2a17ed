"""Breakers: per-agent limits and the wave-level breaker.

- ``AgentBreaker``: one agent's eight breakers over its event stream; ``admit`` for
  hook mode, ``saved``/``resumed`` and ``open_breaker`` to keep it between calls.
- ``cleanup_refusal``: the cleanup allowance after a trip (git reads, as the agents'
  git rule allows).
- ``append_blocked``: the session's BLOCKED.md stop note.
- ``error_signature``: the normalizer that tells the same error from a different one.
- ``WaveBreaker``: stall, identical failure, rework storm, cost drift, merge conflict.
"""

from __future__ import annotations

from seawall.breakers.agent import AgentBreaker, BreakerListener, BreakerStatistics
from seawall.breakers.blocked import (
    append_blocked,
    append_blocked_note,
    blocked_note,
    blocked_path,
)
from seawall.breakers.commands import (
    CLEANUP_COMMANDS,
    cleanup_refusal,
    is_verify_command,
    is_wait_command,
)
from seawall.breakers.keys import (
    PAGINATION_ARGS,
    KeyEncoder,
    call_key,
    canonical_json,
    turn_key,
)
from seawall.breakers.signature import error_signature, signature_digest
from seawall.breakers.store import (
    breaker_path,
    load_breaker,
    open_breaker,
    reset_agent_breaker,
    save_breaker,
)
from seawall.breakers.trip import (
    CLEANUP_ALLOWANCE,
    Admission,
    BreakerKind,
    BreakerNotice,
    BreakerState,
    NoticeKind,
    Trip,
)
from seawall.breakers.wave import WaveBreaker, WaveReport, WaveTrigger, WaveTrip

__all__ = [
    "CLEANUP_ALLOWANCE",
    "CLEANUP_COMMANDS",
    "PAGINATION_ARGS",
    "Admission",
    "AgentBreaker",
    "BreakerKind",
    "BreakerListener",
    "BreakerNotice",
    "BreakerState",
    "BreakerStatistics",
    "KeyEncoder",
    "NoticeKind",
    "Trip",
    "WaveBreaker",
    "WaveReport",
    "WaveTrigger",
    "WaveTrip",
    "append_blocked",
    "append_blocked_note",
    "blocked_note",
    "blocked_path",
    "breaker_path",
    "call_key",
    "canonical_json",
    "cleanup_refusal",
    "error_signature",
    "is_verify_command",
    "is_wait_command",
    "load_breaker",
    "open_breaker",
    "reset_agent_breaker",
    "save_breaker",
    "signature_digest",
    "turn_key",
]
