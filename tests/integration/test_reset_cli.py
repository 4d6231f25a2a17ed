"""`seawall reset --agent TASK` clears a hook-mode breaker trip after review."""

from __future__ import annotations

import json
from pathlib import Path

from seawall.breakers.store import load_breaker, open_breaker
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits
from tests.integration.sessionkit import make_repo, seawall


def test_reset_clears_a_tripped_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    session = "s-1"
    state = repo / ".seawall" / session / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text(
        json.dumps(
            {
                "schema": 1,
                "session": session,
                "name": "s",
                "repo": str(repo),
                "target_branch": "main",
                "start_commit": "0" * 40,
            }
        )
    )
    limits = BreakerLimits(max_repeat_identical=2)
    with open_breaker(repo, session, "api", limits=limits) as breaker:
        for n in range(4):
            breaker.admit(ToolCall(call_id=str(n), name="Bash", arguments={"command": "ls"}))
            breaker.observe(ToolResult(call_id=str(n), text="a.txt", exit_code=0))
        assert breaker.trip is not None
    assert load_breaker(repo, session, "api", limits=limits).trip is not None
    done = seawall("reset", "--agent", "api", "--repo", str(repo), "--session", session, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "cleared" in done.stdout
    assert load_breaker(repo, session, "api", limits=limits).trip is None
    again = seawall("reset", "--agent", "api", "--repo", str(repo), "--session", session, cwd=repo)
    assert "was not tripped" in again.stdout
