"""Hook mode: admission, the cleanup allowance, persistence between processes, BLOCKED.md."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from seawall.breakers import (
    CLEANUP_ALLOWANCE,
    AgentBreaker,
    BreakerKind,
    Trip,
    append_blocked,
    append_blocked_note,
    blocked_path,
    breaker_path,
    cleanup_refusal,
    load_breaker,
    open_breaker,
    reset_agent_breaker,
    save_breaker,
)
from seawall.breakers.keys import call_key
from seawall.breakers.saved import SavedBreaker
from seawall.breakers.signature import failure_print, output_digest
from seawall.codec import decode, encode
from seawall.errors import StateError
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits

_n = 0


def call(name: str, **arguments: Any) -> ToolCall:
    global _n
    _n += 1
    return ToolCall(call_id=f"h{_n}", name=name, arguments=arguments)


def bash(command: str) -> ToolCall:
    return call("Bash", command=command)


def tripped_breaker(kind: str = "loop") -> AgentBreaker:
    breaker = AgentBreaker(limits=BreakerLimits(max_repeat_identical=2, max_edits_without_verify=1))
    if kind == "loop":
        for _ in range(2):
            tool_call = call("Read", file_path="/r/a.py")
            if breaker.admit(tool_call).allowed:
                breaker.observe(ToolResult(call_id=tool_call.call_id, text="same"))
    else:
        tool_call = call("Edit", file_path="/r/a.py", old_string="a", new_string="b")
        assert breaker.admit(tool_call).allowed
        breaker.observe(ToolResult(call_id=tool_call.call_id, text="updated"))
    assert breaker.trip is not None
    return breaker


# -- cleanup allowance ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["git status", "git status --porcelain", "git diff", "git diff --stat HEAD",
     "git log --oneline -3", "git show HEAD --stat"],
)  # fmt: skip
def test_git_reads_are_cleanup_commands(command: str) -> None:
    assert cleanup_refusal(command) is None


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("git commit --amend -m x", "does not write git state"),
        ("git commit -m 'wip: unverified'", "does not write git state"),
        ("git status; rm -rf src", "single plain"),
        ("git status && pytest", "single plain"),
        ("git diff > patch.txt", "single plain"),
        ('git commit -m "$(rm -rf x)"', "single plain"),
        ("git add src/a.py", "does not write git state"),
        ("git add -A", "does not write git state"),
        ("git checkout -- src/a.py", "does not write git state"),
        ("git restore --staged a.py", "does not write git state"),
        ("git push", "does not write git state"),
        ("git stash", "git stash"),
        ("git reset --hard", "does not write git state"),
        ("git -C /elsewhere commit -m x", "-C"),
        ("pytest", "only the cleanup git commands"),
        ("git diff --output=x", "only git reads"),
    ],
)
def test_everything_else_is_refused_after_a_trip(command: str, why: str) -> None:
    refusal = cleanup_refusal(command)
    assert refusal is not None and why in refusal


def test_a_tripped_agent_gets_the_cleanup_allowance_once_and_no_refill() -> None:
    breaker = tripped_breaker()
    allowed = [breaker.admit(bash("git status")) for _ in range(CLEANUP_ALLOWANCE)]
    assert all(a.allowed and a.cleanup for a in allowed)
    spent = breaker.admit(bash("git status"))
    assert not spent.allowed and "allowance is spent" in spent.reason
    assert breaker.trip is not None and breaker.trip.kind is BreakerKind.LOOP


def test_refused_cleanup_does_not_spend_the_allowance() -> None:
    breaker = tripped_breaker()
    refused = breaker.admit(bash("git commit --amend -m x"))
    assert not refused.allowed and "only git reads" in refused.reason
    assert breaker.cleanup_used == 0


def test_everything_but_cleanup_is_refused_after_a_trip() -> None:
    breaker = tripped_breaker()
    for tool_call in (call("Read", file_path="/r/b.py"), call("Edit", file_path="/r/b.py"),
                      bash("pytest"), call("WebFetch", url="https://x")):  # fmt: skip
        admission = breaker.admit(tool_call)
        assert not admission.allowed and "breaker/loop" in admission.reason


def test_blocked_md_stays_open_after_a_trip() -> None:
    breaker = tripped_breaker()
    stop_note = Path("/repo/.seawall/s1/BLOCKED.md")
    note = call("Edit", file_path="/repo/.seawall/s1/BLOCKED.md", old_string="", new_string="x")
    assert breaker.admit(note, stop_note=stop_note).allowed
    relative = call("Write", file_path=".seawall/s1/BLOCKED.md", content="x")
    assert breaker.admit(relative, stop_note=stop_note, cwd=Path("/repo")).allowed
    assert breaker.cleanup_used == 0


@pytest.mark.parametrize(
    "path",
    [
        "/repo/docs/BLOCKED.md",
        "/repo/.seawall/other-session/BLOCKED.md",  # another session's note
        "/repo/src/.seawall/s1/BLOCKED.md",  # a .seawall component deeper down
        "/repo/.seawall/s1/BLOCKED.md.bak",
    ],
)
def test_only_the_sessions_own_stop_note_stays_open(path: str) -> None:
    breaker = tripped_breaker()
    edit = call("Edit", file_path=path, old_string="", new_string="x")
    assert not breaker.admit(edit, stop_note=Path("/repo/.seawall/s1/BLOCKED.md")).allowed
    assert not breaker.admit(edit).allowed  # no stop note given: none is open


def test_unverified_edits_lets_a_verify_run_through_and_clear_it() -> None:
    breaker = tripped_breaker("edits")
    assert not breaker.admit(call("Edit", file_path="/r/b.py")).allowed
    verify = bash("pytest -q")
    admission = breaker.admit(verify)
    assert admission.allowed and not admission.cleanup
    breaker.observe(ToolResult(call_id=verify.call_id, text="3 passed", exit_code=0))
    assert breaker.trip is None
    assert breaker.admit(call("Edit", file_path="/r/b.py")).allowed


def test_the_tool_budget_warning_reaches_the_agent_once() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_tool_calls=5))
    warnings = []
    for n in range(5):
        tool_call = call("Read", file_path=f"/r/{n}")
        admission = breaker.admit(tool_call)
        warnings.append(admission.warning)
        breaker.observe(ToolResult(call_id=tool_call.call_id, text=str(n)))
    assert [w is not None for w in warnings] == [False, False, False, True, False]
    assert "4 of 5 tool calls" in str(warnings[3])


# -- persistence -----------------------------------------------------------------------------


def test_breaker_state_round_trips_through_json_mid_call() -> None:
    limits = BreakerLimits(max_repeat_identical=4)
    breaker = AgentBreaker(limits=limits)
    for _ in range(2):
        tool_call = call("Read", file_path="/r/a.py")
        assert breaker.admit(tool_call).allowed
        breaker.observe(ToolResult(call_id=tool_call.call_id, text="same"))
    pending = call("Read", file_path="/r/a.py")
    assert breaker.admit(pending).allowed  # the third identical call; its result comes later
    again = AgentBreaker.resumed(decode(encode(breaker.saved()), SavedBreaker), limits=limits)
    again.observe(ToolResult(call_id=pending.call_id, text="same"))
    fourth = again.admit(call("Read", file_path="/r/a.py"))
    assert not fourth.allowed and fourth.trip is not None
    assert fourth.trip.kind is BreakerKind.LOOP
    assert again.saved().tool_calls == 4


def test_a_call_seen_once_is_saved_as_a_repeat_of_one_and_resumes_the_same() -> None:
    limits = BreakerLimits(max_repeat_identical=3, max_consecutive_failures=9)
    breaker = AgentBreaker(limits=limits)
    passed, failed = call("Read", file_path="/r/a.py"), bash("make lint")
    for tool_call, result in (
        (passed, ToolResult(call_id=passed.call_id, text="same text")),
        (failed, ToolResult(call_id=failed.call_id, text="error: E1 at x.py", exit_code=2)),
    ):
        assert breaker.admit(tool_call).allowed
        breaker.observe(result)
    repeats = breaker.saved().repeats
    assert repeats[call_key("Read", passed.arguments)] == (1, output_digest("same text"), None)
    streak, digest, printed = repeats[call_key("Bash", failed.arguments)]
    assert (streak, digest) == (1, None)
    assert printed == tuple(sorted(failure_print("error: E1 at x.py")))
    again = AgentBreaker.resumed(decode(encode(breaker.saved()), SavedBreaker), limits=limits)
    for copy in (breaker, again):  # both trip on the third identical call, not before
        for n in (2, 3):
            tool_call = call("Read", file_path="/r/a.py")
            admission = copy.admit(tool_call)
            if n == 3:
                assert admission.trip is not None and admission.trip.kind is BreakerKind.LOOP
            else:
                assert admission.allowed
                copy.observe(ToolResult(call_id=tool_call.call_id, text="same text"))


def test_store_paths_and_reset(tmp_path: Path) -> None:
    path = breaker_path(tmp_path, "s1", "t1")
    assert path == tmp_path / ".seawall" / "s1" / "agents" / "t1" / "breaker.json"
    with open_breaker(tmp_path, "s1", "t1", limits=BreakerLimits(max_consecutive_failures=1)) as b:
        tool_call = bash("false")
        b.admit(tool_call)
        b.observe(ToolResult(call_id=tool_call.call_id, text="boom", exit_code=1))
    loaded = load_breaker(tmp_path, "s1", "t1")
    assert loaded.trip is not None and loaded.trip.kind is BreakerKind.CONSECUTIVE_FAILURES
    assert reset_agent_breaker(tmp_path, "s1", "t1") is True
    assert load_breaker(tmp_path, "s1", "t1").trip is None
    assert reset_agent_breaker(tmp_path, "s1", "t1") is False


def test_a_corrupt_breaker_file_is_a_state_error(tmp_path: Path) -> None:
    path = breaker_path(tmp_path, "s1", "t1")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(StateError, match=r"breaker\.json"):
        load_breaker(tmp_path, "s1", "t1")


def test_separate_processes_share_one_breaker(tmp_path: Path) -> None:
    save_breaker(tmp_path, "s1", "t1", AgentBreaker(agent="t1", clock=time.time))
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from seawall.breakers import open_breaker\n"
        "from seawall.events import ToolCall, ToolResult\n"
        "from seawall.model import BreakerLimits\n"
        "limits = BreakerLimits(max_repeat_identical=3)\n"
        "with open_breaker(Path(sys.argv[1]), 's1', 't1', limits=limits) as b:\n"
        "    c = ToolCall(call_id=sys.argv[2], name='Bash', arguments={'command': 'ls'})\n"
        "    a = b.admit(c)\n"
        "    if a.allowed: b.observe(ToolResult(call_id=c.call_id, text='same'))\n"
        "    print('allowed' if a.allowed else 'refused')\n"
    )  # fmt: skip
    answers = [
        subprocess.run([sys.executable, "-c", script, str(tmp_path), f"p{n}"],
                       capture_output=True, text=True, check=True).stdout.strip()
        for n in range(4)
    ]  # fmt: skip
    assert answers == ["allowed", "allowed", "refused", "refused"]


# -- BLOCKED.md ------------------------------------------------------------------------------


def test_blocked_md_gets_one_note_per_trip(tmp_path: Path) -> None:
    loop = Trip(kind=BreakerKind.LOOP, evidence="`Read a.py` ran 4 times", count=4, limit=4, at=0)
    edits = Trip(kind=BreakerKind.UNVERIFIED_EDITS, evidence="25 edits", count=25, limit=25, at=0)
    append_blocked(tmp_path, "s1", loop, agent="t1", wave=2, snapshot="wip: commit abc123")
    path = append_blocked(tmp_path, "s1", edits, agent="t2", clock=lambda: 0.0)
    text = path.read_text()
    assert path == blocked_path(tmp_path, "s1")
    assert text.startswith("# BLOCKED") and text.count("# BLOCKED") == 1
    assert text.count("\n## ") == 2
    assert "wave 2, agent `t1` · breaker/loop" in text
    assert "`Read a.py` ran 4 times" in text and "wip: commit abc123" in text
    assert "**Next action:** stop repeating the call" in text
    assert "1970-01-01 00:00:00Z" in text
    assert "no snapshot: this trip has a way out" in text


def test_blocked_note_goes_to_any_given_path(tmp_path: Path) -> None:
    trip = Trip(kind=BreakerKind.TOOL_BUDGET, evidence="401 calls", count=401, limit=400, at=0)
    path = append_blocked_note(tmp_path / "plans" / "BLOCKED.md", trip, agent="t3", wave=1)
    text = path.read_text()
    assert "breaker/tool-budget" in text and "401 calls" in text and "agent `t3`" in text
    assert "no snapshot recorded" in text


# written by the breaker before its state became a codec record: the shape is unchanged
_SAVED_BEFORE = (
    '{"agent": "t1", "background": {"names": ["out.log"]}, "cleanup_used": 0,'
    ' "command_failures": {"pytest -q": [[["98f6081757", "c6ad7e408c"], 1]]},'
    ' "consecutive_failures": 0, "consecutive_polls": 0, "edits_since_verify": 0,'
    ' "files": [], "pending": {"c3": ["Read:{\\"file_path\\":\\"/r/a.py\\"}", "Read", null,'
    ' [], false]}, "repeats": {"Bash:{\\"command\\":\\"make > out.log &\\"}": [1, "=ok", null],'
    ' "Bash:{\\"command\\":\\"pytest -q\\"}": [1, null, ["98f6081757", "c6ad7e408c"]]},'
    ' "schema": 2, "scope_denials": 0, "started_at": 100.0, "tool_calls": 3, "trip": null,'
    ' "warned": false}'
)


def test_a_state_file_of_the_previous_writer_resumes_and_saves_the_same(tmp_path: Path) -> None:
    path = breaker_path(tmp_path, "s1", "t1")
    path.parent.mkdir(parents=True)
    path.write_text(_SAVED_BEFORE + "\n")
    breaker = load_breaker(tmp_path, "s1", "t1")
    assert breaker.tool_calls == 3 and breaker.agent == "t1"
    assert breaker.background.is_watched_read("/w/out.log")
    save_breaker(tmp_path, "s1", "t1", breaker)
    # the same, with the one field added since: the last verify run (none seen yet)
    assert json.loads(path.read_text()) == {**json.loads(_SAVED_BEFORE), "last_verify": None}


@pytest.mark.parametrize(
    ("change", "named"),
    [({"tool_calls": "3"}, r"\$\.tool_calls"), ({"schema": 9}, "unknown schema 9")],
)
def test_a_bad_state_file_names_the_field(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    path = breaker_path(tmp_path, "s1", "t1")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**json.loads(_SAVED_BEFORE), **change}))
    with pytest.raises(StateError, match=named):
        load_breaker(tmp_path, "s1", "t1")
