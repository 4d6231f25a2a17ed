"""``seawall hook ...`` (the Claude Code hook entry points) and ``seawall hooks install``.

The hook commands run on every tool call: this module imports nothing heavy, and each
handler imports its own module only when it runs. A hook never lets its own failure
through: pre-tool-use fails closed (exit 2) unless ``SEAWALL_ENFORCEMENT`` says warn or
off; post-tool-use and subagent-stop report a failure without blocking.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coordinator.hooks.protocol import HookResponse

HOOK_MODULES = {
    "pre-tool-use": "coordinator.hooks.pre_tool_use",
    "post-tool-use": "coordinator.hooks.post_tool_use",
    "subagent-stop": "coordinator.hooks.subagent_stop",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hook`` and ``hooks`` to the command line."""
    hook = subparsers.add_parser(
        "hook", help="Claude Code hook entry point (reads the hook JSON on stdin)"
    )
    hook.add_argument("event", choices=sorted(HOOK_MODULES), help="the hook event to answer")
    hook.add_argument(
        "--session", default=None, help="the seawall session these hooks serve (a lead's settings)"
    )
    hook.set_defaults(handler=_run_hook)
    hooks = subparsers.add_parser("hooks", help="manage seawall's Claude Code hooks")
    actions = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="add seawall's hooks to .claude/settings.json")
    install.add_argument("--repo", default=".", help="the repository (default: the current one)")
    install.add_argument(
        "--command", default=None, help="the seawall executable the hooks run (default: found)"
    )
    install.add_argument("--session", default=None, help="name this session in the hook commands")
    install.set_defaults(handler=_install)


def _run_hook(args: argparse.Namespace) -> int:
    from coordinator.hooks.protocol import HookInputError, read_payload

    event: str = args.event
    try:
        payload = read_payload(sys.stdin)
        module = importlib.import_module(HOOK_MODULES[event])
        env: dict[str, str] = dict(os.environ)
        if args.session and not env.get("SEAWALL_SESSION"):
            env["SEAWALL_SESSION"] = args.session
        response: HookResponse = module.handle(payload, env)
    except HookInputError as exc:
        response = _failed(event, f"seawall: the hook input cannot be read: {exc}")
    except Exception as exc:  # noqa: BLE001 - a guard that crashes must not let the call through
        response = _failed(event, f"seawall: the {event} hook failed: {exc!r}")
    if response.stdout:
        sys.stdout.write(response.stdout)
        sys.stdout.flush()
    if response.stderr:
        print(response.stderr, file=sys.stderr)
    return response.exit_code


def _failed(event: str, message: str) -> HookResponse:
    from coordinator.hooks.protocol import BLOCK_EXIT, HookResponse

    level = os.environ.get("SEAWALL_ENFORCEMENT", "strict").strip() or "strict"
    if event == "pre-tool-use" and level not in ("warn", "off"):
        return HookResponse(exit_code=BLOCK_EXIT, stderr=message)
    return HookResponse(exit_code=1, stderr=message)


def _install(args: argparse.Namespace) -> int:
    from pathlib import Path

    from coordinator.hooks.install import install_hooks

    result = install_hooks(Path(args.repo), command=args.command, session=args.session)
    state = "updated" if result.changed else "already up to date"
    print(f"{result.path}: {state} ({', '.join(result.events)} -> {result.command} hook ...)")
    return 0
