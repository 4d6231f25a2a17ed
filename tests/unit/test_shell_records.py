"""The reader's record helpers give the records the constructors give, every other field
at its default."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import pytest

from seawall.shell.model import (
    Redirect,
    ShellLine,
    SimpleCommand,
    new_command,
    new_line,
    new_redirect,
)


def _same(built: object, constructed: object) -> None:
    assert built == constructed
    assert constructed == built
    assert type(built) is type(constructed)
    assert repr(built) == repr(constructed)
    assert copy.copy(built) == constructed
    assert pickle.loads(pickle.dumps(built)) == constructed
    for item in fields(type(constructed)):  # type: ignore[arg-type]
        assert getattr(built, item.name) == getattr(constructed, item.name), item.name


@pytest.mark.parametrize("fd", [None, 0, 2])
def test_a_built_redirect_is_the_constructed_one(fd: int | None) -> None:
    built = new_redirect(">&", "1", fd)
    constructed = Redirect(op=">&", target="1", fd=fd)
    _same(built, constructed)
    assert hash(built) == hash(constructed)
    assert built.writes_file == constructed.writes_file
    assert built != new_redirect(">", "1", fd)


@pytest.mark.parametrize("subshell", [False, True])
def test_a_built_command_is_the_constructed_one(subshell: bool) -> None:
    redirect = new_redirect(">", "/tmp/log", 2)
    built = new_command(("ls", "-l"), (redirect,), ("A=1",), (False, False), subshell)
    constructed = SimpleCommand(
        argv=("ls", "-l"),
        redirects=(Redirect(op=">", target="/tmp/log", fd=2),),
        assignments=("A=1",),
        dynamic=(False, False),
        subshell=subshell,
    )
    _same(built, constructed)
    assert hash(built) == hash(constructed)
    assert {built: 1}[constructed] == 1
    assert built.name == "ls" and built.written_files == ("/tmp/log",)
    assert replace(built, depth=1) == replace(constructed, depth=1)
    for item in fields(SimpleCommand):  # every field tells two commands apart
        if item.name not in ("argv", "redirects", "assignments", "dynamic", "subshell"):
            assert replace(constructed, **{item.name: _other(item.name)}) != built, item.name


def _other(name: str) -> Any:
    return {"wrappers": ("sudo",), "depth": 1, "opaque": "x", "globs": (True, False),
            "found_in": (".",), "elsewhere": True, "function": True,
            "fed_from": (("src", False),)}[name]  # fmt: skip


def test_a_built_line_is_the_constructed_one() -> None:
    commands = [new_command(("pwd",), (), (), (False,), False)]
    built = new_line(commands, ("A=1",))
    constructed = ShellLine(commands=[SimpleCommand(argv=("pwd",), dynamic=(False,))],
                            assignments=("A=1",))  # fmt: skip
    _same(built, constructed)
    assert built.commands is commands


def test_built_records_stay_frozen() -> None:
    cmd = new_command(("ls",), (), (), (False,), False)
    with pytest.raises(FrozenInstanceError):
        cmd.depth = 3  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        new_redirect("<", "x", None).target = "y"  # type: ignore[misc]
