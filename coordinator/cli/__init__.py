"""The ``seawall`` command line. Each command group lives in its own module.

A group module exposes ``register(subparsers)``; it adds its parsers and sets a
``handler`` default: a function taking the parsed namespace and returning an exit code.
Heavy imports happen inside handlers, so ``seawall hook ...`` starts fast.

With ``--json`` anywhere on the command line, an error is JSON on stdout too:
``{"error": {"type": ..., "message": ..., "exit_code": ...}}`` (and ``path``, ``task``,
``field`` when the error names them), so a lead reading JSON never parses prose.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from coordinator.errors import SeawallError

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "coordinator.cli.plan",
    "coordinator.cli.session",
    "coordinator.cli.wave",
    "coordinator.cli.report",
    "coordinator.cli.worktrees",
    "coordinator.cli.carryover",
    "coordinator.cli.hooks",
    "coordinator.cli.unattended",
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("seawall")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (it costs an import)."""

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
    from coordinator.cli.exits import help_epilog

    parser = _Parser(
        prog="seawall",
        description=(
            "Run a coding session as waves of coding agents: plan, isolate, scope, "
            "watch, merge, and carry over what is left."
        ),
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def _json_error(exc: BaseException, kind: str, code: int) -> int:
    error: dict[str, Any] = {"type": kind, "message": str(exc), "exit_code": code}
    for name in ("path", "task", "field"):
        value = getattr(exc, name, None)
        if value is not None:
            error[name] = str(value)
    print(json.dumps({"error": error}))
    return code


def main(argv: Sequence[str] | None = None) -> int:
    from coordinator.cli import exits

    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    # the hook commands run on every tool call of an agent: build only their parser
    fast = argv[:1] in (["hook"], ["hooks"])
    parser = build_parser(("coordinator.cli.hooks",) if fast else COMMAND_MODULES)
    _Parser.json_errors = as_json
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        return _json_error(exc, "usage", exits.USAGE)
    finally:
        _Parser.json_errors = False
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return exits.USAGE
    try:
        code: int = handler(args)
    except SeawallError as exc:
        if as_json:
            return _json_error(exc, type(exc).__name__, exits.ERROR)
        print(f"seawall: error: {exc}", file=sys.stderr)
        return exits.ERROR
    except KeyboardInterrupt as exc:
        if as_json:
            return _json_error(exc, "interrupted", exits.INTERRUPTED)
        print("seawall: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    except BrokenPipeError:  # the reader went away (`seawall plan | head`)
        sys.stderr.close()
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
