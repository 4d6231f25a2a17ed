"""The run notes the console, STATE.md, the report and carryover bodies show for an
agent's end: the calls refused to it, by who refused them, and its stderr."""

from __future__ import annotations

from seawall.breakers.trip import BreakerKind, Trip
from seawall.model import Enforcement
from seawall.scope.enforce import ErrorClass, decide
from seawall.state.refusals import GUARD_CLASSES, guard_answer
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


# what the guard answers (``seawall.scope.enforce.decide``), as the agent CLI passes it on
SCOPE_ANSWER = decide(
    Enforcement.STRICT,
    error_class=ErrorClass.SCOPE_DENIED,
    problem="README.md is outside this task's file scope (this task may change: src/app.py)",
).message
COMMAND_ANSWER = decide(
    Enforcement.STRICT,
    error_class=ErrorClass.COMMAND_BLOCKED,
    problem="`git commit -am sneaky`: git commit: a dispatched agent does not write git state",
).message
REPO = "/tmp/work/repo"


def test_seawalls_own_refusals_say_nothing_of_the_clis_permissions() -> None:
    """Claude Code lists the calls seawall's hook denied among its permission denials:
    they are seawall's, named as such, with the setting that decides them."""
    run = AgentRun(
        task_id="a",
        denials=(f"Edit {REPO}/README.md", "Bash git commit -am sneaky"),
        guard_denials=2,
        last_guard_denial=COMMAND_ANSWER,
        exit_code=0,
    )
    (note,) = run_notes(run)
    assert note.startswith(
        "seawall refused 2 call(s) itself (not the agent CLI's permission settings): "
        f"Edit {REPO}/README.md, Bash git commit -am sneaky; the last by its command policy: "
        "`git commit -am sneaky`: git commit: a dispatched agent does not write git state; "
    )
    assert "`[session.commands]`" in note
    assert "without permission" not in note and "permissions (" not in note


def test_a_refusal_of_the_cli_itself_names_its_permission_settings() -> None:
    (note,) = run_notes(AgentRun(task_id="a", denials=(f"Write {REPO}/notes.md",), exit_code=0))
    assert note.startswith(f"the agent CLI refused 1 call(s) without permission: Write {REPO}")
    assert "not seawall's" in note and "`options.permissions`" in note
    assert "--permission-mode" in note
    assert "seawall refused" not in note


def test_both_sides_are_told_apart_by_the_target_seawalls_answer_names() -> None:
    run = AgentRun(
        task_id="a",
        denials=(f"Write {REPO}/notes.md", f"Edit {REPO}/README.md", "Bash make deploy"),
        guard_denials=1,
        last_guard_denial=SCOPE_ANSWER,
    )
    ours, theirs = run_notes(run)
    assert ours.startswith(
        "seawall refused 1 call(s) itself (not the agent CLI's permission settings): "
        f"Edit {REPO}/README.md; the last by its scope guard: README.md is outside this "
        "task's file scope (this task may change: src/app.py); what a task may change is "
        "its `scope` in the plan"
    )
    assert theirs.startswith(
        f"the agent CLI refused 2 call(s) without permission: Write {REPO}/notes.md, "
        "Bash make deploy; its own permission settings, not seawall's"
    )


def test_when_seawalls_share_cannot_be_named_the_clis_are_among_the_list() -> None:
    run = AgentRun(
        task_id="a",
        denials=("Write a.py", "Write b.py"),
        guard_denials=1,
        last_guard_denial=SCOPE_ANSWER,
    )
    ours, theirs = run_notes(run)
    assert ours.startswith("seawall refused 1 call(s) itself (not the agent CLI's permission")
    assert "itself (not the agent CLI's permission settings); the last" in ours  # none named
    assert theirs.startswith(
        "the agent CLI refused 1 call(s) without permission, among: Write a.py, Write b.py;"
    )


def test_refusals_the_cli_does_not_list_are_still_seawalls() -> None:
    """A run stopped before its CLI listed anything (or a CLI that lists nothing)."""
    (note,) = run_notes(AgentRun(task_id="a", guard_denials=3, last_guard_denial=SCOPE_ANSWER))
    assert note.startswith("seawall refused 3 call(s) itself (not the agent CLI's permission")
    assert "the last by its scope guard: README.md is outside" in note
    trip = Trip(kind=BreakerKind.LOOP, evidence="Bash ls x4", count=4, limit=4, at=0.0)
    breaker = run_notes(
        AgentRun(
            task_id="a", denials=("Bash ls",), guard_denials=1, last_guard_denial=trip.message()
        )
    )
    assert breaker[0].endswith(
        "Bash ls; the last by its breaker `breaker/loop`: Bash ls x4; the breakers' limits "
        "are the plan's `[session.breakers]`; after a review, `seawall reset --agent TASK` "
        "re-arms them"
    )


def test_seawalls_answers_are_read_as_the_guard_writes_them() -> None:
    assert set(GUARD_CLASSES) == {str(kind) for kind in ErrorClass}
    for kind in ErrorClass:
        message = decide(Enforcement.STRICT, error_class=kind, problem="x.py: no").message
        answer = guard_answer("Error: " + message)
        assert answer is not None and (answer.kind, answer.problem) == (str(kind), "x.py: no")
        warned = decide(Enforcement.WARN, error_class=kind, problem="x.py: no").message
        assert guard_answer(warned) is None  # a warning refuses nothing
    assert guard_answer("permission to write src/b.py not granted") is None


def test_a_refused_write_on_stderr_points_at_the_scope_and_sandbox_writable() -> None:
    tail = (
        "Traceback (most recent call last):\n"
        "PermissionError: [Errno 13] Permission denied: '/home/u/.cache/tool/x'\n"
    )
    notes = run_notes(AgentRun(task_id="a", stderr_tail=tail, exit_code=1))
    refused = [note for note in notes if note.startswith("a write was refused")]
    assert len(refused) == 1 and "/home/u/.cache/tool/x" in refused[0]
    assert "`scope`" in refused[0] and "`[session] sandbox_writable`" in refused[0]
    erofs = "touch: cannot touch '/usr/x': Read-only file system"
    (note,) = run_notes(AgentRun(task_id="a", stderr_tail=erofs, exit_code=0))
    assert note.startswith("a write was refused (touch: cannot touch '/usr/x'")
    assert run_notes(AgentRun(task_id="a", stderr_tail="all good", exit_code=0)) == []
