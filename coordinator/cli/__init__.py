"""The ``seawall`` command line. Each command group lives in its own module.

A group module exposes ``register(subparsers)``; it adds its parsers and sets a
``handler`` default: a function taking the parsed namespace and returning an exit code.
Heavy imports happen inside handlers, so ``seawall hook ...`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from coordinator.errors import SeawallError

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "coordinator.cli.plan",
    "coordinator.cli.session",
    "coordinator.cli.worktrees",
    "coordinator.cli.carryover",
    "coordinator.cli.hooks",
    "coordinator.cli.unattended",
    "coordinator.cli.adapters",
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
    # the hook commands run on every tool call of an agent: build only their parser
    fast = argv[:1] in (["hook"], ["hooks"])
    parser = build_parser(("coordinator.cli.hooks",) if fast else COMMAND_MODULES)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
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
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
