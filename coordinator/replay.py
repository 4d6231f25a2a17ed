"""Replaying a recorded transcript through the detectors and breakers.

``replay_file`` reads one transcript of one agent (Claude Code session or subagent
JSONL, ``--output-format stream-json``, Codex ``exec --json`` and rollout files, and
logs that embed them), feeds every event to a fresh ``AgentMonitor`` with the given
limits, and returns every event, trip and finding with the line it came from. After a
trip the breaker is reset and reading goes on, so one trip never hides a later one: the
report shows every place the limits would have stopped the agent. Wall-clock time is
not replayed (session-time never trips), since a transcript's pauses are not the
agent's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.events import Event, Final, HumanTurn, Message, ToolCall, ToolResult, Turn, Usage
from seawall.model import BreakerLimits, StagnationConfig
from seawall.stagnation.finding import Finding
from seawall.stagnation.monitor import AgentMonitor
from seawall.transcripts import TranscriptFormat, TranscriptReader, sniff_format

__all__ = [
    "ReplayFormat",
    "ReplayKind",
    "ReplayRecord",
    "ReplayReport",
    "ReplaySummary",
    "detect_format",
    "replay_file",
]

_SHOWN = 160


class ReplayFormat(StrEnum):
    """The transcript formats ``seawall replay`` reads."""

    CLAUDE_SESSION = "claude-session"
    CLAUDE_SUBAGENT = "claude-subagent"
    CLAUDE_STREAM = "claude-stream-json"
    CODEX_EXEC = "codex-exec-json"
    CODEX_ROLLOUT = "codex-rollout"
    LOG = "log"


def detect_format(path: Path) -> ReplayFormat:
    """The format of the transcript at ``path``; ``ConfigurationError`` naming the file
    when it holds no agent events at all (plain text, empty)."""
    sniffed = sniff_format(path)
    if sniffed is TranscriptFormat.CLAUDE_SESSION:
        return (
            ReplayFormat.CLAUDE_SUBAGENT
            if "subagents" in path.parts or path.name.startswith("agent-")
            else ReplayFormat.CLAUDE_SESSION
        )
    known = {
        TranscriptFormat.CLAUDE_STREAM: ReplayFormat.CLAUDE_STREAM,
        TranscriptFormat.CODEX: ReplayFormat.CODEX_EXEC,
        TranscriptFormat.CODEX_ROLLOUT: ReplayFormat.CODEX_ROLLOUT,
        TranscriptFormat.LOG: ReplayFormat.LOG,
    }
    if sniffed in known:
        return known[sniffed]
    raise ConfigurationError(f"{path}: not an agent transcript ({sniffed.value})")


class ReplayKind(StrEnum):
    """What a line of the replay is: an event of the transcript, a trip or a finding."""

    CALL = "call"
    RESULT = "result"
    MESSAGE = "message"
    TURN = "turn"
    HUMAN = "human"  # a person's own prompt
    USAGE = "usage"
    FINAL = "final"
    TRIP = "trip"
    FINDING = "finding"

    @property
    def verdict(self) -> bool:
        """A trip or a finding: what the limits made of the events."""
        return self in (ReplayKind.TRIP, ReplayKind.FINDING)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayRecord:
    """One line of the replay: an event, a trip or a finding, where it came from.

    ``line`` is the transcript line the event completed on (0 for a post-wave finding,
    which belongs to the whole run); ``step`` counts tool calls and run ends so far.
    """

    schema: str = field(default="seawall.replay/1", init=False)

    file: str
    line: int
    step: int
    kind: ReplayKind
    name: str = ""  # the tool, the breaker or the pattern
    evidence: str = ""
    error: bool = False
    soft: bool = False  # a trip with a way out (unverified-edits): a nudge, not a stop

    def text(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else f"{self.file}:-"
        label = self.kind.upper() if self.kind.verdict else str(self.kind)
        label = f"SOFT {label}" if self.soft else label
        error = " error" if self.error else ""
        return f"{where}\t{label}{error}\t{self.name}\t{self.evidence}".rstrip()


@dataclass(slots=True, kw_only=True)
class ReplayReport:
    """Everything one transcript's replay produced, in order."""

    file: str
    format: ReplayFormat
    records: list[ReplayRecord] = field(default_factory=list)
    malformed: int = 0
    steps: int = 0  # tool calls and run ends in the whole transcript

    @property
    def trips(self) -> list[ReplayRecord]:
        return [record for record in self.records if record.kind is ReplayKind.TRIP]

    @property
    def findings(self) -> list[ReplayRecord]:
        return [record for record in self.records if record.kind is ReplayKind.FINDING]

    def summary(self) -> ReplaySummary:
        return ReplaySummary(
            file=self.file,
            format=self.format,
            trips=len(self.trips),
            hard_trips=sum(not trip.soft for trip in self.trips),
            soft_trips=sum(trip.soft for trip in self.trips),
            findings=len(self.findings),
            malformed=self.malformed,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaySummary:
    """The last line of a transcript's replay: how many trips (``hard_trips`` would have
    stopped the agent, ``soft_trips`` only nudge it to run a check), findings and lines
    that could not be read."""

    schema: str = field(default="seawall.replay/1", init=False)

    file: str
    kind: str = field(default="summary", init=False)
    format: ReplayFormat
    trips: int
    findings: int
    malformed: int
    hard_trips: int = 0
    soft_trips: int = 0

    def text(self) -> str:
        return (
            f"{self.file}: {self.format.value}, {self.trips} trips ({self.hard_trips} hard, "
            f"{self.soft_trips} soft), {self.findings} findings, {self.malformed} malformed lines"
        )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _describe(event: Event) -> tuple[ReplayKind, str, str, bool]:
    """(kind, name, evidence, error) of one event."""
    if type(event) is ToolCall:
        command = event.arguments.get("command")
        shown = command if isinstance(command, str) else str(dict(event.arguments))
        return ReplayKind.CALL, event.name, _short(shown), False
    if type(event) is ToolResult:
        failed = event.is_error or bool(event.exit_code)
        name = "cancelled" if event.cancelled else "refused" if event.refused else event.name
        quiet = event.cancelled or event.refused
        return ReplayKind.RESULT, name or "", _short(event.text), failed and not quiet
    if type(event) is Message:
        return ReplayKind.MESSAGE, "", _short(event.text), False
    if type(event) is Final:
        return ReplayKind.FINAL, event.subtype, _short(event.text), event.is_error
    if type(event) is Turn:
        return ReplayKind.TURN, str(event.number), "", False
    if type(event) is HumanTurn:
        return ReplayKind.HUMAN, "", _short(event.text), False
    assert type(event) is Usage
    usage = f"in {event.input_tokens} out {event.output_tokens}"
    return ReplayKind.USAGE, event.message_id, usage, False


def _numbered(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8", errors="replace", newline="\n") as handle:
        yield from enumerate(handle, start=1)


def replay_file(
    path: str | Path,
    *,
    limits: BreakerLimits | None = None,
    stagnation: StagnationConfig | None = None,
    workspace: Path | None = None,
    events: bool = True,
) -> ReplayReport:
    """Replay the transcript at ``path`` (see the module); ``events=False`` keeps only
    trips and findings. Git writes are judged against ``workspace`` (default: the
    current directory), as if the agent had worked there in place."""
    path = Path(path)
    detected = detect_format(path)
    where = (workspace or Path.cwd()).resolve()
    monitor = AgentMonitor(
        session="replay",
        wave=0,
        agent=path.stem,
        workspace=where,
        repo=where,
        limits=limits,
        stagnation=stagnation,
        clock=lambda: 0.0,
    )
    report = ReplayReport(file=str(path), format=detected)
    reader = TranscriptReader()
    step = 0
    last_line = 0
    shown = str(path)

    def feed(line_number: int, batch: list[Event]) -> None:
        nonlocal step
        for event in batch:
            if type(event) is ToolCall or type(event) is Final:
                step += 1
            seen = len(monitor.findings)
            trip = monitor.observe(event)
            if events:
                kind, name, evidence, error = _describe(event)
                report.records.append(
                    ReplayRecord(
                        file=shown, line=line_number, step=step, kind=kind, name=name,
                        evidence=evidence, error=error,
                    )
                )  # fmt: skip
            for finding in monitor.findings[seen:]:
                report.records.append(_finding(shown, line_number, step, finding))
            if trip is not None:
                report.records.append(
                    ReplayRecord(
                        file=shown, line=line_number, step=step, kind=ReplayKind.TRIP,
                        name=trip.kind.label, evidence=f"({trip.count:g}/{trip.limit:g}) "
                        f"{trip.evidence}", soft=trip.self_service,
                    )
                )  # fmt: skip
                monitor.breaker.reset()  # keep reading: one trip must not hide another

    for line_number, line in _numbered(path):
        last_line = line_number
        feed(line_number, reader.feed(line))
    feed(last_line, reader.finish())
    live = len(monitor.findings)
    for finding in monitor.finish()[live:]:
        report.records.append(_finding(shown, 0, step, finding))
    report.malformed = reader.malformed
    report.steps = step
    return report


def _finding(file: str, line: int, step: int, finding: Finding) -> ReplayRecord:
    return ReplayRecord(
        file=file,
        line=line,
        step=step,
        kind=ReplayKind.FINDING,
        name=finding.pattern.value,
        evidence=f"[{finding.source.value}, {finding.verdict.value}] {finding.evidence}",
    )
