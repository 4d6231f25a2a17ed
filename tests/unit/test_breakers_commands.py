"""What a shell command is for the breakers: the same command, a verify run, a read."""

from __future__ import annotations

import pytest

from seawall.breakers.commands import command_key, reads_only, verify_run


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("pytest -q -x tests/a.py", "pytest  -x -q 'tests/a.py'", True),
        ('git commit -m "fix it"', "git commit -m 'fix it'", True),
        ("pytest tests/a.py", "pytest tests/b.py", False),
        ("cp a b", "cp b a", False),  # operand order is meaning
        ("make && make test", "make ; make test", True),
    ],
)
def test_the_same_command_whatever_its_spelling(first: str, second: str, same: bool) -> None:
    assert (command_key(first) == command_key(second)) is same


@pytest.mark.parametrize(
    ("command", "verify"),
    [
        ("pytest -q", True),
        ("cd src && pytest -q 2>&1 | tail -5", True),
        ("uv run pytest -x", True),
        ("pytest -q; sed -i s/a/b/ x.py", False),
        ("pytest && pytest", False),  # two runs: not one verify alone
        ("pytest --version", False),
        ("make -n", False),
        ("pytest -q > out.txt", False),
        ("echo pytest", False),
    ],
)
def test_a_verify_run_is_one_verify_command_alone(command: str, verify: bool) -> None:
    assert verify_run(command) is verify


@pytest.mark.parametrize(
    ("command", "reading"),
    [
        ("cat a.py", True),
        ("grep -rn foo src | head -5", True),
        ("git diff --stat && git log -3", True),
        ("sed -n '1,20p' a.py", True),
        ("find . -name '*.py'", True),
        ("sed -i s/a/b/ a.py", False),
        ("find . -name '*.pyc' -delete", False),
        ("echo x > a.py", False),
        ("git commit -m x", False),
        ("python -c 'print(1)'", False),
    ],
)
def test_commands_that_only_read(command: str, reading: bool) -> None:
    assert reads_only(command) is reading
