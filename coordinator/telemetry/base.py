"""What every telemetry record is: a frozen msgspec ``Struct`` tagged by its kind.

A record is written as one JSON object whose ``event`` key names its kind (the class's
tag), followed by ``ts`` (unix seconds) and ``session``, which the log fills, and the
fields of its kind. A line no kind of today can read is an ``UnknownEvent``.
"""

from __future__ import annotations

import msgspec

from seawall.codec import JsonObject

__all__ = ["TelemetryRecord", "UnknownEvent"]


class TelemetryRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="event"):
    """The fields every kind has; ``ts`` and ``session`` are set by ``EventLog.append``."""

    ts: float = 0.0
    session: str = ""

    @property
    def event(self) -> str:
        """The record's kind, as its ``event`` key names it (``breaker_tripped``)."""
        return str(type(self).__struct_config__.tag)


class UnknownEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A line of ``events.jsonl`` that is no record of today: a kind seawall does not
    know (a newer version's, a third party's), or a known kind whose fields do not
    decode even after the reading of older lines. ``data`` is the line as it was,
    ``problem`` why it is not a record. The log never writes one."""

    event: str
    ts: float = 0.0
    session: str = ""
    data: JsonObject = msgspec.field(default_factory=dict)
    problem: str = ""
