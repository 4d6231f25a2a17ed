"""A reported done with nothing changed, judged by the evidence of the agent's stream."""

from __future__ import annotations

import pytest

from seawall.codec import decode, encode
from seawall.model import Status, Task, TaskKind
from seawall.session.agent_watch import AgentRun
from seawall.session.evidence import accepts_no_change, verdict_note
from seawall.session.verdict import judge_status

DONE = "Edited the module.\nSTATUS: done — module edited"


def run(**fields: object) -> AgentRun:
    return AgentRun(task_id="t", final_text=DONE, **fields)  # type: ignore[arg-type]


def test_failed_edits_make_an_unchanged_done_failed_with_the_error_quoted() -> None:
    report = judge_status(
        run(failed_edits=2, last_failed_edit="apply_patch verification failed: no file"),
        changed=False,
    )
    assert report.status is Status.FAILED and report.inferred
    assert report.summary.startswith("reported done, but nothing changed and 2 edit(s) failed")
    assert "apply_patch verification failed: no file" in report.reason


def test_calls_the_cli_refused_and_guard_denials_are_each_named_once() -> None:
    """Claude Code lists the calls a hook denied among its own refusals, and a refused
    edit is a failed edit too: each refusal is named once, by who refused it."""
    report = judge_status(
        run(
            denials=("Write docs/x.md", "Write src/a.py", "Edit src/b.py"),
            failed_edits=3,
            last_failed_edit="permission to write src/b.py not granted",
            guard_denials=1,
            last_guard_denial="seawall scope-denied: docs/x.md is outside the task's scope",
        ),
        changed=False,
    )
    assert report.status is Status.FAILED
    assert report.reason == (
        "reported done, but nothing changed and seawall's guard denied 1 call(s) "
        "(seawall scope-denied: docs/x.md is outside the task's scope); 1 edit(s) failed "
        "(permission to write src/b.py not granted); the agent CLI refused 2 call(s): "
        "Write src/a.py, Edit src/b.py"
    )


def test_the_cli_refusals_are_named_among_the_list_when_seawalls_cannot_be_told() -> None:
    """The guard's answer names neither listed call: the CLI's one is among the two."""
    report = judge_status(
        run(
            denials=("Write src/a.py", "Bash make deploy"),
            guard_denials=1,
            last_guard_denial="seawall command-blocked: `curl x | sh`: piped into a shell",
        ),
        changed=False,
    )
    assert report.reason.endswith(
        "; the agent CLI refused 1 call(s): among Write src/a.py, Bash make deploy"
    )


def test_no_evidence_of_failure_keeps_the_done_and_says_what_was_seen() -> None:
    report = judge_status(run(), changed=False)
    assert report.status is Status.DONE and not report.inferred
    assert report.reason == (
        "reported done, but nothing changed and no commit was made; no edit was seen and "
        "no failure: accepted"
    )
    edited = judge_status(run(writes=2), changed=False)
    assert edited.status is Status.DONE and "; 2 edit(s) succeeded and no failure" in (
        edited.reason
    )
    assert verdict_note(str(report.status), report.reason) == "DONE: " + report.reason


@pytest.mark.parametrize(
    "evidence",
    [{}, {"failed_edits": 1, "last_failed_edit": "old_string not found"}, {"denials": ("Bash",)}],
)
def test_a_change_or_a_task_that_may_change_nothing_is_taken_at_its_word(
    evidence: dict[str, object],
) -> None:
    assert judge_status(run(**evidence), changed=True).status is Status.DONE
    assert judge_status(run(**evidence), changed=False, may_change_nothing=True).status is (
        Status.DONE
    )


def test_other_reports_are_left_alone() -> None:
    assert verdict_note("done", "reported on line 3") is None
    quiet = AgentRun(task_id="t", final_text="STATUS: no-tests-needed — the suite covers it")
    assert judge_status(quiet, changed=False).status is Status.NO_TESTS_NEEDED
    failed = AgentRun(task_id="t", final_text="STATUS: failed — cannot", failed_edits=1)
    assert judge_status(failed, changed=False).status is Status.FAILED
    assert "edit" not in judge_status(failed, changed=False).reason


def test_which_tasks_may_change_nothing() -> None:
    assert accepts_no_change(Task(id="r", prompt="p", kind=TaskKind.REVIEW))
    assert accepts_no_change(Task(id="q", prompt="p", kind=TaskKind.RESEARCH))
    assert accepts_no_change(Task(id="d", prompt="p", may_change_nothing=True))
    assert not accepts_no_change(Task(id="i", prompt="p"))


def test_the_evidence_survives_the_ledger() -> None:
    original = run(writes=3, guard_denials=2, last_guard_denial="seawall scope-denied: x")
    again = decode(encode(original), AgentRun)
    assert (again.writes, again.guard_denials, again.last_guard_denial) == (
        3,
        2,
        "seawall scope-denied: x",
    )
