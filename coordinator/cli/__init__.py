"""The ``seawall`` command line. Each command group lives in its own module.

A group module exposes ``register(subparsers)``; it adds its parsers and sets a
``handler`` default: a function taking the parsed namespace and returning an exit code.
Only the module of the command being run is imported and only its parser built
(``COMMANDS`` says which module registers which command; a test keeps it true), and
heavy imports happen inside handlers, so ``seawall hook ...`` and ``--version`` start
fast. ``--help`` and an unknown command build every parser.

With ``--json`` anywhere on the command line, an error is JSON on stdout too:
``{"error": {"type": ..., "message": ..., "exit_code": ...}}`` (and ``path``, ``task``,
``field`` when the error names them), so a lead reading JSON never parses prose.
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
    from typing import Any, NoReturn

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "coordinator.cli.plan",
    "coordinator.cli.session",
    "coordinator.cli.wave",
    "coordinator.cli.report",
    "coordinator.cli.worktrees",
    "coordinator.cli.restore",
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
    "wave": "coordinator.cli.wave",
    "report": "coordinator.cli.report",
    "worktrees": "coordinator.cli.worktrees",
    "restore": "coordinator.cli.restore",
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


class _UsageError(Exception):
    """A command line argparse rejected, raised instead of exiting under ``--json``."""


class _Parser(argparse.ArgumentParser):
    """argparse, except that under ``--json`` a usage error is raised, to be printed as JSON."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if _Parser.json_errors:
            raise _UsageError(f"{self.prog}: {message}")
        super().error(message)


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    epilog = None
    if len(modules) > 1:  # the full help ends with the exit codes
        from coordinator.exitcodes import help_epilog

        epilog = help_epilog()
    parser = _Parser(
        prog="seawall",
        description=(
            "Run a coding session as waves of coding agents: plan, isolate, scope, "
            "watch, merge, and carry over what is left."
        ),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def _json_error(exc: BaseException, kind: str, code: int) -> int:
    import json

    error: dict[str, Any] = {"type": kind, "message": str(exc), "exit_code": code}
    for name in ("path", "task", "field"):
        value = getattr(exc, name, None)
        if value is not None:
            error[name] = str(value)
    print(json.dumps({"error": error}))
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    module = COMMANDS.get(argv[0]) if argv else None
    if module is not None:  # build only the parser of the command being run
        parser = build_parser((module,))
    elif argv == ["--version"]:
        parser = build_parser(())
    else:
        parser = build_parser(COMMAND_MODULES)
    _Parser.json_errors = as_json
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        from coordinator.exitcodes import ExitCode

        return _json_error(exc, "usage", ExitCode.USAGE)
    finally:
        _Parser.json_errors = False
    handler = getattr(args, "handler", None)
    if handler is None:
        from coordinator.exitcodes import ExitCode

        parser.print_help()
        return ExitCode.USAGE
    try:
        faults.arm_from_environment()
        code: int = handler(args)
    except SeawallError as exc:
        from coordinator.exitcodes import ExitCode

        if as_json:
            return _json_error(exc, type(exc).__name__, ExitCode.ERROR)
        print(f"seawall: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt as exc:
        from coordinator.exitcodes import ExitCode

        if as_json:
            return _json_error(exc, "interrupted", ExitCode.INTERRUPTED)
        print("seawall: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (`seawall plan | head`)
        sys.stderr.close()
        return 0
    finally:
        faults.disarm()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
