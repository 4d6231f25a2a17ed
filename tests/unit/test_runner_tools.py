"""Tool-name mapping, typed runner options, and the opencode stream parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.adapters.runners.codex import CodexRunner
from seawall.adapters.runners.opencode import OPENCODE_TOOLS, OpenCodeJsonParser, OpenCodeRunner
from seawall.adapters.runners.streaming import Tool, ToolNames
from seawall.errors import ConfigurationError
from seawall.events import (
    Final,
    Message,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    edited_paths,
    read_path,
    shell_command,
)
from seawall.model import RunnerSpec
from seawall.runner import build_runner, runner_options

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id="c1", name=name, arguments=arguments)


def test_a_clis_tools_become_canonical_with_their_argument_keys() -> None:
    write = OPENCODE_TOOLS.normalise(call("write", filePath="src/a.py", content="x"))
    assert isinstance(write, ToolCall)
    assert (write.name, dict(write.arguments)) == (
        "Write",
        {"file_path": "src/a.py", "content": "x"},
    )
    assert edited_paths(write) == ("src/a.py",)
    edit = OPENCODE_TOOLS.normalise(call("edit", filePath="b.py", oldString="o", newString="n"))
    assert isinstance(edit, ToolCall) and edit.name == "Edit"
    assert dict(edit.arguments) == {"file_path": "b.py", "old_string": "o", "new_string": "n"}
    read = OPENCODE_TOOLS.normalise(call("read", filePath="c.py", offset=10))
    assert isinstance(read, ToolCall) and read_path(read) == "c.py"
    bash = OPENCODE_TOOLS.normalise(call("bash", command="ls", description="list"))
    assert isinstance(bash, ToolCall) and shell_command(bash) == "ls"
    result = OPENCODE_TOOLS.normalise(ToolResult(call_id="c1", name="write"))
    assert isinstance(result, ToolResult) and result.name == "Write"
    untouched = call("Write", file_path="d.py")
    assert OPENCODE_TOOLS.normalise(untouched) is untouched


def test_an_unmapped_tool_that_may_write_is_refused_and_readers_are_not() -> None:
    names = ToolNames(
        {"write_file": Tool("Write", {"path": "file_path"})}, read_only=frozenset({"plan"})
    )
    reason = names.refusal(call("run_shell_command", command="rm -rf x"))
    assert reason is not None and "'run_shell_command' may write files" in reason
    assert names.refusal(call("replace", file_path="x.py")) is not None
    assert names.refusal(call("frobnicate", target="x")) is not None  # names no path: unknown
    for known in ("Write", "Bash", "Read", "TodoWrite", "write_file", "plan", "read_many_files"):
        assert names.refusal(call(known)) is None, known
    assert names.refusal(call("mcp__fs__list_directory", path="src")) is None


def test_a_mapping_must_name_a_canonical_tool() -> None:
    with pytest.raises(ValueError, match="'WriteFile' is not a canonical tool name"):
        Tool("WriteFile")


def test_runner_options_are_typed_and_name_the_runner_and_field() -> None:
    spec = RunnerSpec(name="oc", kind="opencode", options={"kill_grace": 1, "executable": "x"})
    assert runner_options(spec, {"kill_grace": float, "executable": str}) == {
        "kill_grace": 1.0,
        "executable": "x",
    }
    text = RunnerSpec(name="oc", kind="opencode", options={"kill_grace": "2.5"})
    assert runner_options(text, {"kill_grace": float}) == {"kill_grace": 2.5}
    typo = RunnerSpec(name="oc", kind="opencode", options={"kill_grase": 1})
    with pytest.raises(ConfigurationError) as unknown:
        runner_options(typo, {"kill_grace": float})
    assert str(unknown.value) == (
        "runners.oc.options.kill_grase: unknown option for the opencode runner; "
        "did you mean 'kill_grace'? (known: kill_grace)"
    )
    wrong = RunnerSpec(name="cc", kind="claude-code", options={"permissions": True})
    with pytest.raises(ConfigurationError, match=r"runners\.cc\.options\.permissions: must be str"):
        build_runner(wrong)


def test_from_spec_passes_typed_options_to_the_constructor() -> None:
    claude = build_runner(
        RunnerSpec(name="c", kind="claude-code", options={"permissions": "none", "kill_grace": 3})
    )
    assert isinstance(claude, ClaudeCodeRunner)
    assert (claude.permissions, claude.kill_grace) == ("none", 3.0)
    codex = build_runner(RunnerSpec(name="x", kind="codex", options={"rollout": "off"}))
    assert isinstance(codex, CodexRunner) and codex.rollout == "off"
    with pytest.raises(ConfigurationError, match=r"^runners\.x: options\.rollout must be one of"):
        build_runner(RunnerSpec(name="x", kind="codex", options={"rollout": "sometimes"}))
    with pytest.raises(ConfigurationError, match=r"^runners\.o: kill_grace must be seconds >= 0"):
        build_runner(RunnerSpec(name="o", kind="opencode", options={"kill_grace": -1}))
    opencode = build_runner(RunnerSpec(name="o", kind="opencode", model="local/coder"))
    assert isinstance(opencode, OpenCodeRunner)


def test_a_real_opencode_run_parses_into_turns_calls_results_and_a_final() -> None:
    parser = OpenCodeJsonParser(model="scripted/coder")
    events = []
    for line in (CORPUS / "opencode_run.jsonl").read_text().splitlines():
        events += [OPENCODE_TOOLS.normalise(event) for event in parser.feed(line)]
    events += parser.finish()
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2, 3, 4]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["Write", "Write", "Bash"]
    assert edited_paths(calls[0]) == ("/work/repo/src/mine.py",)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [False, True, True]
    assert "PermissionDenied" in results[1].text
    assert results[2].exit_code == 1 and "Permission denied" in results[2].text
    usage = [e for e in events if isinstance(e, Usage)]
    assert len(usage) == 4 and usage[0].input_tokens == 1200 and usage[0].output_tokens == 80
    assert {u.message_id for u in usage} == {u.message_id for u in usage if u.message_id}
    final = events[-1]
    assert isinstance(final, Final) and not final.is_error and final.num_turns == 4
    assert "STATUS: done" in final.text
    assert any(isinstance(e, Message) and "STATUS: done" in e.text for e in events)


def test_an_opencode_run_stopped_mid_work_or_failing_has_no_successful_final() -> None:
    parser = OpenCodeJsonParser()
    parser.feed('{"type":"step_start","part":{}}')
    parser.feed('{"type":"step_finish","part":{"reason":"tool-calls","tokens":{}}}')
    assert parser.finish() == []
    failing = OpenCodeJsonParser()
    failing.feed('{"type":"error","error":{"name":"APIError","data":{"message":"rate limited"}}}')
    assert failing.feed("not json") == []
    (final,) = failing.finish()
    assert isinstance(final, Final) and final.is_error and final.text == "rate limited"
