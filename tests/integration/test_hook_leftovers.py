"""What a killed session's hook server leaves behind, and who removes it.

A session killed with SIGKILL cannot remove its hook server's directory: the directory
stays, holding a socket nobody listens on. The next session's hook server removes such
leftovers, and only those: a live owner's directory, or one holding anything else, stays.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from seawall.hooks.server import PREFIX, remove_leftovers, serve_hooks
from tests.waiting import wait_until

SERVE = """
import sys, anyio
from seawall.hooks.server import serve_hooks
async def main():
    async with serve_hooks() as path:
        print(path, flush=True)
        await anyio.sleep(120)
anyio.run(main)
"""


@pytest.fixture
def root() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="sw-left-"))
    yield folder
    for entry in folder.iterdir():
        for inner in entry.iterdir():
            inner.unlink()
        entry.rmdir()
    folder.rmdir()


def _last_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _dead_socket(folder: Path) -> None:
    folder.mkdir()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(folder / "hooks.sock"))  # closed on leaving: nobody listens


def test_a_killed_sessions_server_directory_is_removed_by_the_next(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, "TMPDIR": str(root)}
    with subprocess.Popen(
        [sys.executable, "-c", SERVE], env=env, stdout=subprocess.PIPE, text=True
    ) as killed:
        assert killed.stdout is not None
        path = Path(killed.stdout.readline().strip())
        assert path.is_socket() and path.parent.parent == root
        assert path.parent.name.startswith(f"{PREFIX}{killed.pid}-")
        killed.send_signal(signal.SIGKILL)
        killed.wait(30)
    assert path.is_socket()  # the leftover: a directory with a dead socket

    async def next_session() -> Path:
        async with serve_hooks() as mine:
            assert not path.parent.exists()
            assert mine.is_socket()
            return mine

    monkeypatch.setattr(tempfile, "tempdir", str(root))  # the next session's temp dir
    mine = anyio.run(next_session)
    assert not mine.parent.exists() and list(root.iterdir()) == []


def test_only_directories_whose_owner_is_gone_are_removed(root: Path) -> None:
    dead = _last_pid()
    # reaped: the pid names no process now
    wait_until(lambda: not Path(f"/proc/{dead}").exists(), timeout=10, what=f"{dead} to be reaped")
    gone = root / f"{PREFIX}{dead}-aaaa"
    _dead_socket(gone)
    empty = root / f"{PREFIX}{dead}-bbbb"  # killed before it listened
    empty.mkdir()
    live = root / f"{PREFIX}{os.getpid()}-cccc"
    _dead_socket(live)
    kept = root / f"{PREFIX}{dead}-dddd"
    _dead_socket(kept)
    (kept / "notes.txt").write_text("not a server's\n", encoding="utf-8")
    unnamed = root / f"{PREFIX}eeee"  # named before names carried an owner
    _dead_socket(unnamed)
    listening = root / f"{PREFIX}ffff"
    listening.mkdir()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as alive:
        alive.bind(str(listening / "hooks.sock"))
        alive.listen(1)
        removed = remove_leftovers(root)
    assert sorted(removed) == sorted([gone, empty, unnamed])
    assert sorted(root.iterdir()) == sorted([live, kept, listening])
