"""The ``seawall`` command line. Each command group lives in its own module.

A group module exposes ``register(subparsers)``; it adds its parsers and sets a
``handler`` default: a function taking the parsed namespace and returning an exit code.
Only the module of the command being run is imported and only its parser built
(``seawall.cli.command_table.COMMANDS`` says which module registers which command; a test
keeps it true), and
heavy imports happen inside handlers, so ``--version`` starts fast. ``--help`` and an
unknown command build every parser (``seawall.cli.parsing``). ``seawall hook ...``
never builds a parser: the hook client (``seawall.hooks.client``) hands the call to
the session's hook server, or to the user's resident decision server when there is no
session server, and prints its answer (deciding it in its own process when no resident
server runs yet).

With ``--json`` anywhere on the command line, an error is JSON on stdout too:
``{"error": {"type": ..., "message": ..., "exit_code": ...}}`` (and ``path``, ``task``,
``field`` when the error names them), so a lead reading JSON never parses prose.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``modules``' commands (all of them by default)."""
    from seawall.cli.command_table import COMMAND_MODULES
    from seawall.cli.parsing import build_parser

    return build_parser(COMMAND_MODULES if modules is None else modules)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # once per tool call: a hook server answers
        from seawall.hooks.client import run

        code = run(argv)
        if code is not None:
            return code
    if argv == ["--version"]:  # a constant: no parser needed to print it
        from seawall.version import __version__

        print(f"seawall {__version__}")
        return 0
    from seawall.cli.parsing import run_command

    return run_command(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
