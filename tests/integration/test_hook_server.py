"""The session's hook server and the tiny ``seawall hook`` client that reaches it.

Each call is the installed ``seawall hook ...`` command, a real process, fed the real
Claude Code hook JSON; with ``SEAWALL_HOOK_SOCKET`` it is answered by a real server on
a Unix socket, and must answer exactly as the same call decided in its own process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal

from seawall.adapters.runners.command import CommandRunner
from seawall.hooks.server import serve_hooks
from seawall.hooks.wire import SOCKET_ENV
from seawall.runner import AgentRequest
from seawall.sandbox.launch import available
from seawall.sandbox.policy import scope_policy
from tests.integration.sessionkit import make_repo, seawall
from tests.integration.test_hooks import (
    SEAWALL,
    SESSION,
    agent_env,
    decision,
    make_manifest,
    post,
    pre,
    run_hook,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"src/app/x.py": "x = 1\n", "other/y.py": "y = 1\n"})


@pytest.fixture
def served() -> Iterator[Path]:
    """A running hook server's socket."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(serve_hooks()) as path,
    ):
        yield path


def calls(repo: Path) -> list[tuple[str, dict[str, Any]]]:
    inside = {"file_path": str(repo / "src/app/x.py"), "old_string": "1", "new_string": "2"}
    return [
        ("pre-tool-use", pre(repo, "Edit", inside)),
        ("pre-tool-use", pre(repo, "Write", {"file_path": str(repo / "other/y.py")})),
        ("pre-tool-use", pre(repo, "Bash", {"command": "rm -rf / && git push --force"})),
        ("pre-tool-use", pre(repo, "Bash", {"command": "cd src/app && pytest -q | tee o.log"})),
        ("pre-tool-use", pre(repo, "Bash", {"command": "echo 'unclosed"})),
        ("post-tool-use", post(repo, "Bash", {"command": "ls"}, {"stdout": "x", "stderr": ""})),
    ]


def test_a_served_call_answers_as_the_call_in_its_own_process(repo: Path, served: Path) -> None:
    make_manifest(repo)
    env = agent_env(repo, SEAWALL_PERMISSIONS="hook")
    for event, payload in calls(repo):
        alone = run_hook(event, payload, env)
        through = run_hook(event, payload, {**env, SOCKET_ENV: str(served)})
        assert through == alone, (event, payload["tool_input"])
    denied = run_hook("pre-tool-use", calls(repo)[1][1], {**env, SOCKET_ENV: str(served)})
    assert decision(denied[1]) == "deny"
    allowed = run_hook("pre-tool-use", calls(repo)[0][1], {**env, SOCKET_ENV: str(served)})
    assert decision(allowed[1]) == "allow"


def test_the_session_named_on_the_command_line_reaches_the_server(repo: Path, served: Path) -> None:
    make_manifest(repo)
    env = {**agent_env(repo), SOCKET_ENV: str(served)}
    del env["SEAWALL_SESSION"]
    payload = json.dumps(calls(repo)[1][1])
    for argv in (["--session", SESSION], [f"--session={SESSION}"]):
        done = subprocess.run(
            [SEAWALL, "hook", "pre-tool-use", *argv],
            input=payload, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert decision(json.loads(done.stdout)) == "deny"


def test_a_lead_s_breaker_trips_through_the_server_and_stays_tripped_on_disk(
    repo: Path, served: Path
) -> None:
    make_manifest(repo)
    env = {**agent_env(repo), SOCKET_ENV: str(served)}
    refused = None
    for i in range(8):
        call = pre(repo, "Bash", {"command": "ls src"}, call_id=f"toolu_{i}")
        _, refused, _ = run_hook("pre-tool-use", call, env)
        if refused is not None:
            break
        result = post(repo, "Bash", {"command": "ls src"}, {"stdout": "app", "stderr": ""})
        result["tool_use_id"] = f"toolu_{i}"
        run_hook("post-tool-use", result, env)
    assert decision(refused) == "deny"
    # the trip was saved, not kept in the server: a call decided alone still sees it
    edit = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py")})
    _, out, _ = run_hook("pre-tool-use", edit, agent_env(repo))
    assert decision(out) == "deny"
    assert out is not None and "tripped" in out["hookSpecificOutput"]["permissionDecisionReason"]


def stopped_server() -> Path:
    async def serve_and_stop() -> Path:
        async with serve_hooks() as path:
            assert path.is_socket()
        return path

    return anyio.run(serve_and_stop)


def test_a_stopped_server_leaves_nothing_and_its_hooks_fail_closed(repo: Path) -> None:
    path = stopped_server()
    assert not path.parent.exists()
    make_manifest(repo)
    env = {**agent_env(repo), SOCKET_ENV: str(path)}
    edit = pre(repo, "Edit", {"file_path": str(repo / "src/app/x.py")})
    code, out, err = run_hook("pre-tool-use", edit, env)
    assert (code, out) == (2, None)
    assert f"hook server at {path} did not answer" in err and "refused" in err
    code, out, err = run_hook("pre-tool-use", edit, {**env, "SEAWALL_ENFORCEMENT": "warn"})
    assert (code, out) == (1, None) and "did not answer" in err  # warn: reported, not refused
    result = post(repo, "Bash", {"command": "ls"}, {"stdout": "", "stderr": ""})
    code, out, err = run_hook("post-tool-use", result, env)
    assert (code, out) == (1, None) and "did not answer" in err


def test_a_socket_nobody_listens_on_fails_closed(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
        bound.bind(str(path))  # the file exists, but no server accepts
        edit = pre(repo, "Edit", {"file_path": str(repo / "src/app/x.py")})
        code, _, err = run_hook("pre-tool-use", edit, {**agent_env(repo), SOCKET_ENV: str(path)})
    assert code == 2 and "Connection refused" in err


def test_a_request_that_is_not_one_is_refused(served: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(served))
        client.sendall(b"GET / HTTP/1.1\r\n\r\n")
        client.shutdown(socket.SHUT_WR)
        answer = b""
        for _ in range(100):
            chunk = client.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"2 0 ") and b"bad hook request" in answer


def test_a_served_call_imports_no_parser_and_no_decision_code(repo: Path, served: Path) -> None:
    make_manifest(repo)
    code = (
        "import sys\n"
        "before = set(sys.modules)  # what the interpreter's start-up (an install's .pth) loaded\n"
        "from seawall.cli import main\n"
        "code = main(['hook', 'pre-tool-use'])\n"
        "heavy = ('argparse', 'json', 'dataclasses', 'typing', 'enum', 'seawall.model',\n"
        "         'seawall.hooks.entry', 'seawall.scope', 'anyio', 'socket')\n"
        "loaded = [n for n in heavy if n in sys.modules and n not in before]\n"
        "print(code, sorted(loaded), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(calls(repo)[1][1]),
        env={**agent_env(repo), SOCKET_ENV: str(served)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert decision(json.loads(done.stdout)) == "deny"
    assert done.stderr.strip().splitlines()[-1] == "0 []"


def test_other_command_lines_are_left_to_the_parser(served: Path) -> None:
    env = {**os.environ, SOCKET_ENV: str(served)}
    done = subprocess.run(
        [SEAWALL, "hook", "pre-tool-use", "--no-such-flag"],
        input="{}", env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "unrecognized arguments: --no-such-flag" in done.stderr


@pytest.mark.skipif(not available(), reason="this kernel has no Landlock")
def test_a_sandboxed_agent_reaches_the_server_but_cannot_touch_its_socket(
    repo: Path, served: Path
) -> None:
    make_manifest(repo)
    payload = json.dumps(pre(repo, "Write", {"file_path": str(repo / "other/y.py")}))
    script = (
        "import os, subprocess, sys\n"
        f"done = subprocess.run([{SEAWALL!r}, 'hook', 'pre-tool-use'], input={payload!r},\n"
        "                      capture_output=True, text=True)\n"
        "print('HOOK', done.returncode, done.stdout.strip())\n"
        "sock = os.environ['SEAWALL_HOOK_SOCKET']\n"
        "for attempt in (lambda: os.unlink(sock), lambda: os.rename(sock, sock + '.x'),\n"
        "                lambda: open(os.path.join(os.path.dirname(sock), 'f'), 'w')):\n"
        "    try:\n"
        "        attempt()\n"
        "        print('CHANGED')\n"
        "    except OSError as exc:\n"
        "        print('REFUSED', exc.errno)\n"
        "print('STATUS: done - checked')\n"
    )
    request = AgentRequest(
        task_id="t1",
        prompt="go",
        workspace=repo,
        session=SESSION,
        env={"CLAUDE_PROJECT_DIR": str(repo), "SEAWALL_PERMISSIONS": "hook"},
        sandbox=scope_policy(repo, ("src/app/",)),
        hook_socket=served,
    )
    runner = CommandRunner([sys.executable, "-c", script])
    result = anyio.run(runner.run, request, lambda event: None)
    lines = result.final_text.splitlines()
    hook = next(line for line in lines if line.startswith("HOOK "))
    assert hook.startswith("HOOK 0 ") and decision(json.loads(hook[len("HOOK 0 ") :])) == "deny"
    assert [line.split()[0] for line in lines if line.split()[0] in ("CHANGED", "REFUSED")] == [
        "REFUSED"
    ] * 3
    assert served.is_socket()


def test_a_session_serves_its_agents_hooks_while_they_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app/x.py": "x = 1\n", "other/y.py": "y = 1\n"})
    seen = tmp_path / "seen.jsonl"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os, subprocess, sys\n"
        "payload = {'session_id': 's', 'cwd': os.getcwd(), 'hook_event_name': 'PreToolUse',\n"
        "           'tool_name': 'Write', 'tool_use_id': 'toolu_1',\n"
        "           'tool_input': {'file_path': os.path.join(os.getcwd(), 'other/y.py')}}\n"
        f"done = subprocess.run([{SEAWALL!r}, 'hook', 'pre-tool-use'],\n"
        "                      input=json.dumps(payload), capture_output=True, text=True)\n"
        f"with open({str(seen)!r}, 'a') as out:\n"
        "    out.write(json.dumps({'socket': os.environ.get('SEAWALL_HOOK_SOCKET', ''),\n"
        "                          'code': done.returncode, 'stdout': done.stdout,\n"
        "                          'stderr': done.stderr}) + '\\n')\n"
        "print('STATUS: done - asked')\n"
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[session]\n"
        'name = "served"\nagent = "agent"\naccept_hooks_only = true\n'
        f"sandbox_writable = [{json.dumps(str(tmp_path))}]\n\n"
        '[runners.agent]\nkind = "command"\n'
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]\n"
        'env = { SEAWALL_PERMISSIONS = "hook" }\n\n'
        '[[task]]\nid = "a"\nprompt = "ask"\nscope = ["src/app/"]\n'
    )
    done = seawall("run", str(plan), cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = [json.loads(line) for line in seen.read_text().splitlines()]
    assert record["socket"], "the agent was not told where its hooks are answered"
    assert record["code"] == 0, record["stderr"]
    assert decision(json.loads(record["stdout"])) == "deny"
    assert not Path(record["socket"]).exists()  # stopped with the wave


def test_a_deep_temporary_directory_still_gets_a_socket_the_kernel_binds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 30)
    deep.mkdir(parents=True)
    monkeypatch.setattr("tempfile.tempdir", str(deep))

    async def serve() -> tuple[Path, bool]:
        async with serve_hooks() as path:
            return path, path.is_socket()

    path, was_socket = anyio.run(serve)
    assert was_socket and len(os.fsencode(path)) <= 107, path
    assert not path.parent.exists()
