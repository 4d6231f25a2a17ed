"""A provider limit read from Codex's error messages.

Codex's JSON stream carries a limit only as text: a ``usage_limit_reached`` answer is
not retried and ends the turn with ``You've hit your usage limit. … try again at 10:17
PM.`` (the reset in the machine's local time, truncated to the minute: a time of day
for today, or ``Dec 6th, 2026 10:17 PM`` further ahead); a 429 the CLI's retries did
not outlast ends with ``exceeded retry limit, last status: 429 Too Many Requests``; an
overloaded server says ``overloaded``. Anything else is not a limit.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

from seawall.events import LimitKind, ProviderLimit

__all__ = ["codex_limit", "reset_time"]

_USAGE = re.compile(r"hit your usage limit|usage_limit_reached", re.IGNORECASE)
_RATE = re.compile(r"\b429\b|rate.limit|too many requests", re.IGNORECASE)
_OVERLOADED = re.compile(r"overloaded|\b529\b", re.IGNORECASE)
_AT = re.compile(
    r"try again at\s+(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?P<year>\d{4})\s+)?(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[AP]M)",
    re.IGNORECASE,
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def codex_limit(message: str, *, now: float | None = None) -> ProviderLimit | None:
    """The limit ``message`` (the text of a failed turn or a stream error) reports, or
    None when it reports none; ``now`` (epoch seconds) places a bare time of day."""
    detail = message.strip()[:300]
    if _USAGE.search(message):
        return ProviderLimit(
            kind=LimitKind.USAGE, resets_at=reset_time(message, now=now), detail=detail
        )
    if _OVERLOADED.search(message):
        return ProviderLimit(kind=LimitKind.OVERLOADED, detail=detail)
    if _RATE.search(message):
        return ProviderLimit(kind=LimitKind.RATE, detail=detail)
    return None


def reset_time(message: str, *, now: float | None = None) -> float | None:
    """The epoch seconds of ``try again at …`` in ``message`` (local time), or None.

    Codex prints the reset truncated to the minute, so the reset is taken as the end of
    that minute (never before the real one). A bare time of day is the next one from
    ``now``: a minute that has begun is this one, not tomorrow's."""
    found = _AT.search(message)
    if found is None:
        return None
    hour = int(found["hour"]) % 12 + (12 if found["ampm"].upper() == "PM" else 0)
    minute = int(found["minute"])
    current = datetime.fromtimestamp(time.time() if now is None else now).astimezone()
    if found["month"] is not None:
        month = found["month"].lower()
        if month not in _MONTHS:
            return None
        try:
            at = current.replace(
                year=int(found["year"]),
                month=_MONTHS.index(month) + 1,
                day=int(found["day"]),
                hour=hour,
                minute=minute,
                second=0,
                microsecond=0,
            )
        except ValueError:
            return None
        return at.timestamp() + 60.0
    at = current.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at < current - timedelta(minutes=1):
        at += timedelta(days=1)
    return at.timestamp() + 60.0
