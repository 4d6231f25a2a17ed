"""Which module registers which command of the ``seawall`` command line (a test keeps
this true: each module registers exactly the commands named for it here)."""

from __future__ import annotations

__all__ = ["COMMANDS", "COMMAND_MODULES"]

COMMAND_MODULES = (
    "seawall.cli.plan",
    "seawall.cli.session",
    "seawall.cli.wave",
    "seawall.cli.report",
    "seawall.cli.worktrees",
    "seawall.cli.restore",
    "seawall.cli.carryover",
    "seawall.cli.hooks",
    "seawall.cli.unattended",
    "seawall.cli.lead",
    "seawall.cli.replay",
    "seawall.cli.adapters",
    "seawall.cli.watch",
    "seawall.cli.dashboard",
)


COMMANDS: dict[str, str] = {
    "plan": "seawall.cli.plan",
    "prompt": "seawall.cli.plan",
    "run": "seawall.cli.session",
    "demo": "seawall.cli.session",
    "status": "seawall.cli.session",
    "resume": "seawall.cli.session",
    "kill": "seawall.cli.session",
    "reset": "seawall.cli.session",
    "wave": "seawall.cli.wave",
    "report": "seawall.cli.report",
    "worktrees": "seawall.cli.worktrees",
    "restore": "seawall.cli.restore",
    "carryover": "seawall.cli.carryover",
    "hook": "seawall.cli.hooks",
    "hooks": "seawall.cli.hooks",
    "runner": "seawall.cli.unattended",
    "next": "seawall.cli.lead",
    "mcp": "seawall.cli.lead",
    "replay": "seawall.cli.replay",
    "adapters": "seawall.cli.adapters",
    "watch": "seawall.cli.watch",
    "dashboard": "seawall.cli.dashboard",
}
