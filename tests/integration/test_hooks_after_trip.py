"""After an unverified-edits trip, through the installed hook commands: edits are refused
and say why, reading and a verify run stay open, and a passing verify run clears it."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.model import BreakerLimits, Enforcement, Isolation, Task, Wave
from seawall.scope.manifest import build_manifest, write_manifest
from tests.integration.test_hooks import (
    SESSION,
    agent_env,
    decision,
    post,
    pre,
    repo,
    run_hook,
)

__all__ = ["repo"]  # the fixture, shared with the other hook tests


def edits_manifest(repo: Path) -> None:
    wave = Wave(
        number=1,
        tasks=(Task(id="t1", prompt="a", scope=("src/app/",)),),
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=15,
    )
    limits = BreakerLimits(max_edits_without_verify=2)
    write_manifest(build_manifest(session=SESSION, wave=wave, repo=repo, limits=limits))


@pytest.mark.slow  # a dozen hook processes
def test_only_edits_are_refused_until_a_check_passes(repo: Path) -> None:
    edits_manifest(repo)
    env = agent_env(repo)
    for n in range(2):
        path = str(repo / f"src/app/new{n}.py")
        call = pre(repo, "Write", {"file_path": path, "content": "x"}, call_id=f"toolu_w{n}")
        assert run_hook("pre-tool-use", call, env)[1] is None
        done = post(repo, "Write", {"file_path": path, "content": "x"}, {"filePath": path})
        done["tool_use_id"] = f"toolu_w{n}"
        run_hook("post-tool-use", done, env)
    edit = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py"), "content": "y"})
    _, out, _ = run_hook("pre-tool-use", edit, env)
    assert decision(out) == "deny"
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "breaker/unverified-edits" in reason and "Edits are blocked until" in reason
    read = pre(repo, "Read", {"file_path": str(repo / "src/app/x.py")}, call_id="toolu_r")
    assert run_hook("pre-tool-use", read, env)[1] is None
    grep = pre(repo, "Bash", {"command": "grep -rn x src/app"}, call_id="toolu_g")
    assert run_hook("pre-tool-use", grep, env)[1] is None
    sneaky = pre(repo, "Bash", {"command": "pytest -q; sed -i s/1/2/ src/app/x.py"})
    assert decision(run_hook("pre-tool-use", sneaky, env)[1]) == "deny"
    verify = pre(repo, "Bash", {"command": "pytest -q"}, call_id="toolu_v")
    assert run_hook("pre-tool-use", verify, env)[1] is None
    passed = post(repo, "Bash", {"command": "pytest -q"}, {"stdout": "3 passed", "stderr": ""})
    passed["tool_use_id"] = "toolu_v"
    run_hook("post-tool-use", passed, env)
    again = pre(repo, "Write", {"file_path": str(repo / "src/app/x.py"), "content": "y"})
    assert run_hook("pre-tool-use", again, env)[1] is None
