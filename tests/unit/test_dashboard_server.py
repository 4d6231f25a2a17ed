"""``seawall dashboard``'s server over real HTTP, on a session's files written by hand:
the rows are ``seawall watch``'s, only a session's own files are served, stops are
refused unless allowed and asked with the page's token, and the runner's queue is shown
with the session of each item's plan."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from seawall.dashboard.server import DashboardServer, serve
from seawall.dashboard.site import Dashboard, RunnerSource
from seawall.state.live import (
    LiveCounts,
    agent_stop_path,
    live_path,
    read_stop,
    session_stop_path,
    write_live,
)
from seawall.state.store import StateStore
from seawall.unattended.config import load_settings
from seawall.unattended.paths import RunnerPaths
from seawall.unattended.queue import QueueFile
from seawall.watch.rows import read_view
from seawall.watch.screen import COLUMNS, agent_cells
from tests.unit.test_watch_rows import _live, _session

Reply = tuple[int, dict[str, str], bytes]


@contextmanager
def serving(dashboard: Dashboard) -> Iterator[DashboardServer]:
    server = serve(dashboard, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def request(
    server: DashboardServer,
    path: str,
    *,
    method: str = "GET",
    body: object | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def document(server: DashboardServer, path: str) -> Any:
    status, headers, body = request(server, path)
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


def test_a_sessions_rows_are_the_rows_watch_draws(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    started = time.time() - 42.0  # the server reads the clock; no warning depends on it
    live = LiveCounts(task="docs", wave=2, started_at=started, updated_at=started, turns=3)
    write_live(live_path(store.paths, "docs", 2), replace(live, tool_calls=5, last_tool="Bash"))
    transcript = store.paths.agent_dir("docs") / "w2-transcript.jsonl"
    transcript.write_text('{"type": "assistant"}\n')
    with store.lock(), serving(Dashboard(tmp_path)) as server:
        listing = document(server, "/api/sessions")
        shown = document(server, "/api/sessions/demo-1")
        watched = read_view(store)
        status, headers, body = request(server, shown["agents"][1]["transcript"])
    assert [(s["session"], s["phase"], s["running"]) for s in listing["sessions"]] == [
        ("demo-1", "running", 2)
    ]
    assert listing["runner"] is None
    assert (shown["session"], shown["phase"], shown["ended"]) == ("demo-1", "running", False)
    assert shown["columns"] == [name for name, _ in COLUMNS]
    assert shown["spend"] == list(watched.spend())
    assert [w["phase"] for w in shown["waves"]] == ["done", "dispatched"]
    rows = {(row["wave"], row["task"]): row for row in shown["agents"]}
    for agent in watched.agents:
        row = rows[(agent.wave, agent.task)]
        assert (row["state"], row["running"]) == (agent.state, agent.running)
        cells = list(agent_cells(agent))
        if agent.running:  # its elapsed time moved between the two reads
            del row["cells"][3], cells[3]
        assert row["cells"] == cells
    docs = rows[(2, "docs")]
    assert (docs["state"], docs["cells"][:3], docs["cells"][-4:]) == (
        "running",
        ["W2", "docs", "running"],
        ["$0.00", "Bash", "", ""],
    )
    assert docs["elapsed_s"] >= 42.0
    assert rows[(2, "docs")]["transcript"] == "/s/demo-1/agents/docs/w2-transcript.jsonl"
    assert rows[(2, "ui")]["transcript"] == ""  # none written yet
    assert rows[(1, "api")]["diff"] == "/s/demo-1/diff/1/api"
    assert (shown["state_md"], shown["report"], shown["can_stop"]) == (
        "/s/demo-1/STATE.md",
        "",
        False,
    )
    assert status == 200 and body == transcript.read_bytes()
    assert headers["Content-Type"].startswith("text/plain")


def test_only_a_sessions_own_files_are_served(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    (tmp_path / "secret.txt").write_text("not the dashboard's")
    with serving(Dashboard(tmp_path)) as server:
        page = request(server, "/")
        state_md = request(server, "/s/demo-1/STATE.md")
        refused = [
            request(server, path)[0]
            for path in (
                "/s/demo-1/state.json",  # the ledger is not one of the files shown
                "/s/demo-1/..%2F..%2Fsecret.txt",
                "/s/demo-1/../../secret.txt",
                "/s/other/STATE.md",
                "/s/demo-1/diff/1/nobody",
                "/api/sessions/other",
                "/api/sessions/..",
                "/nothing",
            )
        ]
        foreign = request(server, "/api/sessions", headers={"Host": "dashboard.example:80"})
    status, headers, body = page
    assert status == 200 and b'<script src="/dashboard.js"' in body
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "connect-src 'self'" in headers["Content-Security-Policy"]
    assert state_md[0] == 200 and state_md[2] == store.paths.state_md.read_bytes()
    assert refused == [404] * len(refused)
    assert foreign[0] == 421  # a name other than this machine's: another site's page


def test_stops_are_refused_unless_allowed_and_asked_by_the_page(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    _live(store, "docs", turns=1)
    agent_stop = agent_stop_path(store.paths, "docs", 2)
    with store.lock():
        with serving(Dashboard(tmp_path)) as server:
            page = request(server, "/")[2].decode()
            assert f'content="{server.token}"' in page
            read_only = request(
                server,
                "/api/sessions/demo-1/stop",
                method="POST",
                body={"wave": 2, "task": "docs"},
                headers={"X-Seawall-Token": server.token},
            )
        assert read_only[0] == 403 and b"--allow-stop" in read_only[2]
        assert read_stop(agent_stop) is None
        with serving(Dashboard(tmp_path, allow_stop=True)) as server:
            assert document(server, "/api/sessions/demo-1")["can_stop"] is True

            def stop(body: object, token: str = server.token) -> Reply:
                return request(
                    server,
                    "/api/sessions/demo-1/stop",
                    method="POST",
                    body=body,
                    headers={"X-Seawall-Token": token},
                )

            without_token = stop({"wave": 2, "task": "docs"}, token="guessed")
            not_running = stop({"wave": 1, "task": "api"})
            malformed = stop({"task": "docs"})
            assert read_stop(agent_stop) is None
            agent = stop({"wave": 2, "task": "docs"})
            session = stop({})
    assert without_token[0] == 403 and not_running[0] == 403 and malformed[0] == 400
    assert b"W1 api is not running" in not_running[2]
    assert (
        agent[0] == 200 and json.loads(agent[2])["said"] == "asked the coordinator to stop W2 docs"
    )
    asked = read_stop(agent_stop)
    assert asked is not None and asked.describe() == "stopped by the user (seawall dashboard)"
    assert session[0] == 200
    whole = read_stop(session_stop_path(store.paths))
    assert whole is not None and whole.via == "seawall dashboard"


def test_a_stop_of_an_ended_session_is_refused(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    _live(store, "docs", turns=1)
    with serving(Dashboard(tmp_path, allow_stop=True)) as server:  # nobody runs it
        shown = document(server, "/api/sessions/demo-1")
        refused = request(
            server,
            "/api/sessions/demo-1/stop",
            method="POST",
            body={},
            headers={"X-Seawall-Token": server.token},
        )
    assert (shown["phase"], shown["can_stop"]) == ("interrupted", False)
    assert refused[0] == 403 and b"not running (interrupted)" in refused[2]
    assert read_stop(session_stop_path(store.paths)) is None


def test_the_runners_queue_names_the_session_of_each_plan(tmp_path: Path) -> None:
    store, state = _session(tmp_path)
    plan = tmp_path / "nightly.toml"
    plan.write_text('[session]\nname = "nightly"\n')
    state.plan_path = str(plan)
    store.save(state)
    other = tmp_path / "weekly.toml"
    other.write_text('[session]\nname = "weekly"\n')
    runner_dir = tmp_path / "runner"
    queue = QueueFile(RunnerPaths(dir=runner_dir).queue)
    first = queue.enqueue_plan(plan, now=1.0)
    second = queue.enqueue_plan(other, now=2.0)
    runner = RunnerSource(dir=runner_dir, settings=load_settings(runner_dir))
    with serving(Dashboard(tmp_path, runner=runner)) as server:
        listing = document(server, "/api/sessions")
    shown = listing["runner"]
    assert shown["dir"] == str(runner_dir)
    assert [(i["id"], i["state"], i["session"]) for i in shown["items"]] == [
        (first.id, "pending", "demo-1"),
        (second.id, "pending", ""),
    ]
    assert listing["sessions"][0]["plan"] == str(plan)


def test_an_unreadable_ledger_is_listed_as_such(tmp_path: Path) -> None:
    _session(tmp_path)
    broken = StateStore(tmp_path, "broken-1")
    broken.paths.root.mkdir(parents=True)
    broken.paths.state.write_text("{ not json")
    with serving(Dashboard(tmp_path)) as server:
        listing = document(server, "/api/sessions")
        status, _, body = request(server, "/api/sessions/broken-1")
    phases = {s["session"]: (s["phase"], bool(s["note"])) for s in listing["sessions"]}
    assert phases == {"demo-1": ("interrupted", False), "broken-1": ("unreadable", True)}
    assert status == 500 and str(broken.paths.state).encode() in body  # names the file
