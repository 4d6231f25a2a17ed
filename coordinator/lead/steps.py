"""``seawall next``: the one step a lead agent loops on, and the checks on what it hands back.

The loop, whole::

    seawall next PLAN --json                       # prepares wave 1: prompts, workspaces
    # ... dispatch each agent, collect its final text ...
    seawall next --json --input outputs.json       # reviews and merges; prepares the next
    # ... until the answer says "done": true

``next_step`` decides from the ledger what comes next: with outputs for the dispatched
wave it reviews that wave (and then prepares the next one, so one call moves the loop a
whole step); with a wave dispatched and no outputs it shows that wave again (a lead that
lost its context can ask again); otherwise it prepares the next wave; when nothing is
left it finishes the session (files what is missing: the one step that does). A review
that halts the session answers ``"action": "halted"``. Every answer carries
``"schema"``, ``"action"`` and the session's ``"phase"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from msgspec import UNSET, UnsetType

from seawall.config.fields import suggest
from seawall.errors import ConfigurationError, StateError
from seawall.session.engine import Session
from seawall.session.step_types import Document, PreparedWave, WaveReport
from seawall.state.ledger import Halt, SessionPhase, WavePhase

__all__ = [
    "NEXT_SCHEMA",
    "NextAction",
    "NextAnswer",
    "dispatched_tasks",
    "next_step",
    "parse_outputs",
    "read_outputs",
]

NEXT_SCHEMA = "seawall.next/1"


def read_outputs(path: Path | None, stdin_text: str | None = None) -> object:
    """The lead's JSON, from ``path`` or the given standard input text, parsed."""
    where = str(path) if path is not None else "standard input"
    if path is not None:
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigurationError(f"--input {path}: no such file") from None
        except OSError as exc:
            raise ConfigurationError(f"--input {path}: cannot be read: {exc.strerror}") from None
    else:
        raw = stdin_text or ""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def parse_outputs(
    data: object, tasks: Iterable[str] | None, *, where: str = "input"
) -> dict[str, str]:
    """Check the lead's ``{"outputs": {"TASK": "final text"}}`` against the wave's tasks.

    The ``outputs`` wrapper is required (a bare mapping is refused: it is too easily a
    different document), every key must be a task of the dispatched wave (a misspelt id
    would otherwise leave the real task without output and merge it as partial), and
    every value must be a string. A task with no entry is reviewed as having given no
    output, which the review reports. ``tasks`` None checks the shape alone.
    """
    known = None if tasks is None else list(tasks)
    if not isinstance(data, Mapping) or "outputs" not in data:
        got = (
            f"an object with keys {sorted(map(str, data))}"
            if isinstance(data, Mapping)
            else (f"a JSON {type(data).__name__}")
        )
        raise ConfigurationError(
            f'{where}: expected {{"outputs": {{"TASK": "final text", ...}}}}, got {got}'
        )
    extra = sorted(str(key) for key in data if key != "outputs")
    if extra:
        raise ConfigurationError(f"{where}: unknown key {extra[0]!r}; only 'outputs' is read")
    outputs = data["outputs"]
    if not isinstance(outputs, Mapping):
        raise ConfigurationError(f"{where}: outputs must be an object of task id to final text")
    checked: dict[str, str] = {}
    for task, text in outputs.items():
        if known is not None and task not in known:
            raise ConfigurationError(
                f"{where}: outputs.{task}: not a task of the dispatched wave "
                f"({', '.join(known) or 'none'}){suggest(str(task), known)}"
            )
        if not isinstance(text, str):
            raise ConfigurationError(
                f"{where}: outputs.{task}: the final text must be a string, "
                f"not {type(text).__name__}"
            )
        checked[str(task)] = text
    return checked


def dispatched_tasks(session: Session) -> list[str] | None:
    """The task ids of the wave waiting for review, or None when no wave waits."""
    if session.state is None:
        if not session.store.exists():
            return None
        session.state = session.store.load()
    # a wave session has at most its current wave out; a rolling session one or more
    # dispatches, each reviewed when its agent finished
    out = [
        agent.task
        for wave in session.state.waves
        if wave.phase is WavePhase.DISPATCHED
        for agent in wave.agents
    ]
    return out or None


async def next_step(session: Session, data: object | None = None) -> NextAnswer:
    """Move the lead's loop one step; ``data`` is the lead's outputs document, if any."""
    waiting = dispatched_tasks(session)
    review: WaveReport | None = None
    if data is not None:
        if waiting is None:
            raise StateError(
                f"session {session.session_id}: outputs were given but no wave is waiting "
                "for review; run `seawall next` without --input to prepare one"
            )
        outputs = parse_outputs(data, waiting)
        review = await session.review_wave(outputs)
    elif waiting is not None:
        # shows the dispatched wave again; a rolling session hands out a newly ready
        # agent first, when one may start beside those out
        prepared = await session.prepare_wave()
        if prepared is not None:
            again = _handed_out(prepared, waiting)
            return _answer(session, NextAction.DISPATCH, prepared=prepared, again=again)
    phase = session.state.phase if session.state is not None else SessionPhase.RUNNING
    if phase is SessionPhase.HALTED:
        return _answer(session, NextAction.HALTED, review=review)
    if phase is SessionPhase.DONE:
        return _answer(session, NextAction.DONE, review=review)
    out = dispatched_tasks(session) or []
    prepared = await session.prepare_wave()
    if session.state is not None and session.state.phase is SessionPhase.HALTED:
        return _answer(session, NextAction.HALTED, review=review)  # session_minutes ran out
    if prepared is None:
        await session.finish()
        return _answer(session, NextAction.DONE, review=review)
    again = _handed_out(prepared, out)
    return _answer(session, NextAction.DISPATCH, prepared=prepared, review=review, again=again)


def _handed_out(prepared: PreparedWave, out: Iterable[str]) -> bool:
    """Whether every agent of ``prepared`` is one the lead already has out."""
    return {agent.task for agent in prepared.agents} <= set(out)


class NextAction(StrEnum):
    """What the lead does after an answer of ``seawall next``."""

    DISPATCH = "dispatch"  # dispatch the wave the answer holds
    HALTED = "halted"  # nothing: the session halted (see the answer's halt)
    DONE = "done"  # nothing: the session is finished


@dataclass(frozen=True, slots=True, kw_only=True)
class NextAnswer(Document):
    """One answer of ``seawall next``: what the lead does now (``action``: ``dispatch``,
    ``halted`` or ``done``), the wave just reviewed, the wave to dispatch (``again``
    when it is the one already dispatched), why the session halted, and the next step
    in words. A field that does not belong to the action is left out of the document."""

    schema: str = field(default=NEXT_SCHEMA, init=False)
    session: str
    action: NextAction
    done: bool
    phase: SessionPhase
    reviewed: WaveReport | UnsetType = UNSET
    wave: PreparedWave | UnsetType = UNSET
    again: bool | UnsetType = UNSET
    halt: Halt | UnsetType | None = UNSET
    then: str


def _answer(
    session: Session,
    action: NextAction,
    *,
    prepared: PreparedWave | None = None,
    review: WaveReport | None = None,
    again: bool = False,
) -> NextAnswer:
    phase = session.state.phase if session.state is not None else SessionPhase.RUNNING
    answer = NextAnswer(
        session=session.session_id,
        action=action,
        done=action is NextAction.DONE,
        phase=phase,
        reviewed=UNSET if review is None else review,
        then="nothing is left: the session is finished",
    )
    if prepared is not None:
        return replace(
            answer,
            wave=prepared,
            again=again,
            then="dispatch every agent with its prompt in its workspace, then run "
            f"`seawall next --session {session.session_id} --input OUTPUTS.json` with "
            '{"outputs": {"TASK": "the agent\'s final message"}}',
        )
    if action is NextAction.HALTED:
        return replace(
            answer,
            halt=session.state.halt if session.state is not None else None,
            then="the session halted (see halt): fix the cause, then "
            f"`seawall resume --session {session.session_id}`",
        )
    return answer
