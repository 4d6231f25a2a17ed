"""A Ray cluster seawall cannot reach is the environment's failure: `seawall run` and
`seawall resume` halt with exit 8 within the connect deadline, naming the address, and
nothing is carried over. Real ``ray.init`` against a closed port, a TCP server that
accepts and never answers, and a cluster address with nothing listening."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

from tests.integration.sessionkit import make_repo, seawall, status, write_plan

CONNECT_TIMEOUT = 4
REFUSED = "OSError: All connection attempts failed"  # the probe, before ray.init


pytestmark = pytest.mark.slow  # Ray: out of the fast lane, as the other Ray tests


def _closed_port() -> int:
    with socket.socket() as probe:  # bound, then closed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts every connection and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        server.close()


def _run_unreached(tmp_path: Path, address: str, cause: str) -> None:
    repo = make_repo(tmp_path / "repo")
    runner = json.dumps(
        {"inner": "command", "address": address, "connect_timeout": str(CONNECT_TIMEOUT)}
    )
    options = runner.replace('{"', "{ ").replace('": ', " = ").replace(', "', ", ")
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "far"\nisolation = "worktree"',
        tasks=[
            {"id": "a", "prompt": "a", "scope": ["a.txt"]},
            {"id": "b", "prompt": "b", "scope": ["b.txt"]},
        ],
    )
    text = plan.read_text().replace('kind = "command"', f'kind = "ray"\noptions = {options}')
    plan.write_text(text)
    for command in (("run", str(plan)), ("resume",)):
        started = time.monotonic()
        done = seawall(*command, "--repo", str(repo), cwd=repo, timeout=90)
        took = time.monotonic() - started
        said = done.stdout + done.stderr
        assert done.returncode == 8, said
        assert f"cannot reach the Ray cluster at {address}: {cause}" in said, said
        # two agents, one deadline each at most, and the session's own start
        assert took < 2 * CONNECT_TIMEOUT + 30, (took, said)
        data = status(repo)
        assert data["phase"] == "halted" and data["halt"]["reason"] == "agent-start"
        assert address in data["halt"]["detail"]
        assert not (repo / ".seawall" / "issues").exists()  # no carryover, no fix task
        assert [a["task"] for a in data["waves"][0]["agents"]] == ["a", "b"]
        assert len(data["waves"]) == 1


def test_a_ray_client_address_on_a_closed_port_halts_with_exit_8(tmp_path: Path) -> None:
    _run_unreached(tmp_path, f"ray://127.0.0.1:{_closed_port()}", REFUSED)


def test_a_ray_client_server_that_never_answers_halts_within_the_deadline(
    tmp_path: Path, silent_server: int
) -> None:
    _run_unreached(tmp_path, f"ray://127.0.0.1:{silent_server}", "no answer within 4 s")


def test_a_cluster_address_with_nothing_listening_halts_with_exit_8(tmp_path: Path) -> None:
    _run_unreached(tmp_path, "127.0.0.2:6399", REFUSED)
