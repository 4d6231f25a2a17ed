"""Step mode for a lead agent: `seawall wave prepare` / `seawall wave review` with JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.sessionkit import make_repo, seawall, show, status


def test_prepare_dispatch_yourself_then_review(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "lead"\n'
        '[[task]]\nid = "app"\nprompt = "Bump x."\nscope = ["src/app.py"]\n'
        '[[task]]\nid = "notes"\nprompt = "Write notes."\nscope = ["NOTES.md"]\n'
    )
    prepared = seawall(
        "wave", "prepare", str(plan), "--json", "--repo", str(repo), cwd=repo, check=True
    )
    wave = json.loads(prepared.stdout)
    assert wave["wave"] == 1
    assert wave["isolation"] == "none"
    agents = {a["task"]: a for a in wave["agents"]}
    assert "TURN LIMIT" in agents["app"]["prompt"]
    assert "src/app.py" in agents["app"]["prompt"]
    assert Path(wave["scope_manifest"]).exists()
    # the lead's own agents do the work in the given workspaces
    Path(agents["app"]["workspace"], "src/app.py").write_text("x = 2\n")
    Path(agents["notes"]["workspace"], "NOTES.md").write_text("notes\n")
    outputs = {
        "outputs": {
            "app": "Bumped.\nSTATUS: done — x is 2",
            "notes": "STATUS: partial — started | REMAINING: the rest",
        }
    }
    reviewed = seawall(
        "wave",
        "review",
        "--json",
        "--repo",
        str(repo),
        cwd=repo,
        stdin=json.dumps(outputs),
        check=True,
    )
    report = json.loads(reviewed.stdout)
    statuses = {a["task"]: a["status"] for a in report["agents"]}
    assert statuses == {"app": "done", "notes": "partial"}
    assert report["pending"] == ["notes"]
    assert show(repo, "main", "src/app.py") == "x = 2\n"
    assert show(repo, "main", "NOTES.md") == "notes\n"
    # the next prepare carries the partial forward with its REMAINING
    nxt = json.loads(
        seawall("wave", "prepare", "--json", "--repo", str(repo), cwd=repo, check=True).stdout
    )
    assert [a["task"] for a in nxt["agents"]] == ["notes"]
    assert "the rest" in nxt["agents"][0]["prompt"]
    seawall(
        "wave",
        "review",
        "--json",
        "--repo",
        str(repo),
        cwd=repo,
        check=True,
        stdin=json.dumps({"outputs": {"notes": "STATUS: done — finished"}}),
    )
    done = json.loads(
        seawall("wave", "prepare", "--json", "--repo", str(repo), cwd=repo, check=True).stdout
    )
    assert done["done"] is True and done["schema"] == "seawall.wave-done/1"
    assert status(repo)["phase"] == "running"  # preparing never finishes (or files) anything
    finished = seawall("wave", "finish", "--json", "--repo", str(repo), cwd=repo, check=True)
    assert json.loads(finished.stdout)["phase"] == "done"
    assert status(repo)["phase"] == "done"


def test_review_rejects_bad_input(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = seawall("wave", "review", "--json", "--repo", str(repo), cwd=repo, stdin="[1, 2]")
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]  # under --json, the error is JSON too
    assert error["type"] == "ConfigurationError" and "expected" in error["message"]
    prose = seawall("wave", "review", "--repo", str(repo), cwd=repo, stdin="[1, 2]")
    assert prose.returncode == 1 and "expected" in prose.stderr


def test_wave_watch_follows_transcripts_and_records_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "watch"\n[[task]]\nid = "a"\nprompt = "x"\nscope = ["a.txt"]\n'
    )
    seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    transcripts = tmp_path / "subagents"
    transcripts.mkdir()
    lines = []
    for n in range(4):  # the identical Bash call with the same result, four times
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"m{n}",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"t{n}",
                                "name": "Bash",
                                "input": {"command": "ls src"},
                            }
                        ],
                    },
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": f"t{n}", "content": "a.py"}
                        ],
                    },
                }
            )
        )
    lines.append(
        json.dumps(
            {
                "type": "assistant",
                "message": {
                    "id": "m9",
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "STATUS: partial — half | REMAINING: the rest"}
                    ],
                },
            }
        )
    )
    (transcripts / "agent-a1.jsonl").write_text("\n".join(lines) + "\n")
    done = seawall("wave", "watch", str(transcripts), "--for", "1", "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "breaker/loop" in done.stdout
    session = status(repo)["session"]
    events = (repo / ".seawall" / session / "events.jsonl").read_text()
    assert '"stagnation_detected"' in events and '"status-partial"' in events
    assert (repo / ".seawall" / session / "BLOCKED.md").exists()


def _hook(event: str, payload: dict[str, object], env: dict[str, str]) -> dict[str, object]:
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "seawall", "hook", event], input=json.dumps(payload),
        env={**os.environ, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_hooks_use_the_plans_breaker_limits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "hooked"\n[session.breakers]\nmax_repeat_identical = 2\n'
        '[[task]]\nid = "a"\nprompt = "x"\nscope = ["a.txt"]\n'
    )
    wave = json.loads(
        seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True).stdout
    )
    env = {
        "SEAWALL_SESSION": wave["session"],
        "SEAWALL_WAVE": "1",
        "SEAWALL_TASK_ID": "a",
        "CLAUDE_PROJECT_DIR": str(repo),
    }
    call = {
        "session_id": "x",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(repo),
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    decisions = []
    for _ in range(3):
        out = _hook("pre-tool-use", {**call, "hook_event_name": "PreToolUse"}, env)
        decisions.append(json.dumps(out))
        _hook(
            "post-tool-use",
            {
                **call,
                "hook_event_name": "PostToolUse",
                "tool_response": {"stdout": "a.txt", "stderr": ""},
            },
            env,
        )
    assert "deny" in decisions[-1] and "breaker/loop" in decisions[-1]  # the plan's 2, not 4
    assert "deny" not in decisions[0]
