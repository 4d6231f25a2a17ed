"""The command table that lets `seawall CMD` build only CMD's parser stays true."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from seawall.cli import build_parser, main
from seawall.cli.command_table import COMMAND_MODULES, COMMANDS
from seawall.version import __version__


def _registered(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).register(subparsers)
    return set(subparsers.choices)


def test_every_command_is_in_the_table_with_its_module() -> None:
    seen: dict[str, str] = {}
    for module in COMMAND_MODULES:
        for command in _registered(module):
            seen[command] = module
    assert seen == COMMANDS


def test_the_full_parser_has_every_command() -> None:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(actions[0].choices) == set(COMMANDS)


def test_version_needs_no_command_module() -> None:
    code = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from seawall.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('seawall.cli.')\n"
            "             and m not in ('seawall.cli.parsing', 'seawall.cli.command_table')))\n"
            "print('networkx' in sys.modules, 'pygit2' in sys.modules, 'rich' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = code.stdout.splitlines()
    assert lines[0] == f"seawall {__version__}"
    assert lines[1] == "[]"
    assert lines[2] == "False False False"


def test_a_hook_call_builds_only_the_hook_parser() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from seawall.cli import main\n"
            "try:\n    main(['hook', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('seawall.cli.')\n"
            "             and m not in ('seawall.cli.parsing', 'seawall.cli.command_table')))\n"
            "print('networkx' in sys.modules, 'rich' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[-2] == "['seawall.cli.hooks']"
    assert lines[-1] == "False False"


def test_an_unknown_command_still_gets_the_full_usage() -> None:
    try:
        main(["no-such-command"])
    except SystemExit as exc:
        assert exc.code == 2
    else:  # pragma: no cover
        raise AssertionError("an unknown command must be a usage error")


def test_the_installed_version_is_the_constant() -> None:
    from importlib.metadata import version

    assert version("seawall") == __version__
