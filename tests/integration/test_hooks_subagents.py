"""A lead's subagents told apart by the hooks: Claude Code's ``agent_id`` and the
identity line of the subagent's prompt, read from its transcript, give each agent of a
wave its own scope and workspace; no environment variable is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.hooks.identity import subagent_identity
from tests.integration.sessionkit import make_repo, seawall

LEAD_TRANSCRIPT = "lead-session.jsonl"


def _prepare(tmp_path: Path, isolation: str) -> tuple[Path, dict[str, Any]]:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n", "docs/notes.md": "n\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'[session]\nname = "subs"\nisolation = "{isolation}"\n'
        '[[task]]\nid = "app"\nprompt = "Bump x."\nscope = ["src/app.py"]\n'
        '[[task]]\nid = "docs"\nprompt = "Write notes."\nscope = ["docs/**"]\n'
    )
    out = seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    return repo, json.loads(out.stdout)


def _subagent(home: Path, agent_id: str, prompt: str) -> str:
    """Write a subagent transcript the way Claude Code lays it out; the lead's path."""
    lead = home / "projects" / "repo" / LEAD_TRANSCRIPT
    folder = lead.with_suffix("") / "subagents"
    folder.mkdir(parents=True, exist_ok=True)
    first = {
        "parentUuid": None,
        "isSidechain": True,
        "agentId": agent_id,
        "type": "user",
        "message": {"role": "user", "content": prompt},
    }
    later = {"type": "user", "message": {"role": "user", "content": "seawall session x, wave 1, "}}
    lines = [json.dumps(first), json.dumps(later)]
    (folder / f"agent-{agent_id}.jsonl").write_text("\n".join(lines) + "\n")
    lead.touch()
    return str(lead)


def _pre(
    repo: Path, cwd: Path, tool_input: dict[str, Any], tool: str = "Write", **fields: Any
) -> str:
    return _hook(repo, _payload(cwd, tool, tool_input, **fields), {})


def _payload(cwd: Path, tool: str, tool_input: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The PreToolUse JSON Claude Code sends."""
    return {
        "session_id": "lead-1",
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call_1",
        **fields,
    }


def _hook(repo: Path, payload: dict[str, Any], env_extra: dict[str, str]) -> str:
    """The real ``seawall hook pre-tool-use`` process's answer to ``payload``."""
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "CLAUDE_PROJECT_DIR": str(repo)}
    env |= env_extra
    done = subprocess.run(
        [sys.executable, "-m", "seawall", "hook", "pre-tool-use"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 2), done.stderr
    return done.stdout + done.stderr


def test_in_place_subagents_each_get_their_own_scope(tmp_path: Path) -> None:
    repo, wave = _prepare(tmp_path, "none")
    assert wave["isolation"] == "none"
    prompts = {a["task"]: a["prompt"] for a in wave["agents"]}
    home = tmp_path / "claude"
    app = _subagent(home, "a1f00", prompts["app"])
    docs = _subagent(home, "d2e00", prompts["docs"])
    write_app = {"file_path": str(repo / "src/app.py"), "content": "x = 2\n"}
    write_docs = {"file_path": str(repo / "docs/notes.md"), "content": "m\n"}
    as_app = {"agent_id": "a1f00", "agent_type": "general-purpose", "transcript_path": app}
    as_docs = {"agent_id": "d2e00", "agent_type": "general-purpose", "transcript_path": docs}
    assert "deny" not in _pre(repo, repo, write_app, **as_app)
    denied = _pre(repo, repo, write_docs, **as_app)
    assert '"permissionDecision": "deny"' in denied
    assert "docs/notes.md is outside this task's file scope" in denied
    assert "this task may change: src/app.py" in denied
    assert "deny" not in _pre(repo, repo, write_docs, **as_docs)
    assert "deny" in _pre(repo, repo, write_app, **as_docs)
    # a Bash write is judged against the same agent's scope
    bash = {"command": "echo y > docs/notes.md"}
    assert "deny" in _pre(repo, repo, bash, tool="Bash", **as_app)
    assert "deny" not in _pre(repo, repo, bash, tool="Bash", **as_docs)
    # the lead's own call (no agent_id) keeps the wave's union, as before
    assert "deny" not in _pre(repo, repo, write_docs, transcript_path=app)


def test_a_worktree_subagent_may_write_only_in_its_workspace(tmp_path: Path) -> None:
    repo, wave = _prepare(tmp_path, "worktree")
    agents = {a["task"]: a for a in wave["agents"]}
    workspace = Path(agents["app"]["workspace"])
    assert workspace != repo and f"WORKSPACE: {workspace}" in agents["app"]["prompt"]
    home = tmp_path / "claude"
    lead = _subagent(home, "a1f00", agents["app"]["prompt"])
    as_app = {"agent_id": "a1f00", "transcript_path": lead}
    # it starts in the lead's checkout: the same file there is outside its workspace
    main_tree = _pre(repo, repo, {"file_path": str(repo / "src/app.py"), "content": "2"}, **as_app)
    assert '"permissionDecision": "deny"' in main_tree
    assert f"all its work happens in {workspace}" in main_tree
    relative = _pre(repo, repo, {"file_path": "src/app.py", "content": "2"}, **as_app)
    assert "deny" in relative  # relative to where it runs, the lead's checkout
    inside = {"file_path": str(workspace / "src/app.py"), "content": "2"}
    assert "deny" not in _pre(repo, repo, inside, **as_app)
    other = {"file_path": str(Path(agents["docs"]["workspace"]) / "docs/n.md"), "content": "2"}
    assert "deny" in _pre(repo, repo, other, **as_app)


def test_an_identity_the_manifest_does_not_know_fails_closed(tmp_path: Path) -> None:
    repo, wave = _prepare(tmp_path, "none")
    home = tmp_path / "claude"
    session = wave["session"]
    unknown = _subagent(home, "u1", f"seawall session {session}, wave 1, task ghost.\n\nHi.")
    write = {"file_path": str(repo / "src/app.py"), "content": "x = 2\n"}
    refused = _pre(repo, repo, write, agent_id="u1", transcript_path=unknown)
    assert "deny" in refused or "ghost" in refused, refused
    assert "'ghost' has no scope in wave 1" in refused
    missing = _subagent(home, "m1", f"seawall session {session}, wave 7, task app.\n\nHi.")
    refused = _pre(repo, repo, write, agent_id="m1", transcript_path=missing)
    assert "no scope manifest" in refused and "wave-7" in refused


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("seawall session s-1, wave 2, task fix-1.2.\n\nDo it.", ("s-1", 2, "fix-1.2")),
        ("Please: seawall session s-1, wave 2, task app.", None),  # quoted mid-line
        ("Write a file.", None),
    ],
)
def test_the_identity_line_is_read_from_the_first_prompt_only(
    tmp_path: Path, prompt: str, expected: tuple[str, int, str] | None
) -> None:
    lead = _subagent(tmp_path, "abc", prompt)
    found = subagent_identity({"agent_id": "abc", "transcript_path": lead})
    got = None if found is None else (found.session, found.wave, found.task)
    assert got == expected
    assert subagent_identity({"transcript_path": lead}) is None  # the lead's own call
    escape = {"agent_id": "../../etc/x", "transcript_path": lead}
    assert subagent_identity(escape) is None


def test_seawall_tools_are_the_leads_not_an_agents(tmp_path: Path) -> None:
    repo, wave = _prepare(tmp_path, "none")
    prompts = {a["task"]: a["prompt"] for a in wave["agents"]}
    lead = _subagent(tmp_path / "claude", "a1f00", prompts["app"])
    outputs = {"outputs": {"app": "STATUS: done — x"}}
    for tool in ("mcp__seawall__next", "mcp__plugin_seawall_seawall__next"):
        assert "deny" not in _pre(repo, repo, outputs, tool=tool, transcript_path=lead)
        refused = _pre(repo, repo, outputs, tool=tool, agent_id="a1f00", transcript_path=lead)
        assert "seawall's steps are the lead's" in refused
    # any other tool without a path to judge is still refused to the lead in strict
    assert "deny" in _pre(repo, repo, {"x": 1}, tool="mcp__other__do_thing", transcript_path=lead)


def test_an_agent_may_write_only_its_own_stop_note(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/auth.py": "x = 1\n", "docs/notes.md": "n\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "notes"\nisolation = "none"\n'
        '[[task]]\nid = "auth"\nprompt = "Fix auth."\nscope = ["src/auth.py"]\n'
        '[[task]]\nid = "docs"\nprompt = "Write notes."\nscope = ["docs/**"]\n'
    )
    out = seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    wave = json.loads(out.stdout)
    session = wave["session"]
    prompts = {a["task"]: a["prompt"] for a in wave["agents"]}
    home = tmp_path / "claude"
    as_auth = {"agent_id": "a0a0", "transcript_path": _subagent(home, "a0a0", prompts["auth"])}
    as_docs = {"agent_id": "d0d0", "transcript_path": _subagent(home, "d0d0", prompts["docs"])}
    notes = repo / ".seawall" / session
    docs_note = {"file_path": str(notes / "agents" / "docs" / "BLOCKED.md"), "content": "x\n"}
    auth_note = {"file_path": str(notes / "agents" / "auth" / "BLOCKED.md"), "content": "x\n"}
    refused = _pre(repo, repo, docs_note, **as_auth)
    assert '"permissionDecision": "deny"' in refused
    assert f".seawall/{session}/agents/docs/BLOCKED.md is seawall or git state" in refused
    assert "deny" not in _pre(repo, repo, auth_note, **as_auth)
    assert "deny" not in _pre(repo, repo, docs_note, **as_docs)
    assert "deny" in _pre(repo, repo, auth_note, **as_docs)
    # the session's own note stays open to every agent; a Bash write is judged alike
    session_note = {"file_path": str(notes / "BLOCKED.md"), "content": "x\n"}
    assert "deny" not in _pre(repo, repo, session_note, **as_auth)
    bash = {"command": f"echo blocked > {notes}/agents/docs/BLOCKED.md"}
    assert "deny" in _pre(repo, repo, bash, tool="Bash", **as_auth)
    assert "deny" not in _pre(repo, repo, bash, tool="Bash", **as_docs)


def test_seawall_runs_alone_and_only_for_the_lead(tmp_path: Path) -> None:
    """Claude Code's sandbox runs ``seawall`` lines outside it (``excludedCommands``), the
    whole line with it: the hook lets the lead run seawall alone, and no agent at all."""
    repo, wave = _prepare(tmp_path, "none")
    prompts = {a["task"]: a["prompt"] for a in wave["agents"]}
    lead = _subagent(tmp_path / "claude", "a1f00", prompts["app"])

    def bash(command: str, **fields: Any) -> str:
        return _pre(repo, repo, {"command": command}, tool="Bash", transcript_path=lead, **fields)

    assert "deny" not in bash("seawall next --json")
    assert "deny" not in bash("seawall next --json 2>&1")
    assert "deny" not in bash("seawall next --input - <<'EOF'\n{\"outputs\": {}}\nEOF")
    for line in (
        "seawall next --json; python3 -c \"open('/root/x', 'w')\"",
        "seawall next --json && touch /tmp/x",
        "seawall next --json | tee step.json",
        "seawall next --json > step.json",
        "PYTHONPATH=/tmp/evil seawall next --json",
        "timeout 60 seawall next --json",
        "seawall next --json\nbash /tmp/evil.sh",
        "seawall next --json; case x in a) ;; esac",
    ):
        refused = bash(line)
        assert '"permissionDecision": "deny"' in refused, line
        assert "outside Claude Code's sandbox" in refused, line
    refused = bash("seawall next --json", agent_id="a1f00")
    assert "seawall's steps are the lead's, not an agent's" in refused
    assert "deny" not in bash("grep -rn seawall docs", agent_id="a1f00")


def test_a_lead_named_by_its_session_runs_seawall_in_a_one_agent_wave(tmp_path: Path) -> None:
    """With ``--session S`` in the lead's hook commands, the one agent of a wave is only a
    guess for the lead's own call: only a named agent is refused seawall."""
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "one"\nisolation = "none"\n'
        '[[task]]\nid = "app"\nprompt = "Bump x."\nscope = ["src/app.py"]\n'
    )
    out = seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    session = json.loads(out.stdout)["session"]
    step = _payload(repo, "Bash", {"command": "seawall next --json"})
    assert "deny" not in _hook(repo, step, {"SEAWALL_SESSION": session})
    refused = _hook(repo, step, {"SEAWALL_SESSION": session, "SEAWALL_TASK_ID": "app"})
    assert "seawall's steps are the lead's, not an agent's" in refused
