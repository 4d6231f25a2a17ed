"""Render the prompts agents get, from the templates in the ``prompts`` package.

``render_agent_prompt`` builds what every dispatched agent reads: the task text, its
FILE-SCOPE, the TURN LIMIT block and the STATUS REPORTING block (plus the
``no-tests-needed`` option for test-writer tasks).

The recovery renderers (re-scope after a SPIRAL, fix after a FAILED, carry forward a
PARTIAL, reconcile a merge conflict) return the *task text* of the follow-up task for
the next wave. Put it in a ``Task`` and dispatch it through ``render_agent_prompt``,
so the follow-up agent gets its FILE-SCOPE, TURN LIMIT and STATUS blocks like any other.

All wording lives in the template files; this module only validates and assembles.
Invalid arguments raise ``ConfigurationError``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from seawall import prompts
from seawall.errors import ConfigurationError
from seawall.model import Task, TaskKind

__all__ = [
    "ERROR_CLASSES",
    "render_agent_prompt",
    "render_carry_forward_prompt",
    "render_conflict_fix_prompt",
    "render_continue_prompt",
    "render_fix_prompt",
    "render_new_files_part",
    "render_rescope_prompt",
]

#: Error classes of the error echo taxonomy; all but ``other`` carry a hint.
ERROR_CLASSES = ("edit-format-friction", "scope-denied", "command-blocked", "other")


def render_agent_prompt(
    task: Task,
    *,
    max_turns: int,
    scope: Sequence[str] | None = None,
    session: str = "",
    wave: int = 0,
    extra_context: str = "",
    workspace: str = "",
) -> str:
    """The full prompt for the agent running ``task``.

    ``workspace``, when given, adds a WORKSPACE line after the session line: the
    directory all the agent's work happens in (a lead's subagent starts in the lead's
    checkout, so it must be told where its worktree is).

    ``scope`` defaults to ``task.scope``; an empty scope renders as an explicit
    read-only statement. ``session`` and ``wave`` are given together (a session name
    and a wave number >= 1) or not at all. ``max_turns`` is the limit the coordinator
    enforces (the caller resolves a task override against the wave's value).
    """
    _check_task(task)
    turns = _positive_int(max_turns, "max_turns")
    paths = task.scope if scope is None else scope
    return _render(
        "agent",
        preamble=_block(_session_line(task, session, wave)) + _block(_workspace(workspace)),
        task=task.prompt.strip(),
        file_scope=_file_scope(paths),
        context=_block(_context(extra_context)),
        max_turns=str(turns),
        test_writer_option=_test_writer_option(task),
    )


def render_rescope_prompt(task: Task, *, target: str, evidence: Sequence[str]) -> str:
    """Task text re-dispatching a SPIRAL ``task``, narrowed to one file or function.

    ``target`` names the single file or function; ``evidence`` lists the spiral
    signals (e.g. "src/a.py changed in 4 checkpoints").
    """
    _check_task(task)
    return _render(
        "rescope",
        task_id=task.id,
        target=_line(target, "target"),
        evidence=_bullets(evidence, "evidence"),
        original_task=task.prompt.strip(),
    )


def render_fix_prompt(
    task: Task, *, error: str, error_class: str = "other", instructions: str = ""
) -> str:
    """Task text for a fix task after ``task`` FAILED.

    ``error`` is the error context the agent met; ``error_class`` is one of
    ``ERROR_CLASSES`` and adds its hint (for ``edit-format-friction``: the agent's
    picture of the file is wrong). Without ``instructions`` a default correction is used.
    """
    _check_task(task)
    if error_class not in ERROR_CLASSES:
        raise ConfigurationError(
            f"error_class must be one of {', '.join(map(repr, ERROR_CLASSES))}; got {error_class!r}"
        )
    hint = "" if error_class == "other" else _block(_render(f"hint_{error_class}"))
    corrected = _text(instructions, "instructions", required=False) or _render("part_fix_default")
    return _render(
        "fix",
        task_id=task.id,
        error=_fenced(_text(error, "error")),
        hint=hint,
        instructions=corrected,
        original_task=task.prompt.strip(),
    )


def render_carry_forward_prompt(task: Task, *, done: str, remaining: str) -> str:
    """Task text carrying a PARTIAL ``task``'s remaining work into the next wave.

    ``done`` and ``remaining`` come from the agent's report; when either is empty the
    prompt says it was not reported and tells the agent how to find out.
    """
    _check_task(task)
    return _render(
        "carry_forward",
        task_id=task.id,
        done=_text(done, "done", required=False) or _render("part_done_unreported"),
        remaining=_text(remaining, "remaining", required=False)
        or _render("part_remaining_unreported"),
        original_task=task.prompt.strip(),
    )


def render_conflict_fix_prompt(
    *, wave: int, earlier: str, later: str, hunks: Sequence[tuple[str, str]]
) -> str:
    """Task text turning a merge conflict into a fix task.

    ``earlier`` and ``later`` name the tasks in merge order; ``hunks`` holds
    ``(path, hunk text)`` pairs, several per path if needed.
    """
    rendered = [_hunk(item) for item in _items(hunks, "hunks (path, hunk text) pairs")]
    return _render(
        "conflict_fix",
        wave=str(_positive_int(wave, "wave")),
        earlier=_line(earlier, "earlier"),
        later=_line(later, "later"),
        hunks="\n\n".join(rendered),
    )


def render_continue_prompt(*, happened: str, next_step: str, moved: bool) -> str:
    """Task text continuing an agent's own conversation: what happened to it
    (``happened``, one line), what it does now (``next_step``) and, when it continues in a
    new workspace (``moved``), that its files are there. Dispatch it through
    ``render_agent_prompt`` like any task text, so the FILE-SCOPE, TURN LIMIT (the turns
    left) and STATUS blocks come with it."""
    return _render(
        "continue",
        happened=_line(happened, "happened"),
        moved=_block(_render("part_moved")) if moved else "",
        next_step=_text(next_step, "next_step"),
    )


def _render(name: str, **variables: str) -> str:
    return prompts.render(name, **variables).rstrip("\n")


def _check_task(task: object) -> None:
    if not isinstance(task, Task):
        raise ConfigurationError(f"task must be a Task; got {type(task).__name__}")
    if not task.prompt.strip():
        raise ConfigurationError(f"task {task.id!r} has an empty prompt")


def _session_line(task: Task, session: str, wave: int) -> str:
    if not isinstance(wave, int) or isinstance(wave, bool) or wave < 0:
        raise ConfigurationError(f"wave must be an integer >= 0; got {wave!r}")
    name = _text(session, "session", required=False)
    if not name and wave == 0:
        return ""
    if not name or wave == 0:
        raise ConfigurationError(
            "session and wave go together: give a session name and a wave >= 1, or neither"
        )
    return _render("part_session", session=_line(name, "session"), wave=str(wave), task_id=task.id)


def _workspace(workspace: str) -> str:
    path = _text(workspace, "workspace", required=False)
    return _render("part_workspace", workspace=_line(path, "workspace")) if path else ""


def _file_scope(paths: Sequence[str]) -> str:
    if isinstance(paths, str | bytes) or not isinstance(paths, Sequence):
        raise ConfigurationError("scope must be a sequence of paths (list or tuple), not a string")
    if not paths:
        return _render("part_read_only")
    lines = [f"- {_line(path, 'scope path')}" for path in paths]
    return _render("part_file_scope", paths="\n".join(lines))


def render_new_files_part(workspace: Path, files: Sequence[Path]) -> str:
    """The prompt part naming the scope files that did not exist and were created empty
    for the agent (the sandbox grants an absent file only as an existing one), each as a
    Claude Code file mention (``@path``, quoted when it holds a space), so the CLI has
    them as read and its ``Write`` does not ask for a ``Read`` first. "" for none."""
    if not files:
        return ""
    root = Path(os.path.realpath(workspace))
    names = []
    for path in files:
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        if "\n" in shown or "\r" in shown or '"' in shown:
            continue  # cannot be mentioned: the agent reads it before writing instead
        names.append(f'@"{shown}"' if " " in shown else f"@{shown}")
    return "\n\n" + _render("part_new_files", files=" ".join(names)) if names else ""


def _context(extra_context: str) -> str:
    text = _text(extra_context, "extra_context", required=False)
    return _render("part_context", extra_context=text) if text else ""


def _test_writer_option(task: Task) -> str:
    if task.kind is TaskKind.TEST_WRITER:
        return _render("part_no_tests_needed") + "\n"
    return ""


def _hunk(item: object) -> str:
    if not isinstance(item, tuple) or len(item) != 2:
        raise ConfigurationError(f"each hunk must be a (path, hunk text) pair; got {item!r}")
    path, text = item
    return f"{_line(path, 'hunk path')}:\n{_fenced(_text(text, 'hunk text'), info='diff')}"


def _block(text: str) -> str:
    """An optional paragraph: empty, or the text followed by the blank line that ends it."""
    return f"{text}\n\n" if text else ""


def _fenced(text: str, *, info: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _bullets(items: Sequence[str], name: str) -> str:
    return "\n".join(f"- {_text(item, name)}" for item in _items(items, name))


def _items(value: object, name: str) -> Sequence[object]:
    """``value`` as a non-empty sequence that is not a lone string."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ConfigurationError(f"{name} must be a non-empty sequence (list or tuple)")
    return value


def _text(value: object, name: str, *, required: bool = True) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} must be a string; got {type(value).__name__}")
    text = value.strip()
    if required and not text:
        raise ConfigurationError(f"{name} must not be empty")
    return text


def _line(value: object, name: str) -> str:
    text = _text(value, name)
    if "\n" in text or "\r" in text:
        raise ConfigurationError(f"{name} must be a single line; got {text!r}")
    return text


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1; got {value!r}")
    return value
