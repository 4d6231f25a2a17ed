"""The installed ``seawall hook ...`` commands, fed real-format Claude Code hook JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.model import CommandPolicyConfig, Enforcement, Isolation, Task, Wave
from seawall.scope.enforce import Decision
from seawall.scope.manifest import build_manifest, manifest_path, write_manifest
from seawall.telemetry import AgentFinished, FinishSource, ScopeDenied, ScopeWarning, read_events

SEAWALL = str(Path(sys.executable).with_name("seawall"))
SESSION = "sess-1"


def git(cwd: Path, *args: str) -> str:
    env = {**_base_env(cwd), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src/app").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "src/app/x.py").write_text("x = 1\n")
    (root / "other/y.py").write_text("y = 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def make_manifest(
    repo: Path,
    enforcement: Enforcement = Enforcement.STRICT,
    *,
    workspaces: dict[str, Path] | None = None,
    commands: CommandPolicyConfig | None = None,
    base: str | None = None,
    session: str = SESSION,
) -> Path:
    wave = Wave(
        number=1,
        tasks=(
            Task(id="t1", prompt="a", scope=("src/app/",)),
            Task(id="t2", prompt="b", scope=("docs/",)),
        ),
        isolation=Isolation.NONE if not workspaces else Isolation.WORKTREE,
        enforcement=enforcement,
        max_turns=15,
    )
    manifest = build_manifest(
        session=session, wave=wave, repo=repo, workspaces=workspaces, commands=commands, base=base
    )
    return write_manifest(manifest)


def run_hook(
    event: str, payload: dict[str, Any], env: dict[str, str], *, raw: str | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    done = subprocess.run(
        [SEAWALL, "hook", event],
        input=raw if raw is not None else json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, out, done.stderr


def pre(
    cwd: Path, tool: str, tool_input: dict[str, Any], *, call_id: str = "toolu_01"
) -> dict[str, Any]:
    return {
        "session_id": "cc-123",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": call_id,
    }


def agent_env(repo: Path, task: str = "t1", **extra: str) -> dict[str, str]:
    return {**project_env(repo), "SEAWALL_SESSION": SESSION, "SEAWALL_TASK_ID": task, **extra}


def project_env(repo: Path) -> dict[str, str]:
    """What Claude Code gives every hook: the project directory it was started in."""
    return {**_base_env(repo), "CLAUDE_PROJECT_DIR": str(repo)}


def decision(out: dict[str, Any] | None) -> str | None:
    if out is None:
        return None
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    value = specific.get("permissionDecision")
    return value if isinstance(value, str) else None


def test_edit_in_scope_passes_and_out_of_scope_is_denied(repo: Path) -> None:
    make_manifest(repo)
    env = agent_env(repo)
    edit = {"file_path": str(repo / "src/app/x.py"), "old_string": "1", "new_string": "2"}
    code, out, _ = run_hook("pre-tool-use", pre(repo, "Edit", edit), env)
    assert (code, out) == (0, None)
    code, out, _ = run_hook(
        "pre-tool-use",
        pre(repo, "Write", {"file_path": str(repo / "other/y.py"), "content": ""}),
        env,
    )
    assert code == 0 and decision(out) == "deny"
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("seawall scope-denied: other/y.py is outside this task's file scope")
    (record,) = read_events(repo / ".seawall" / SESSION / "events.jsonl")
    assert isinstance(record, ScopeDenied) and record.task == "t1" and record.tool == "Write"
    assert record.decision is Decision.DENY and record.session == SESSION


@pytest.mark.parametrize("tool", ["MultiEdit", "NotebookEdit"])
def test_every_file_tool_is_checked(repo: Path, tool: str) -> None:
    make_manifest(repo)
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    _, out, _ = run_hook(
        "pre-tool-use", pre(repo, tool, {key: str(repo / "other/n.ipynb")}), agent_env(repo)
    )
    assert decision(out) == "deny"
    _, out, _ = run_hook(
        "pre-tool-use", pre(repo, tool, {key: str(repo / "src/app/n.ipynb")}), agent_env(repo)
    )
    assert out is None


def test_warn_allows_tells_the_agent_and_records(repo: Path) -> None:
    make_manifest(repo, Enforcement.WARN)
    code, out, _ = run_hook(
        "pre-tool-use", pre(repo, "Write", {"file_path": str(repo / "other/y.py")}), agent_env(repo)
    )
    assert code == 0 and out is not None
    specific = out["hookSpecificOutput"]
    assert "permissionDecision" not in specific
    assert specific["additionalContext"].startswith("seawall scope-denied (warning)")
    (record,) = read_events(repo / ".seawall" / SESSION / "events.jsonl")
    assert isinstance(record, ScopeWarning) and record.decision is Decision.WARN


def test_off_allows_silently(repo: Path) -> None:
    make_manifest(repo, Enforcement.OFF)
    code, out, _ = run_hook(
        "pre-tool-use", pre(repo, "Write", {"file_path": str(repo / "other/y.py")}), agent_env(repo)
    )
    assert (code, out) == (0, None)


@pytest.mark.parametrize(
    ("denied", "twin"),
    [
        ("echo x > other/y.py", "echo x > src/app/y.py"),
        ("cd other && echo x > y.py", "cd src/app && echo x > y.py"),
        ("(cd src/app) ; echo x > y.py", "(cd src/app) ; echo x > src/app/y.py"),
        ("cp src/app/x.py other/", "cp other/y.py src/app/"),
        ("sed -i s/1/2/ other/y.py", "sed -i s/1/2/ src/app/x.py"),
        ("rm other/y.py", "rm src/app/x.py"),
        ("echo x | tee other/log", "echo x | tee src/app/log"),
        ("echo x > $OUT", "echo x > src/app/out.txt"),
        ("bash -c 'echo x > other/y.py'", "bash -c 'echo x > src/app/y.py'"),
        ("git push --force", "git status"),
        ("git stash", "git stash list"),
        ("git checkout -- other/y.py", "git diff -- src/app/x.py"),
        ("echo 'unbalanced", "echo 'balanced'"),
    ],
)
def test_bash_writes_and_commands_in_strict(repo: Path, denied: str, twin: str) -> None:
    make_manifest(repo)
    env = agent_env(repo)
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Bash", {"command": denied}), env)
    assert decision(out) == "deny", denied
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Bash", {"command": twin}), env)
    assert out is None, (twin, out)


def test_command_denial_has_the_command_blocked_class(repo: Path) -> None:
    make_manifest(repo, commands=CommandPolicyConfig(deny=("npm publish",)))
    _, out, _ = run_hook(
        "pre-tool-use", pre(repo, "Bash", {"command": "npm ci && npm publish"}), agent_env(repo)
    )
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("seawall command-blocked: `npm publish`: the plan denies it")


def test_outside_a_session_only_the_gate_is_armed(tmp_path: Path) -> None:
    env = _base_env(tmp_path)
    _, out, _ = run_hook(
        "pre-tool-use", pre(tmp_path, "Bash", {"command": "git reset --hard"}), env
    )
    assert decision(out) == "deny"
    _, out, _ = run_hook("pre-tool-use", pre(tmp_path, "Bash", {"command": "echo x > /tmp/f"}), env)
    assert out is None
    _, out, _ = run_hook("pre-tool-use", pre(tmp_path, "Write", {"file_path": "/etc/x"}), env)
    assert out is None


def test_corrupt_manifest_fails_closed_in_strict(repo: Path) -> None:
    path = manifest_path(repo, SESSION, 1)
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    payload = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py")})
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo))
    assert decision(out) == "deny"
    bash = pre(repo, "Bash", {"command": "echo x > src/app/x.py"})
    _, out, _ = run_hook("pre-tool-use", bash, agent_env(repo))
    assert decision(out) == "deny"  # a write from Bash cannot be judged either
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Bash", {"command": "ls"}), agent_env(repo))
    assert out is None  # nothing is written, nothing is denied
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo, SEAWALL_ENFORCEMENT="warn"))
    assert out is not None and "additionalContext" in out["hookSpecificOutput"]
    # without a named session the newest manifest is the guess, and it is corrupt too
    _, out, _ = run_hook("pre-tool-use", payload, project_env(repo))
    assert decision(out) == "deny"


def test_a_manifest_of_another_session_never_applies(repo: Path) -> None:
    make_manifest(repo, session="theirs")
    foreign = manifest_path(repo, "theirs", 1)
    mine = manifest_path(repo, SESSION, 1)
    mine.parent.mkdir(parents=True)
    mine.write_text(foreign.read_text())  # a copy still names session "theirs"
    payload = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py")})
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo))
    assert decision(out) == "deny"


def test_unknown_agent_and_missing_manifest_fail_closed(repo: Path) -> None:
    payload = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py")})
    (repo / ".seawall").mkdir()
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo))
    assert decision(out) == "deny"  # the named session has no manifest
    make_manifest(repo)
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo, task="nobody"))
    assert decision(out) == "deny"


def test_bad_input_exits_2_in_strict(repo: Path) -> None:
    code, out, err = run_hook("pre-tool-use", {}, agent_env(repo), raw="not json")
    assert code == 2 and out is None and "cannot be read" in err
    code, _, _ = run_hook("pre-tool-use", {}, agent_env(repo, SEAWALL_ENFORCEMENT="off"), raw="[")
    assert code == 1


def test_worktree_agent_is_found_from_cwd(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt-t1"
    git(repo, "worktree", "add", "-q", str(worktree))
    make_manifest(repo, workspaces={"t1": worktree, "t2": repo})
    env = project_env(repo)  # no SEAWALL_* variables: the lead's project directory
    _, out, _ = run_hook(
        "pre-tool-use", pre(worktree, "Write", {"file_path": str(worktree / "src/app/n.py")}), env
    )
    assert out is None
    _, out, _ = run_hook(
        "pre-tool-use", pre(worktree, "Write", {"file_path": str(worktree / "other/y.py")}), env
    )
    assert decision(out) == "deny"
    _, out, _ = run_hook(
        "pre-tool-use", pre(worktree, "Write", {"file_path": str(repo / "src/app/x.py")}), env
    )
    assert decision(out) == "deny"  # the main tree is outside the worktree agent's workspace


def test_in_place_wave_without_task_id_uses_the_union(repo: Path) -> None:
    make_manifest(repo)
    env = project_env(repo)
    _, out, _ = run_hook(
        "pre-tool-use", pre(repo, "Write", {"file_path": str(repo / "docs/a.md")}), env
    )
    assert out is None
    _, out, _ = run_hook(
        "pre-tool-use", pre(repo, "Write", {"file_path": str(repo / "other/y.py")}), env
    )
    assert decision(out) == "deny"


def test_a_closed_manifest_is_no_longer_guessed(repo: Path) -> None:
    from seawall.scope.manifest import close_manifest

    close_manifest(make_manifest(repo))
    payload = pre(repo, "Write", {"file_path": str(repo / "other/y.py")})
    _, out, _ = run_hook("pre-tool-use", payload, project_env(repo))
    assert out is None


def test_breaker_trip_refuses_all_but_cleanup_and_notes(repo: Path) -> None:
    make_manifest(repo)
    env = agent_env(repo)
    refused = None
    for i in range(8):
        call = pre(repo, "Bash", {"command": "ls src"}, call_id=f"toolu_{i}")
        _, out, _ = run_hook("pre-tool-use", call, env)
        if out is not None:
            refused = out
            break
        result = post(repo, "Bash", {"command": "ls src"}, {"stdout": "app", "stderr": ""})
        result["tool_use_id"] = f"toolu_{i}"
        run_hook("post-tool-use", result, env)
    assert refused is not None and decision(refused) == "deny"
    assert "breaker/loop tripped" in refused["hookSpecificOutput"]["permissionDecisionReason"]
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Bash", {"command": "git status"}), env)
    assert out is None  # the cleanup allowance
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Bash", {"command": "git status; ls"}), env)
    assert decision(out) == "deny"
    note = repo / ".seawall" / SESSION / "BLOCKED.md"
    _, out, _ = run_hook("pre-tool-use", pre(repo, "Write", {"file_path": str(note)}), env)
    assert out is None
    edit = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py")})
    _, out, _ = run_hook("pre-tool-use", edit, env)
    assert decision(out) == "deny"


def post(cwd: Path, tool: str, tool_input: dict[str, Any], response: Any) -> dict[str, Any]:
    payload = pre(cwd, tool, tool_input)
    payload["hook_event_name"] = "PostToolUse"
    payload["tool_response"] = response
    return payload


def test_post_tool_use_checkpoints_an_edit(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    make_manifest(repo, base=base)
    (repo / "src/app/x.py").write_text("x = 2\n")
    payload = post(repo, "Edit", {"file_path": str(repo / "src/app/x.py")}, {"filePath": "x"})
    code, out, err = run_hook("post-tool-use", payload, agent_env(repo))
    assert code == 0 and out is None, err
    ref = git(repo, "for-each-ref", "--format=%(refname)", f"refs/seawall/{SESSION}")
    assert ref == f"refs/seawall/{SESSION}/t1"
    assert git(repo, "show", f"{ref}:src/app/x.py") == "x = 2"
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the index is untouched
    assert git(repo, "rev-parse", "HEAD") == base


def test_post_tool_use_reports_a_trip(repo: Path) -> None:
    make_manifest(repo)
    env = agent_env(repo)
    outs = []
    for _ in range(4):
        payload = post(
            repo, "Bash", {"command": "make"}, {"stdout": "", "stderr": "boom", "exit_code": 2}
        )
        outs.append(run_hook("post-tool-use", payload, env)[1])
    blocked = [o for o in outs if o is not None]
    assert blocked and blocked[0]["decision"] == "block" and blocked[0]["reason"]


def stop(cwd: Path, message: str, *, active: bool = False) -> dict[str, Any]:
    return {
        "session_id": "cc-123",
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "SubagentStop",
        "stop_hook_active": active,
        "agent_id": "agent-7",
        "agent_type": "general-purpose",
        "last_assistant_message": message,
    }


def test_subagent_stop_records_the_status(repo: Path) -> None:
    make_manifest(repo)
    code, out, _ = run_hook(
        "subagent-stop", stop(repo, "Work.\nSTATUS: done — added x"), agent_env(repo)
    )
    assert (code, out) == (0, None)
    status = json.loads((repo / ".seawall" / SESSION / "agents" / "t1" / "status.json").read_text())
    assert status["status"] == "done" and status["summary"] == "added x"
    (record,) = read_events(repo / ".seawall" / SESSION / "events.jsonl", AgentFinished)
    assert record.source is FinishSource.HOOK and record.agent == "t1"
    assert record.status == "done" and record.summary == "added x"
    assert record.agent_id == "agent-7"


def test_subagent_stop_asks_once_for_a_missing_status(repo: Path, tmp_path: Path) -> None:
    make_manifest(repo)
    _, out, _ = run_hook("subagent-stop", stop(repo, "I changed things."), agent_env(repo))
    assert out is not None and out["decision"] == "block" and "STATUS" in out["reason"]
    _, out, _ = run_hook(
        "subagent-stop", stop(repo, "I changed things.", active=True), agent_env(repo)
    )
    assert out is None
    transcript = tmp_path / "agent.jsonl"
    line = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "STATUS: failed — no"}]},
    }
    transcript.write_text(json.dumps(line) + "\n")
    payload = stop(repo, "")
    payload["agent_transcript_path"] = str(transcript)
    _, out, _ = run_hook("subagent-stop", payload, agent_env(repo))
    assert out is None
    status = json.loads((repo / ".seawall" / SESSION / "agents" / "t1" / "status.json").read_text())
    assert status["status"] == "failed"


USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-bash.sh"}]},
        ],
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [
                    {"type": "command", "command": "prettier --write", "timeout": 10},
                    {"type": "command", "command": "/old/venv/bin/seawall hook post-tool-use"},
                ],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def install(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEAWALL, "hooks", "install", "--repo", str(repo), *extra],
        env=_base_env(repo),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_install_keeps_the_users_settings_and_hooks(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2))
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == USER_SETTINGS["permissions"]
    assert data["hooks"]["Stop"] == USER_SETTINGS["hooks"]["Stop"]
    pre_groups = data["hooks"]["PreToolUse"]
    assert pre_groups[0] == USER_SETTINGS["hooks"]["PreToolUse"][0]
    assert pre_groups[1]["matcher"] == "*"
    assert pre_groups[1]["hooks"][0]["command"] == f"{SEAWALL} hook pre-tool-use"
    post_groups = data["hooks"]["PostToolUse"]
    assert post_groups[0]["hooks"] == [
        {"type": "command", "command": "prettier --write", "timeout": 10}
    ]
    commands = [h["command"] for g in post_groups for h in g["hooks"]]
    assert commands.count(f"{SEAWALL} hook post-tool-use") == 1
    assert "/old/venv/bin/seawall hook post-tool-use" not in commands
    assert "SubagentStop" in data["hooks"]
    first = settings.read_text()
    again = install(tmp_path)
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert settings.read_text() == first
    other = install(tmp_path, "--command", "/opt/seawall/bin/seawall")
    assert other.returncode == 0
    data = json.loads(settings.read_text())
    commands = [h["command"] for g in data["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == ["./lint-bash.sh", "/opt/seawall/bin/seawall hook pre-tool-use"]


def test_install_refuses_a_broken_settings_file(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ broken")
    done = install(tmp_path)
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert settings.read_text() == "{ broken"


def test_install_creates_the_settings_file(tmp_path: Path) -> None:
    done = install(tmp_path)
    assert done.returncode == 0
    data = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert set(data["hooks"]) == {"PreToolUse", "PostToolUse", "SubagentStop"}
    assert "matcher" not in data["hooks"]["SubagentStop"][0]


def test_a_stale_unclosed_manifest_is_no_longer_guessed(repo: Path) -> None:
    path = make_manifest(repo)
    old = path.stat().st_mtime - 13 * 3600
    os.utime(path, (old, old))
    payload = pre(repo, "Write", {"file_path": str(repo / "other/y.py")})
    _, out, _ = run_hook("pre-tool-use", payload, project_env(repo))
    assert out is None
    _, out, _ = run_hook("pre-tool-use", payload, agent_env(repo))  # named: still applies
    assert decision(out) == "deny"


def test_the_hook_modules_import_nothing_heavy() -> None:
    # the package root is stubbed so only the hook path's own imports are measured
    code = (
        "import sys, types; root = types.ModuleType('coordinator'); "
        f"root.__path__ = [{str(Path(__file__).parents[2] / 'coordinator')!r}]; "
        "sys.modules['coordinator'] = root; "
        "import seawall.hooks.pre_tool_use, seawall.hooks.post_tool_use, "
        "seawall.hooks.subagent_stop, seawall.cli.hooks; "
        "heavy = {'pygit2', 'networkx', 'anyio', 'github', 'gitlab', 'rich'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
