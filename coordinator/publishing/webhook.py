"""``[session.notify]``: a webhook told about trips, halts and the end of a session.

The notifier listens to the session's telemetry and POSTs a small JSON body to the
webhook URL for each event it was asked for:

- ``trip``: an agent's breaker tripped (``breaker_tripped`` of an agent);
- ``halt``: the session halted (the wave breaker, or a provider's limit past max_wait);
- ``finish``: the session finished.

The body (``Content-Type: application/json``)::

    {"version": 1, "event": "trip", "session": "demo-20261201-0830-ab12",
     "name": "demo", "wave": 2, "agent": "parser", "detail": "loop: ...",
     "at": "2026-12-01T08:30:00Z"}

``agent`` is set for a trip only; ``wave`` when known. Deliveries run on a worker
thread and never block the session: each is tried ``attempts`` times with backoff and
a ``timeout`` per try, then dropped with one line in ``events.jsonl``
(``notify_failed``). At the end of the session the notifier waits a bounded time for
the deliveries still queued.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Self

from seawall.codec import JsonObject
from seawall.errors import ConfigurationError
from seawall.model import NotifyConfig
from seawall.telemetry import (
    BreakerLevel,
    BreakerTripped,
    EventLog,
    NotifyFailed,
    SessionFinished,
    SessionHalted,
    TelemetryEvent,
)

__all__ = ["EVENTS", "Notifier", "check_notify", "notification"]

EVENTS = ("trip", "halt", "finish")
_STOP = object()


def check_notify(config: NotifyConfig | None) -> None:
    """Refuse a webhook configuration that cannot work, before anything runs."""
    if config is None:
        return
    if not config.url.startswith(("http://", "https://")):
        raise ConfigurationError(f"session.notify.url: must be an http(s) URL, not {config.url!r}")
    unknown = sorted(set(config.events) - set(EVENTS))
    if unknown:
        raise ConfigurationError(
            f"session.notify.events: unknown event(s) {unknown}; known: {', '.join(EVENTS)}"
        )
    if config.attempts < 1:
        raise ConfigurationError("session.notify.attempts: must be at least 1")


def notification(record: TelemetryEvent, *, name: str) -> JsonObject | None:
    """The webhook body for a telemetry ``record``, or None when it is not notified."""
    wave: int | None = None
    if isinstance(record, BreakerTripped):
        event = "halt" if record.level is BreakerLevel.WAVE else "trip"
        breaker = record.breaker.label if record.breaker is not None else ""
        detail = record.detail or breaker
        if record.evidence:
            detail = f"{detail}: {record.evidence}"
        wave = record.wave
    elif isinstance(record, SessionHalted):
        event, detail, wave = "halt", record.reason, record.wave
    elif isinstance(record, SessionFinished):
        event, detail = "finish", f"{record.waves} wave(s)"
    else:
        return None
    body: JsonObject = {  # the webhook's documented JSON body
        "version": 1,
        "event": event,
        "session": record.session,
        "name": name,
        "wave": wave,
        "detail": detail,
        "at": datetime.fromtimestamp(record.ts or time.time(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if isinstance(record, BreakerTripped) and event == "trip":
        body["agent"] = record.agent
    return body


class Notifier:
    """Posts notifications on a worker thread; a context manager that owns the thread.

    ``post(url, body, timeout)`` is injectable; the default is a JSON POST by urllib.
    """

    def __init__(
        self,
        config: NotifyConfig,
        *,
        events: EventLog,
        name: str,
        post: Callable[[str, bytes, float], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        drain_seconds: float = 10.0,
    ) -> None:
        self.config = config
        self.events = events
        self.name = name
        self._post = post or _post_json
        self._sleep = sleep
        self._drain = drain_seconds
        self._queue: queue.Queue[object] = queue.Queue(maxsize=100)
        self._thread = threading.Thread(target=self._work, name="seawall-notify", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        self.events.listeners.append(self._listen)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.events.listeners.remove(self._listen)
        try:
            self._queue.put(_STOP, timeout=1.0)
        except queue.Full:
            return  # the deliveries still queued are dropped; the daemon thread goes
        self._thread.join(timeout=self._drain)

    def _listen(self, record: TelemetryEvent) -> None:
        body = notification(record, name=self.name)
        if body is None or body["event"] not in self.config.events:
            return
        with contextlib.suppress(queue.Full):  # never block: a flood of trips drops the excess
            self._queue.put_nowait(body)

    def _work(self) -> None:
        for _ in range(1_000_000):  # bounded; the stop marker ends it
            item = self._queue.get()
            if item is _STOP:
                return
            assert isinstance(item, dict)
            self._deliver(item)

    def _deliver(self, body: JsonObject) -> None:  # the webhook's JSON body
        payload = json.dumps(body).encode("utf-8")
        error = ""
        for attempt in range(self.config.attempts):
            try:
                self._post(self.config.url, payload, self.config.timeout)
                return
            except (OSError, ValueError) as exc:  # urllib's errors are OSErrors
                error = f"{type(exc).__name__}: {exc}"
            if attempt + 1 < self.config.attempts:
                self._sleep(min(8.0, 0.5 * 2.0**attempt))
        self.events.append(
            NotifyFailed(notification=body["event"], attempts=self.config.attempts, error=error)
        )


def _post_json(url: str, payload: bytes, timeout: float) -> None:
    request = urllib.request.Request(url, data=payload, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("User-Agent", "seawall-notify/1")
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        answer.read()
        if not 200 <= answer.status < 300:
            raise urllib.error.HTTPError(
                url, answer.status, "not a 2xx answer", answer.headers, None
            )
