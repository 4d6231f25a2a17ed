"""``seawall next`` (the lead agent's one loop step) and ``seawall mcp`` (the MCP server)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.cli.documents import McpDescription

__all__ = ["prepare_for_lead", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    nxt = subparsers.add_parser(
        "next",
        help="the one step a lead agent loops on: prepare, review, or finish",
        description="Step mode in one command. Without --input: prepare the next wave (or "
        "show the wave waiting for review again). With --input (or - for standard input): "
        'review the dispatched wave from {"outputs": {"TASK": "final text"}}, merge it, and '
        'prepare the next. When nothing is left the answer says "done": true. The answer '
        "is JSON (schema seawall.next/1).",
    )
    nxt.add_argument("plan", nargs="?", type=Path, help="the plan file (to start a session)")
    nxt.add_argument(
        "--input",
        help="the outputs document: a file, or - for standard input",
    )
    nxt.add_argument("--json", action="store_true", help="print JSON (the default)")
    nxt.add_argument("--repo", type=Path, default=Path.cwd(), help="the repository (default: here)")
    nxt.add_argument("--session", help="the session id (default: the newest unfinished)")
    nxt.set_defaults(handler=_next)

    mcp = subparsers.add_parser(
        "mcp",
        help="serve seawall's step mode to a lead agent over MCP (stdio)",
        description="A Model Context Protocol server on standard input and output: tools "
        "for plan, next, status, trips, reset and carryovers, and each session's STATE.md "
        "as a resource. Needs the mcp extra: pip install '.[mcp]' in a seawall checkout.",
    )
    mcp.add_argument("--repo", type=Path, default=Path.cwd(), help="the repository (default: here)")
    mcp.add_argument(
        "--json",
        action="store_true",
        help="print what the server offers (name, version, tools, resources) as JSON "
        "(seawall.mcp/1) and exit instead of serving",
    )
    mcp.set_defaults(handler=_mcp)


def _next(args: argparse.Namespace) -> int:
    import anyio

    from seawall.codec import encode_text
    from seawall.exitcodes import ExitCode
    from seawall.lead.open_session import open_for_lead
    from seawall.lead.steps import NextAction, next_step, read_outputs

    data: object | None = None
    if args.input is not None:
        if args.input == "-":
            data = read_outputs(None, sys.stdin.read())
        else:
            data = read_outputs(Path(args.input))
    session = open_for_lead(args.repo, plan=args.plan, session_id=args.session)
    prepare_for_lead(session.repo, session.plan.session.worktree_root)
    answer = anyio.run(next_step, session, data)
    print(encode_text(answer))
    return ExitCode.HALTED if answer.action is NextAction.HALTED else ExitCode.OK


def prepare_for_lead(repo: Path, worktree_root: str) -> None:
    """Add Claude Code's sandbox to the lead's settings when they lack it (see
    ``seawall.hooks.lead_sandbox.ensure_sandbox``); what was done goes to stderr."""
    from seawall.hooks.lead_sandbox import ensure_sandbox

    note = ensure_sandbox(repo, worktree_root=worktree_root or None)
    if note:
        print(note, file=sys.stderr)


def _mcp(args: argparse.Namespace) -> int:
    from seawall.lead.mcp import serve

    if args.json:
        from seawall.codec import encode_text

        print(encode_text(_describe_mcp(Path(args.repo))))
        return 0
    serve(Path(args.repo))
    return 0


def _describe_mcp(repo: Path) -> McpDescription:
    """What the server built for ``repo`` offers, read from the server itself."""
    import anyio

    from seawall.cli.documents import McpDescription, McpResource, McpTool
    from seawall.lead.mcp import build_server

    server = build_server(repo)

    async def listed() -> McpDescription:
        tools = await server.list_tools()
        templates = await server.list_resource_templates()
        return McpDescription(
            name=server.name,
            version=server.version or "",
            instructions=server.instructions or "",
            tools=tuple(
                McpTool(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.input_schema),
                )
                for tool in tools
            ),
            resources=tuple(
                McpResource(
                    uri=template.uri_template,
                    name=template.name,
                    description=template.description or "",
                    mime_type=template.mime_type or "",
                )
                for template in templates
            ),
        )

    return anyio.run(listed)
