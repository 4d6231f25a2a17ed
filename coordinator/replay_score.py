"""Scoring the breakers against labelled stretches of recorded transcripts.

A labels file (TOML or JSON) lists stretches of transcripts a careful reader labelled:
``stuck`` with the step where they would stop the agent (``stop_at``), or productive.
``score_labels`` replays each transcript once through ``seawall.replay`` and sorts every
stuck stretch into on time (its first hard trip within ``tolerance`` steps of
``stop_at``), early, late or missed, and every productive stretch into clean, soft
tripped (``unverified-edits``, the trip that costs one check) or hard tripped. So a
change of limits or detectors is measured on any labelled set, including one the
repository's tests never see.

The file::

    root = "../fixtures/transcripts"   # optional: where transcripts are, from this file
    tolerance = 1                      # optional: steps either side of stop_at

    [[stretch]]
    transcript = "marot__spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    stuck = true
    stop_at = 139
    first = 133                        # optional: the stretch, in steps (default: all)
    last = 147
    reason = "the same commit fails on the same Dialyzer finding"

JSON holds the same keys (``{"stretch": [...]}``). Steps count tool calls and run ends,
as ``seawall replay`` prints them.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from seawall.codec import JsonView
from seawall.errors import ConfigurationError
from seawall.model import BreakerLimits, StagnationConfig
from seawall.replay import ReplayRecord, replay_file

__all__ = ["Label", "Outcome", "Score", "StretchScore", "load_labels", "score_labels"]

_LABEL_KEYS = frozenset({"transcript", "stuck", "stop_at", "first", "last", "reason", "breaker"})


class Outcome(StrEnum):
    """What the breakers made of one labelled stretch."""

    ON_TIME = "on time"
    EARLY = "early"
    LATE = "late"
    MISSED = "missed"
    CLEAN = "clean"
    SOFT = "soft trip"
    HARD = "hard trip"


@dataclass(frozen=True, slots=True, kw_only=True)
class Label:
    """One labelled stretch; ``first``/``last`` None: from the start, to the end."""

    transcript: Path
    stuck: bool
    stop_at: int | None = None
    first: int | None = None
    last: int | None = None
    reason: str = ""
    breaker: str = ""  # the breaker a reader expects, shown beside the one that tripped


@dataclass(frozen=True, slots=True, kw_only=True)
class StretchScore:
    """One stretch's outcome, with the trip that decided it (if any)."""

    index: int
    transcript: str
    first: int
    last: int
    stuck: bool
    stop_at: int | None
    outcome: Outcome
    step: int | None = None
    breaker: str = ""
    expected_breaker: str = ""
    kind: str = field(default="stretch", init=False)

    def text(self) -> str:
        what = f"stuck, stop at {self.stop_at}" if self.stuck else "productive"
        by = f" ({self.breaker} at step {self.step})" if self.step is not None else ""
        wanted = (
            f", labelled {self.expected_breaker}"
            if self.expected_breaker and self.expected_breaker != self.breaker
            else ""
        )
        span = f"{self.first}-{self.last}"
        return f"[{self.index}] {self.transcript}:{span} {what}: {self.outcome}{by}{wanted}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """The whole score of a labels file."""

    labels: str
    stuck: int
    on_time: int
    early: int
    late: int
    missed: int
    productive: int
    clean: int
    soft: int
    hard: int
    kind: str = field(default="score", init=False)

    def text(self) -> str:
        return (
            f"{self.labels}: {self.stuck} stuck: {self.on_time} on time, {self.late} late, "
            f"{self.early} early, {self.missed} missed; {self.productive} productive: "
            f"{self.hard} with a hard trip, {self.soft} with only a soft trip, "
            f"{self.clean} clean"
        )


def _field(where: str, data: JsonView, name: str, kind: type, default: Any) -> Any:
    value = data.get(name, default)
    if value is not default and (
        not isinstance(value, kind) or (kind is int and isinstance(value, bool))
    ):
        raise ConfigurationError(f"{where}: {name} must be a {kind.__name__}, not {value!r}")
    return value


def load_labels(path: Path, *, root: Path | None = None) -> tuple[list[Label], int]:
    """The stretches of the labels file at ``path`` and its tolerance; every error
    names the file, the stretch and the field. ``root`` overrides the file's own."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the labels: {exc.strerror}") from exc
    try:
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:  # TOMLDecodeError names the line
        raise ConfigurationError(f"{path}: not a labels file: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path}: a labels file is a table with [[stretch]] entries")
    stretches = data.get("stretch")
    if not isinstance(stretches, list) or not stretches:
        raise ConfigurationError(f"{path}: no [[stretch]] entries")
    where = str(path)
    base = root or path.parent / _field(where, data, "root", str, ".")
    tolerance = _field(where, data, "tolerance", int, 1)
    labels = [_label(f"{path}: stretch[{n}]", entry, base) for n, entry in enumerate(stretches)]
    return labels, tolerance


def _label(where: str, entry: object, base: Path) -> Label:
    if not isinstance(entry, dict):
        raise ConfigurationError(f"{where}: a stretch is a table")
    unknown = sorted(set(entry) - _LABEL_KEYS)
    if unknown:
        raise ConfigurationError(f"{where}: unknown key {unknown[0]!r}")
    transcript = _field(where, entry, "transcript", str, None)
    stuck = _field(where, entry, "stuck", bool, None)
    if transcript is None or stuck is None:
        missing = "transcript" if transcript is None else "stuck"
        raise ConfigurationError(f"{where}: {missing} is required")
    stop_at = _field(where, entry, "stop_at", int, None)
    if stuck and stop_at is None:
        raise ConfigurationError(f"{where}: stop_at is required for a stuck stretch")
    if not stuck and stop_at is not None:
        raise ConfigurationError(f"{where}: stop_at belongs to a stuck stretch only")
    first = _field(where, entry, "first", int, None)
    last = _field(where, entry, "last", int, None)
    if first is not None and last is not None and last < first:
        raise ConfigurationError(f"{where}: last ({last}) is before first ({first})")
    path = Path(transcript)
    return Label(
        transcript=path if path.is_absolute() else base / path,
        stuck=stuck,
        stop_at=stop_at,
        first=first,
        last=last,
        reason=_field(where, entry, "reason", str, ""),
        breaker=_field(where, entry, "breaker", str, ""),
    )


def _soft(record: ReplayRecord) -> bool:
    """A trip with a way out (unverified-edits): it costs one check, it stops nothing."""
    return record.soft


def _judge(
    index: int, label: Label, trips: list[ReplayRecord], steps: int, tolerance: int
) -> StretchScore:
    first = label.first if label.first is not None else 1
    last = label.last if label.last is not None else steps
    inside = [trip for trip in trips if first <= trip.step <= last]
    hard = [trip for trip in inside if not _soft(trip)]
    decided: ReplayRecord | None
    if label.stuck:
        assert label.stop_at is not None
        decided = hard[0] if hard else None
        if decided is None:
            outcome = Outcome.MISSED
        elif decided.step < label.stop_at - tolerance:
            outcome = Outcome.EARLY
        elif decided.step > label.stop_at + tolerance:
            outcome = Outcome.LATE
        else:
            outcome = Outcome.ON_TIME
    else:
        decided = hard[0] if hard else inside[0] if inside else None
        outcome = Outcome.HARD if hard else Outcome.SOFT if inside else Outcome.CLEAN
    return StretchScore(
        index=index,
        transcript=str(label.transcript),
        first=first,
        last=last,
        stuck=label.stuck,
        stop_at=label.stop_at,
        outcome=outcome,
        step=decided.step if decided is not None else None,
        breaker=decided.name if decided is not None else "",
        expected_breaker=f"breaker/{label.breaker}" if label.breaker else "",
    )


def score_labels(
    path: Path,
    *,
    limits: BreakerLimits | None = None,
    stagnation: StagnationConfig | None = None,
    root: Path | None = None,
) -> tuple[list[StretchScore], Score]:
    """Replay every labelled transcript once (``limits``, ``stagnation``: the plan's,
    else the defaults) and score each stretch; a missing transcript is an error naming
    its stretch."""
    labels, tolerance = load_labels(path, root=root)
    for n, label in enumerate(labels):
        if not label.transcript.is_file():
            raise ConfigurationError(f"{path}: stretch[{n}]: no transcript {label.transcript}")
    replays: dict[Path, tuple[list[ReplayRecord], int]] = {}
    scores: list[StretchScore] = []
    for n, label in enumerate(labels):
        if label.transcript not in replays:
            report = replay_file(
                label.transcript, limits=limits, stagnation=stagnation,
                workspace=Path("/nonexistent/replay"), events=False,
            )  # fmt: skip
            replays[label.transcript] = (report.trips, report.steps)
        trips, steps = replays[label.transcript]
        scores.append(_judge(n, label, trips, steps, tolerance))
    counts = Counter(score.outcome for score in scores)
    stuck = sum(score.stuck for score in scores)
    return scores, Score(
        labels=str(path),
        stuck=stuck,
        on_time=counts[Outcome.ON_TIME],
        early=counts[Outcome.EARLY],
        late=counts[Outcome.LATE],
        missed=counts[Outcome.MISSED],
        productive=len(scores) - stuck,
        clean=counts[Outcome.CLEAN],
        soft=counts[Outcome.SOFT],
        hard=counts[Outcome.HARD],
    )
