"""``seawall mcp``: seawall's step mode as a Model Context Protocol server (stdio).

Each tool runs the same ``seawall`` command a person or a shell-driving lead would run,
with ``--json``, in a child process, and answers with that command's JSON: the MCP
server adds no behaviour of its own, so what a lead sees through MCP and through the
command line cannot drift apart, and a failure in one call (an error, even a crash)
leaves the server serving. A command's error is a tool error carrying its message.
``next`` and ``status`` read the command's document into its record (``NextAnswer``,
``SessionStatus``), so a document that does not match is an error here, not the lead's
to find; every answer is a record written by the codec, as text and as structured
content.
The session's STATE.md is a resource, ``seawall://sessions/{session}/STATE.md``.

Needs the ``mcp`` extra (``pip install '.[mcp]'`` in a seawall checkout): the official
MCP SDK.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from seawall.codec import decode, decode_any, encode, encode_text
from seawall.errors import MissingExtraError, StateError
from seawall.lead.steps import NextAnswer
from seawall.session.documents import SessionStatus, ShownStatus
from seawall.version import __version__

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent
except ImportError as exc:
    raise MissingExtraError(package="mcp", extra="mcp", purpose="seawall mcp") from exc

__all__ = [
    "ResetAnswer",
    "TrippedAgent",
    "build_server",
    "read_command",
    "run_command",
    "run_text",
    "serve",
]

T = TypeVar("T")

INSTRUCTIONS = """\
seawall runs a coding session as waves of agents that you dispatch yourself.
Loop: call `next` with the plan path; dispatch every agent of the returned wave with its
prompt, in its workspace; call `next` again with {"TASK": "final message"} as outputs;
repeat until the answer says done. `status` shows the session, `trips` the agents a
breaker stopped, `reset` clears one after review, `carryovers` lists the open issues."""

COMMAND_TIMEOUT_S = 3600.0  # a review merges and runs the checks: allow it time


def run_text(repo: Path, args: list[str], stdin: str | None = None) -> str:
    """Run ``seawall ARGS`` in ``repo`` and return what it printed; raise on failure."""
    done = subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=repo,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        message = _json_error(done.stdout) or done.stderr.strip().removeprefix("seawall: error: ")
        raise StateError(message or f"seawall {' '.join(args)} exited with {done.returncode}")
    return done.stdout


def _json_error(out: str) -> str:
    """The message of a ``{"error": {...}}`` answer (``--json`` errors), else ``""``."""
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    return str(error.get("message", "")) if isinstance(error, dict) else ""


def run_command(repo: Path, args: list[str], stdin: str | None = None) -> object:
    """Run ``seawall ARGS`` in ``repo`` and return its JSON answer; raise on failure."""
    out = run_text(repo, args, stdin)
    try:
        return decode_any(out)
    except ValueError:  # msgspec's DecodeError
        raise StateError(f"seawall {' '.join(args)} printed no JSON: {out[:200]!r}") from None


def read_command(kind: type[T], repo: Path, args: list[str], stdin: str | None = None) -> T:
    """Run ``seawall ARGS`` in ``repo`` and read its JSON answer as a ``kind``; raise on
    failure, and on an answer that is not one (the error names the field)."""
    out = run_text(repo, args, stdin)
    try:
        return decode(out, kind)
    except ValueError as exc:  # msgspec's DecodeError and ValidationError
        raise StateError(f"seawall {' '.join(args)} printed no {kind.__name__}: {exc}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrippedAgent:
    """An agent a breaker stopped: its wave, its task, and why (its summary)."""

    wave: int
    task: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetAnswer:
    """What ``seawall reset --agent`` said about the agent's breaker."""

    agent: str
    message: str


def _answer(document: object) -> CallToolResult:
    """A tool's answer: ``document`` as JSON text and as structured content (an object;
    anything else under ``"result"``, as the MCP SDK wraps a list)."""
    data = decode_any(encode(document))
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(
        content=[TextContent(type="text", text=encode_text(document))],
        structured_content=structured,
    )


def _where(repo: Path, session: str | None) -> list[str]:
    return ["--repo", str(repo), *(["--session", session] if session else [])]


def build_server(repo: Path) -> MCPServer:
    """The MCP server for the repository ``repo``."""
    root = Path(repo).resolve()
    server: MCPServer = MCPServer("seawall", instructions=INSTRUCTIONS, version=__version__)

    def read(kind: type[T], args: list[str], stdin: str | None = None) -> T:
        try:
            return read_command(kind, root, args, stdin)
        except (StateError, subprocess.TimeoutExpired) as exc:
            raise ToolError(str(exc)) from exc

    def passed_on(args: list[str]) -> CallToolResult:
        """The answer of a command whose document the server does not read itself."""
        try:
            return _answer(run_command(root, args))
        except (StateError, subprocess.TimeoutExpired) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="The waves a plan file makes, with isolation and scope per wave.")
    def plan(plan: str) -> CallToolResult:
        return passed_on(["plan", plan, "--json"])

    @server.tool(
        name="next",
        description="One step of the wave loop. Without outputs: prepare the next wave (the "
        "plan path starts a session). With outputs (task id -> the agent's final message): "
        "review and merge the dispatched wave, then prepare the next. Says done when "
        "nothing is left.",
    )
    def next_(
        plan: str | None = None,
        outputs: dict[str, str] | None = None,
        session: str | None = None,
    ) -> CallToolResult:
        args = ["next", *([plan] if plan else []), "--json", *_where(root, session)]
        stdin = None
        if outputs is not None:
            args += ["--input", "-"]
            stdin = json.dumps({"outputs": outputs})
        return _answer(read(NextAnswer, args, stdin))

    @server.tool(description="The session's waves and agents: status, summary, merged, issue.")
    def status(session: str | None = None) -> CallToolResult:
        return _answer(read(SessionStatus, ["status", "--json", *_where(root, session)]))

    @server.tool(description="The agents a breaker stopped (status blocked), with the reason.")
    def trips(session: str | None = None) -> CallToolResult:
        state = read(SessionStatus, ["status", "--json", *_where(root, session)])
        return _answer(
            [
                TrippedAgent(wave=wave.number, task=agent.task, reason=agent.summary)
                for wave in state.waves
                for agent in wave.agents
                if agent.status is ShownStatus.BLOCKED
            ]
        )

    @server.tool(description="Clear an agent's tripped breaker after you reviewed the cause.")
    def reset(agent: str, session: str | None = None) -> CallToolResult:
        try:
            message = run_text(root, ["reset", "--agent", agent, *_where(root, session)])
        except (StateError, subprocess.TimeoutExpired) as exc:
            raise ToolError(str(exc)) from exc
        return _answer(ResetAnswer(agent=agent, message=message.strip()))

    @server.tool(description="The open carryover issues of this repository's tracker.")
    def carryovers() -> CallToolResult:
        return passed_on(["carryover", "list", "--json", "--repo", str(root)])

    @server.resource(
        "seawall://sessions/{session}/STATE.md",
        name="STATE.md",
        description="The session's state, rendered for people.",
        mime_type="text/markdown",
    )
    def state_md(session: str) -> str:
        path = root / ".seawall" / session / "STATE.md"
        if "/" in session or session.startswith(".") or not path.is_file():
            raise ToolError(f"no STATE.md for session {session!r} in {root}/.seawall")
        return path.read_text(encoding="utf-8")

    return server


def serve(repo: Path) -> None:
    """Serve ``repo`` over standard input and output until the client goes away."""
    build_server(repo).run("stdio")
