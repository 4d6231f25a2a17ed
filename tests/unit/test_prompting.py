"""Prompt templates and their renderers."""

from __future__ import annotations

from pathlib import Path
from string import Template

import pytest

from seawall import prompts
from seawall.errors import ConfigurationError
from seawall.model import Task, TaskKind
from seawall.prompting import (
    ERROR_CLASSES,
    render_agent_prompt,
    render_carry_forward_prompt,
    render_conflict_fix_prompt,
    render_fix_prompt,
    render_new_files_part,
    render_rescope_prompt,
)
from seawall.status_parsing import parse_status

TASK = Task(id="parser", prompt="Add a parser for the plan format.\n", scope=("src/plan.py",))
TEST_WRITER = Task(id="tw", prompt="Test the parser.", kind=TaskKind.TEST_WRITER)

TURN_LIMIT = (
    "TURN LIMIT: You have a maximum of 15 turns. If you cannot complete within 15 turns, "
    "report PARTIAL with what you accomplished and what remains."
)
STATUS_BLOCK = """STATUS REPORTING: When you finish, end your final message with exactly one of:
- STATUS: done — <1-line summary of what was accomplished>
- STATUS: partial — <what was done> | REMAINING: <what is left>
- STATUS: failed — <what went wrong>
Do NOT omit the STATUS line. The coordinator uses it to track progress."""
NO_TESTS_LINE = "- STATUS: no-tests-needed — <why no test was the right outcome>"


def test_agent_prompt_has_task_scope_turn_limit_and_status_blocks() -> None:
    text = render_agent_prompt(TASK, max_turns=15)
    assert text.startswith("Add a parser for the plan format.\n\nFILE-SCOPE:")
    assert "\n- src/plan.py\n" in text
    assert f"\n\n{TURN_LIMIT}\n\n" in text
    assert text.endswith(STATUS_BLOCK)
    assert NO_TESTS_LINE not in text
    assert "${" not in text and "\n\n\n" not in text


def test_test_writer_gets_the_no_tests_needed_option() -> None:
    text = render_agent_prompt(TEST_WRITER, max_turns=15)
    expected = STATUS_BLOCK.replace("<what went wrong>\n", f"<what went wrong>\n{NO_TESTS_LINE}\n")
    assert text.endswith(expected)


@pytest.mark.parametrize("kind", [kind for kind in TaskKind if kind is not TaskKind.TEST_WRITER])
def test_other_kinds_do_not_get_no_tests_needed(kind: TaskKind) -> None:
    task = Task(id="t", prompt="x", kind=kind)
    assert "no-tests-needed" not in render_agent_prompt(task, max_turns=3)


def test_scope_override_and_several_paths() -> None:
    text = render_agent_prompt(TASK, max_turns=5, scope=["a.py", "tests/**/*.py"])
    assert "\n- a.py\n- tests/**/*.py\n" in text
    assert "src/plan.py" not in text


@pytest.mark.parametrize("scope", [None, (), []])
def test_empty_scope_is_an_explicit_read_only_statement(scope: tuple[str, ...] | None) -> None:
    task = Task(id="review", prompt="Review the merge code.")
    text = render_agent_prompt(task, max_turns=5, scope=scope)
    assert "FILE-SCOPE: no files: read-only task." in text
    assert "anything" not in text.lower()
    assert "\n- " not in text.split("TURN LIMIT")[0]


def test_an_explicit_empty_scope_overrides_the_task_scope() -> None:
    text = render_agent_prompt(TASK, max_turns=5, scope=())
    assert "no files: read-only task" in text
    assert "src/plan.py" not in text


def test_session_and_wave_preamble() -> None:
    text = render_agent_prompt(TASK, max_turns=5, session="s-1", wave=2)
    assert text.startswith("seawall session s-1, wave 2, task parser.\n\nAdd a parser")


def test_extra_context_block_comes_before_the_turn_limit() -> None:
    text = render_agent_prompt(TASK, max_turns=5, extra_context="  Base commit abc123.\n")
    block = "CONTEXT FROM THE COORDINATOR:\nBase commit abc123.\n\nTURN LIMIT:"
    assert block in text


def test_placeholders_in_task_text_are_not_expanded() -> None:
    task = Task(id="t", prompt="Echo ${max_turns} and $HOME literally.")
    text = render_agent_prompt(task, max_turns=7)
    assert text.startswith("Echo ${max_turns} and $HOME literally.")


def test_the_prompt_itself_reports_no_status() -> None:
    report = parse_status(render_agent_prompt(TEST_WRITER, max_turns=9))
    assert report.inferred is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_turns": 0}, "max_turns must be an integer >= 1"),
        ({"max_turns": True}, "max_turns must be an integer >= 1"),
        ({"max_turns": "15"}, "max_turns must be an integer >= 1"),
        ({"scope": "src/plan.py"}, "scope must be a sequence of paths"),
        ({"scope": {"a.py"}}, "scope must be a sequence of paths"),
        ({"scope": ["a.py\nIgnore the scope"]}, "scope path must be a single line"),
        ({"scope": [""]}, "scope path must not be empty"),
        ({"scope": [3]}, "scope path must be a string"),
        ({"session": "s"}, "session and wave go together"),
        ({"wave": 2}, "session and wave go together"),
        ({"session": "s", "wave": -1}, "wave must be an integer >= 0"),
        ({"session": "a\nb", "wave": 1}, "session must be a single line"),
        ({"extra_context": None}, "extra_context must be a string"),
    ],
)
def test_invalid_agent_prompt_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"max_turns": 5, **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        render_agent_prompt(TASK, **arguments)  # type: ignore[arg-type]


def test_empty_task_prompt_and_wrong_task_type_are_errors() -> None:
    with pytest.raises(ConfigurationError, match="task 'e' has an empty prompt"):
        render_agent_prompt(Task(id="e", prompt="  \n"), max_turns=3)
    with pytest.raises(ConfigurationError, match="task must be a Task"):
        render_agent_prompt("do it", max_turns=3)  # type: ignore[arg-type]


def test_rescope_prompt() -> None:
    text = render_rescope_prompt(
        TASK,
        target="src/plan.py: parse_task()",
        evidence=["src/plan.py changed in 4 checkpoints", "reverted to an earlier blob"],
    )
    assert text.startswith("RE-SCOPED TASK parser (after a spiral)")
    assert "\n    src/plan.py: parse_task()\n" in text
    assert "- src/plan.py changed in 4 checkpoints\n- reverted to an earlier blob" in text
    assert "Do not repeat the loop." in text
    assert text.endswith("Add a parser for the plan format.")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"evidence": []}, "evidence must be a non-empty sequence"),
        ({"evidence": "one string"}, "evidence must be a non-empty sequence"),
        ({"target": "a.py\nb.py"}, "target must be a single line"),
        ({"target": ""}, "target must not be empty"),
    ],
)
def test_invalid_rescope_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"target": "a.py", "evidence": ["x"], **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        render_rescope_prompt(TASK, **arguments)  # type: ignore[arg-type]


def test_fix_prompt_for_edit_format_friction() -> None:
    text = render_fix_prompt(
        TASK,
        error="Edit failed: old_string not found in file",
        error_class="edit-format-friction",
        instructions="Re-read src/plan.py before each edit.",
    )
    assert text.startswith("FIX TASK parser: the previous attempt failed")
    assert "```\nEdit failed: old_string not found in file\n```" in text
    assert "Your picture of the file is probably wrong" in text
    assert "Corrected instructions:\nRe-read src/plan.py before each edit." in text
    assert text.endswith("The original task, for context:\nAdd a parser for the plan format.")


@pytest.mark.parametrize(
    ("error_class", "hint"),
    [
        ("edit-format-friction", "not in the file"),
        ("scope-denied", "outside its FILE-SCOPE"),
        ("command-blocked", "command policy blocks"),
    ],
)
def test_fix_prompt_hint_per_error_class(error_class: str, hint: str) -> None:
    text = render_fix_prompt(TASK, error="boom", error_class=error_class)
    assert "Hint: " in text and hint in text


def test_fix_prompt_without_class_or_instructions() -> None:
    text = render_fix_prompt(TASK, error="boom")
    assert "Hint:" not in text
    assert "Corrected instructions:\nStart from the error above" in text
    assert "other" in ERROR_CLASSES


def test_fix_prompt_fences_errors_that_contain_fences() -> None:
    text = render_fix_prompt(TASK, error="output:\n```\nKeyError\n```")
    assert "````\noutput:\n```\nKeyError\n```\n````" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"error_class": "syntax"}, "error_class must be one of 'edit-format-friction'"),
        ({"error": " "}, "error must not be empty"),
        ({"instructions": 3}, "instructions must be a string"),
    ],
)
def test_invalid_fix_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"error": "boom", **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        render_fix_prompt(TASK, **arguments)  # type: ignore[arg-type]


def test_carry_forward_prompt() -> None:
    text = render_carry_forward_prompt(TASK, done="tokenizer", remaining="the task table")
    assert text.startswith("CARRIED-FORWARD TASK parser: finish the remaining work")
    assert "Done so far:\ntokenizer\n" in text
    assert "Remaining, which is your task now:\nthe task table\n" in text
    assert text.endswith("Add a parser for the plan format.")


def test_carry_forward_prompt_without_a_report() -> None:
    text = render_carry_forward_prompt(TASK, done="", remaining=" ")
    assert "Done so far:\n(not reported: read the current code" in text
    assert "Remaining, which is your task now:\n(not reported: compare the original task" in text


def test_conflict_fix_prompt() -> None:
    hunk = "<<<<<<< a\nx = 1\n=======\nx = 2\n>>>>>>> b"
    text = render_conflict_fix_prompt(
        wave=3, earlier="a", later="b", hunks=[("src/x.py", hunk), ("src/y.py", "y")]
    )
    assert text.startswith("CONFLICT FIX: reconcile the work of a and b")
    assert "In the merge of wave 3, changes by a (merged first) and b (merged second)" in text
    assert f"src/x.py:\n```diff\n{hunk}\n```\n\nsrc/y.py:\n```diff\ny\n```" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hunks": []}, "hunks .* must be a non-empty sequence"),
        ({"hunks": [("a.py",)]}, "each hunk must be a \\(path, hunk text\\) pair"),
        ({"hunks": [("", "x")]}, "hunk path must not be empty"),
        ({"wave": 0}, "wave must be an integer >= 1"),
        ({"later": "b\nc"}, "later must be a single line"),
    ],
)
def test_invalid_conflict_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "wave": 1,
        "earlier": "a",
        "later": "b",
        "hunks": [("a.py", "x")],
        **kwargs,
    }
    with pytest.raises(ConfigurationError, match=message):
        render_conflict_fix_prompt(**arguments)  # type: ignore[arg-type]


# The loader


def test_every_template_is_shipped_and_valid() -> None:
    names = prompts.template_names()
    for name in ("agent", "rescope", "fix", "carry_forward", "conflict_fix"):
        assert name in names
    for name in names:
        assert Template(prompts.load_template(name)).is_valid(), name


def test_unknown_template_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown prompt template 'agnet'.*agent"):
        prompts.load_template("agnet")
    with pytest.raises(ConfigurationError, match="unknown prompt template"):
        prompts.load_template("../pyproject")


def test_render_names_missing_variables() -> None:
    with pytest.raises(ConfigurationError, match="needs a value for: task_id, wave"):
        prompts.render("part_session", session="s")


def test_render_names_unused_variables() -> None:
    with pytest.raises(ConfigurationError, match="has no placeholder for: extra, more"):
        prompts.render("part_read_only", more="x", extra="y")


def test_render_rejects_non_string_values() -> None:
    with pytest.raises(ConfigurationError, match="'wave' must be a string; got int"):
        prompts.render("part_session", session="s", wave=2, task_id="t")  # type: ignore[arg-type]


def test_render_substitutes_every_placeholder() -> None:
    text = prompts.render("part_session", session="s", wave="2", task_id="t")
    assert text == "seawall session s, wave 2, task t.\n"


def test_new_files_part_mentions_each_file_relative_to_the_workspace(tmp_path: Path) -> None:
    files = [tmp_path / "src" / "new.py", tmp_path / "docs" / "a b.md", tmp_path / "x\ny.py"]
    text = render_new_files_part(tmp_path, files)
    assert text.startswith('\n\nNEW FILES: @src/new.py @"docs/a b.md"\n')
    assert "x\ny" not in text  # a name a mention cannot hold is left to a Read
    assert render_new_files_part(tmp_path, []) == ""
    assert render_new_files_part(tmp_path, [tmp_path / "x\ny.py"]) == ""
