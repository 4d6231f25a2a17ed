"""The ``seawall`` command line. Each command group lives in its own module.

A group module exposes ``register(subparsers)``; it adds its parsers and sets a
``handler`` default: a function taking the parsed namespace and returning an exit code.
Only the module of the command being run is imported and only its parser built
(``COMMANDS`` says which module registers which command; a test keeps it true), and
heavy imports happen inside handlers, so ``seawall hook ...`` and ``--version`` start
fast. ``--help`` and an unknown command build every parser.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from coordinator import faults
from coordinator.errors import SeawallError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "coordinator.cli.plan",
    "coordinator.cli.session",
    "coordinator.cli.worktrees",
    "coordinator.cli.carryover",
    "coordinator.cli.hooks",
    "coordinator.cli.unattended",
    "coordinator.cli.lead",
    "coordinator.cli.replay",
    "coordinator.cli.adapters",
)


COMMANDS: dict[str, str] = {
    "plan": "coordinator.cli.plan",
    "prompt": "coordinator.cli.plan",
    "run": "coordinator.cli.session",
    "demo": "coordinator.cli.session",
    "status": "coordinator.cli.session",
    "resume": "coordinator.cli.session",
    "kill": "coordinator.cli.session",
    "reset": "coordinator.cli.session",
    "wave": "coordinator.cli.session",
    "worktrees": "coordinator.cli.worktrees",
    "carryover": "coordinator.cli.carryover",
    "hook": "coordinator.cli.hooks",
    "hooks": "coordinator.cli.hooks",
    "runner": "coordinator.cli.unattended",
    "next": "coordinator.cli.lead",
    "mcp": "coordinator.cli.lead",
    "replay": "coordinator.cli.replay",
    "adapters": "coordinator.cli.adapters",
}


def _version() -> str:
    from coordinator.version import __version__

    return __version__


class _VersionAction(argparse.Action):
    """``--version``: the version is a constant of the package, no metadata lookup."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"seawall {_version()}")
        parser.exit()


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seawall",
        description=(
            "Run a coding session as waves of coding agents: plan, isolate, scope, "
            "watch, merge, and carry over what is left."
        ),
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    module = COMMANDS.get(argv[0]) if argv else None
    if module is not None:  # build only the parser of the command being run
        parser = build_parser((module,))
    elif argv == ["--version"]:
        parser = build_parser(())
    else:
        parser = build_parser(COMMAND_MODULES)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        faults.arm_from_environment()
        code: int = handler(args)
    except SeawallError as exc:
        print(f"seawall: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("seawall: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`seawall plan | head`)
        sys.stderr.close()
        return 0
    finally:
        faults.disarm()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
