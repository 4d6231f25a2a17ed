"""The lead agent's seat: one step command to loop on, checked input, an MCP server.

A lead agent (Claude Code, Codex, Cursor, a script) runs a session in step mode: it asks
for the next wave, dispatches the agents with its own tool, and hands back each agent's
final text. ``next_step`` is that loop's single call; ``parse_outputs`` checks what the
lead hands back before anything is reviewed; ``coordinator.lead.mcp`` serves the same
calls over the Model Context Protocol.
"""

from __future__ import annotations

from coordinator.lead.steps import NEXT_SCHEMA, next_step, parse_outputs, read_outputs

__all__ = ["NEXT_SCHEMA", "next_step", "parse_outputs", "read_outputs"]
