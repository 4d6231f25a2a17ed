"""The lead agent's seat: typed step-mode results, one step command, an MCP server.

A lead agent (Claude Code, Codex, Cursor, a script) runs a session in step mode: it asks
for the next wave (a :class:`PreparedWave`), dispatches the agents with its own tool,
and hands back each agent's final text (reviewed into a :class:`WaveReport`).
``seawall.lead.steps.next_step`` is that loop's single call and checks what the lead
hands back before anything is reviewed; ``seawall.lead.mcp`` serves the same calls
over the Model Context Protocol.
"""

from __future__ import annotations

from seawall.session.step_types import (
    AgentAssignment,
    AgentReview,
    PreparedWave,
    WaveReport,
    load_schema,
)

__all__ = ["AgentAssignment", "AgentReview", "PreparedWave", "WaveReport", "load_schema"]
