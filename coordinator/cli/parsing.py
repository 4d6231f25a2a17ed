"""The command line's parser and the run of one command (see ``seawall.cli``)."""

from __future__ import annotations

import argparse
import importlib
import sys

from seawall.cli.command_table import COMMAND_MODULES, COMMANDS
from seawall.errors import SeawallError
from seawall.runtime import fault_injection as faults

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn


__all__ = ["build_parser", "run_command"]


def _version() -> str:
    from seawall.version import __version__

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
        message = _did_you_mean(message)
        if _Parser.json_errors:
            raise _UsageError(f"{self.prog}: {message}")
        super().error(message)


def _did_you_mean(message: str) -> str:
    """argparse's ``invalid choice: 'rnu' (choose from ...)`` with the likely intent."""
    import re

    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return message
    choices = re.findall(r"'([^']*)'|([\w-]+)", found.group(2))
    names = [quoted or bare for quoted, bare in choices]
    import difflib

    close = difflib.get_close_matches(found.group(1), names, n=1)
    return f"{message}; did you mean {close[0]!r}?" if close else message


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    epilog = None
    if len(modules) > 1:  # the full help ends with the exit codes
        from seawall.exitcodes import help_epilog

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
    """``exc`` as a ``seawall.error/1`` document on standard output; ``code``."""
    from msgspec import UNSET

    from seawall.cli.documents import ErrorDetail, ErrorDocument
    from seawall.codec import encode_text
    from seawall.errors import error_code

    def named(*names: str) -> Any:
        for name in names:
            value = getattr(exc, name, None)
            if value is not None:
                return value if isinstance(value, int) else str(value)
        return UNSET

    error = ErrorDetail(
        code=getattr(exc, "code", None) or error_code(kind),
        type=kind,
        message=str(exc),
        exit_code=code,
        file=named("path", "file"),
        line=named("line"),
        column=named("column"),
        task=named("task"),
        field=named("field"),
        hint=named("hint"),
    )
    print(encode_text(ErrorDocument(error=error), indent=None))
    return code


ANSWERS_IN_JSON = (("next",), ("wave", "prepare"), ("wave", "review"), ("wave", "finish"))
"""The commands whose answer is JSON without ``--json``: their errors are JSON too (on
stdout, and as prose on stderr, for a person reading the terminal)."""


def _wants_json(argv: list[str]) -> bool:
    if "--json" in argv:
        return True
    words = [arg for arg in argv if not arg.startswith("-")]
    return any(tuple(words[: len(command)]) == command for command in ANSWERS_IN_JSON)


def run_command(argv: list[str]) -> int:
    """Parse ``argv`` and run its command's handler; the exit code."""
    as_json = _wants_json(argv)
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
        from seawall.exitcodes import ExitCode

        return _json_error(exc, "usage", ExitCode.USAGE)
    finally:
        _Parser.json_errors = False
    handler = getattr(args, "handler", None)
    if handler is None:
        from seawall.exitcodes import ExitCode

        parser.print_help()
        return ExitCode.USAGE
    try:
        faults.arm_from_environment()
        code: int = handler(args)
    except SeawallError as exc:
        from seawall.exitcodes import ExitCode

        if as_json:
            if "--json" not in argv:  # JSON by default: the prose for a person too
                print(f"seawall: error: {exc}", file=sys.stderr)
            return _json_error(exc, type(exc).__name__, ExitCode.ERROR)
        print(f"seawall: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt as exc:
        from seawall.exitcodes import ExitCode

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
