"""The run notes the console, STATE.md and carryover bodies show for an agent's end."""

from __future__ import annotations

from seawall.state.render import run_notes
from seawall.state.runs import AgentRun


def test_denials_are_named_with_the_end_of_their_path() -> None:
    path = "/very/long/" + "deep/" * 30 + "notes.md"
    (note,) = run_notes(
        AgentRun(task_id="a", denials=(f"Write {path}", "Bash rm -rf build"), exit_code=0)
    )
    assert note.startswith("the agent CLI refused 2 call(s) without permission: Write …")
    assert "notes.md" in note and "Bash rm -rf build" in note


def test_the_stderr_tail_is_shown_only_for_a_non_zero_exit() -> None:
    tail = "starting\nerror: unknown option '--no-such-flag'\n"
    (note,) = run_notes(AgentRun(task_id="a", stderr_tail=tail, exit_code=1))
    assert note == "stderr (exit 1): starting ⏎ error: unknown option '--no-such-flag'"
    assert run_notes(AgentRun(task_id="a", stderr_tail="WARN something", exit_code=0)) == []
    assert run_notes(AgentRun(task_id="a", stderr_tail="killed", exit_code=None)) == []
    assert run_notes(None) == run_notes(AgentRun(task_id="a")) == []
