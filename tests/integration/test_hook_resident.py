"""The resident decision server: hook calls with no session server.

Each call is the installed ``seawall hook ...`` command, a real process; the first call
with no server decides by itself and starts the server (a real detached process), later
calls are answered by it, and every answer must be the one the call gets when decided in
its own process (``SEAWALL_HOOK_RESIDENT=off``). Each test gives the server a directory
of its own and stops it afterwards. Changing a hook module retires every resident server
of this installation, in any test process, so the test that changes one waits until it
is the only one running a server (a lock, ``hook_sources``).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from seawall.runtime.processes import process_alive
from tests.integration.sessionkit import make_repo
from tests.integration.test_hooks import SEAWALL, agent_env, decision, make_manifest, pre, run_hook
from tests.locks import locked
from tests.waiting import wait_until

NEW = "a new server to hold the lock"
SOURCES_LOCK = Path(__file__).resolve().parents[2] / ".cache" / "locks" / "hook-sources.lock"
INTERPRETER = Path(SEAWALL).read_text(encoding="utf-8").splitlines()[0].removeprefix("#!")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"src/app/x.py": "x = 1\n", "other/y.py": "y = 1\n"})


@pytest.fixture
def hook_sources() -> Iterator[IO[str]]:
    """The hook modules of this installation held as they are (a shared lock) while a
    test's servers run; a test that changes one makes the lock its own first."""
    with locked(SOURCES_LOCK, shared=True) as lock:
        yield lock


@pytest.fixture
def home(hook_sources: IO[str]) -> Iterator[Path]:
    """A private directory for the server's socket (short: a socket path has a limit)."""
    folder = Path(tempfile.mkdtemp(prefix="sw-res-"))
    yield folder
    servers = [pid for pid in map(_pid, folder.glob("*.lock")) if pid and process_alive(pid)]
    for pid in servers:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(map(process_alive, servers)), timeout=30, what="the servers to stop")
    shutil.rmtree(folder, ignore_errors=True)


def _pid(lock: Path) -> int:
    text = lock.read_text(encoding="ascii").strip() if lock.exists() else ""
    return int(text) if text.isdigit() else 0


def _socket(env: dict[str, str]) -> Path:
    """Where the installed command's resident server listens with ``env``."""
    code = "from seawall.hooks.resident import socket_path; print(socket_path())"
    done = subprocess.run(
        [INTERPRETER, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return Path(done.stdout.strip())


def _listening(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _server_pid(path: Path) -> int:
    wait_until(lambda: _listening(path), timeout=30, what="the resident server to listen")
    return _pid(path.with_suffix(".lock"))


def _env(repo: Path, home: Path, **extra: str) -> dict[str, str]:
    return agent_env(
        repo, **{"SEAWALL_HOOK_RESIDENT": str(home), "SEAWALL_HOOK_IDLE": "60", **extra}
    )


def _calls(repo: Path) -> list[dict[str, Any]]:
    return [
        pre(repo, "Edit", {"file_path": str(repo / "src/app/x.py")}),
        pre(repo, "Edit", {"file_path": str(repo / "other/y.py")}),
        pre(repo, "Bash", {"command": "cd src/app && pytest -q | tee out.log"}),
        pre(repo, "Bash", {"command": "echo hi > other/z.txt && git push --force"}),
        pre(repo, "Bash", {"command": "rm -rf /"}),
    ]


def test_the_first_call_starts_a_server_that_answers_the_next_ones_alike(
    repo: Path, home: Path
) -> None:
    make_manifest(repo)
    env = _env(repo, home)
    alone = {**env, "SEAWALL_HOOK_RESIDENT": "off"}
    expected = [run_hook("pre-tool-use", call, alone) for call in _calls(repo)]
    assert [decision(out) for _, out, _ in expected] == [None, "deny", None, "deny", "deny"]
    path = _socket(env)
    assert not path.exists()
    first = run_hook("pre-tool-use", _calls(repo)[1], env)  # no server yet: decided here
    assert first == expected[1]
    pid = _server_pid(path)
    assert pid and pid != os.getpid() and process_alive(pid)
    assert [run_hook("pre-tool-use", call, env) for call in _calls(repo)] == expected
    assert _pid(path.with_suffix(".lock")) == pid  # the same server answered them all
    # a served call imports none of the decision code in the hook's own process
    out, loaded = _modules_after_a_call(env, _calls(repo)[1])
    assert decision(json.loads(out)) == "deny" and loaded == "[]"


def test_a_killed_server_is_replaced_and_no_call_is_lost(repo: Path, home: Path) -> None:
    make_manifest(repo)
    env = _env(repo, home)
    outside = _calls(repo)[1]
    run_hook("pre-tool-use", outside, env)
    path = _socket(env)
    pid = _server_pid(path)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not process_alive(pid), timeout=30, what="the server to die")
    assert path.is_socket() and not _listening(path)  # what a killed server leaves
    code, out, _ = run_hook("pre-tool-use", outside, env)
    assert code == 0 and decision(out) == "deny"  # decided by the call itself
    wait_until(lambda: _pid(path.with_suffix(".lock")) not in (0, pid), timeout=30, what=NEW)
    assert _server_pid(path) != pid
    assert decision(run_hook("pre-tool-use", outside, env)[1]) == "deny"


def test_a_server_whose_code_changed_retires_and_the_call_is_still_decided(
    repo: Path, home: Path, hook_sources: IO[str]
) -> None:
    make_manifest(repo)
    env = _env(repo, home)
    outside = _calls(repo)[1]
    run_hook("pre-tool-use", outside, env)
    path = _socket(env)
    old = _server_pid(path)
    import seawall.hooks.pre_tool_use as module

    source = Path(module.__file__ or "")
    fcntl.flock(hook_sources, fcntl.LOCK_EX)  # the other tests' servers must not retire
    before = source.stat()
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    try:
        code, out, _ = run_hook("pre-tool-use", outside, env)
    finally:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert code == 0 and decision(out) == "deny"
    wait_until(lambda: not process_alive(old), timeout=30, what="the old server to leave")
    wait_until(lambda: _pid(path.with_suffix(".lock")) not in (0, old), timeout=30, what=NEW)


def test_a_directory_others_may_write_is_never_trusted(repo: Path, home: Path) -> None:
    make_manifest(repo)
    env = _env(repo, home)
    path = _socket(env)
    home.chmod(0o777)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as impostor:
        impostor.bind(str(path))
        impostor.listen(8)
        impostor.setblocking(False)
        code, out, _ = run_hook("pre-tool-use", _calls(repo)[1], env)
        assert code == 0 and decision(out) == "deny"
        with pytest.raises(BlockingIOError):
            impostor.accept()  # the call never connected to it
    assert not path.with_suffix(".lock").exists()  # and started no server there


def test_a_server_that_takes_the_call_and_does_not_answer_fails_closed(
    repo: Path, home: Path
) -> None:
    make_manifest(repo)
    env = _env(repo, home)
    path = _socket(env)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as mute:
        mute.bind(str(path))
        mute.listen(8)
        mute.settimeout(30)

        def drop() -> None:
            conn, _ = mute.accept()
            conn.close()

        dropper = threading.Thread(target=drop)
        dropper.start()
        inside = _calls(repo)[0]
        code, out, err = run_hook("pre-tool-use", inside, env)
        dropper.join(30)
    assert (code, out) == (2, None)
    assert f"hook server at {path} did not answer" in err and "refused" in err


def test_an_idle_server_leaves_and_takes_its_socket(repo: Path, home: Path) -> None:
    make_manifest(repo)
    env = _env(repo, home, SEAWALL_HOOK_IDLE="1")
    run_hook("pre-tool-use", _calls(repo)[0], env)
    path = _socket(env)
    pid = _server_pid(path)
    wait_until(lambda: not process_alive(pid), timeout=30, what="the idle server to leave")
    assert not path.exists()
    code, out, _ = run_hook("pre-tool-use", _calls(repo)[1], env)
    assert code == 0 and decision(out) == "deny"


def _modules_after_a_call(env: dict[str, str], payload: dict[str, Any]) -> tuple[str, str]:
    """(stdout, the decision modules loaded in the hook's own process) of one call."""
    probe = (
        "import sys\n"
        "before = set(sys.modules)  # what the interpreter's start-up (an install's .pth) loaded\n"
        "from seawall.cli import main\n"
        "code = main(['hook', 'pre-tool-use'])\n"
        "heavy = ('argparse', 'json', 'dataclasses', 'typing', 'enum', 'pathlib',\n"
        "         'seawall.model', 'seawall.hooks.entry', 'seawall.scope')\n"
        "print(sorted(n for n in heavy if n in sys.modules and n not in before), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [INTERPRETER, "-c", probe], input=json.dumps(payload), env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.stdout, done.stderr.strip().splitlines()[-1]


def test_off_decides_every_call_in_its_own_process(repo: Path, home: Path) -> None:
    make_manifest(repo)
    env = {**_env(repo, home), "SEAWALL_HOOK_RESIDENT": "off"}
    out, loaded = _modules_after_a_call(env, _calls(repo)[1])
    assert decision(json.loads(out)) == "deny"
    assert "seawall.hooks.entry" in loaded and "seawall.scope" in loaded


def _imported(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run(
        [INTERPRETER, "-X", "importtime", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    return done, {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}


def test_the_installed_command_starts_without_re_or_a_parser(tmp_path: Path) -> None:
    """What the command imports beyond what the interpreter's own start-up imports (an
    editable install's import hook loads ``pathlib`` and ``re`` into every process of
    its environment; an installed wheel adds nothing)."""
    _, interpreter = _imported(["-c", "pass"], tmp_path)
    done, loaded = _imported([SEAWALL, "--version"], tmp_path)
    loaded -= interpreter
    assert done.returncode == 0 and done.stdout.startswith("seawall ")
    assert "seawall.cli" in loaded
    assert not loaded & {"re", "argparse", "enum", "importlib.metadata", "seawall.hooks"}


def test_the_started_server_holds_none_of_the_callers_pipes(repo: Path, home: Path) -> None:
    make_manifest(repo)
    read_end, write_end = os.pipe()  # a pipe the caller hands the hook, read to its end
    try:
        done = subprocess.run(
            [SEAWALL, "hook", "pre-tool-use"], input=json.dumps(_calls(repo)[1]),
            env=_env(repo, home), capture_output=True, text=True, timeout=60,
            pass_fds=(write_end,),
        )  # fmt: skip
        os.close(write_end)
        assert decision(json.loads(done.stdout)) == "deny"
        _server_pid(_socket(_env(repo, home)))  # the server runs
        os.set_blocking(read_end, False)
        assert os.read(read_end, 1) == b""  # end of file: no process holds the write end
    finally:
        os.close(read_end)
