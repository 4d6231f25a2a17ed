"""The ``[session.notify]`` webhook: trips, halts and the finish, retried, never blocking.

A real HTTP endpoint on 127.0.0.1 (built on the fake-server machinery, so it can fail
on request) receives the POSTs of the real urllib client.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from seawall.breakers.trip import BreakerKind
from seawall.breakers.wave import WaveTrigger
from seawall.model import NotifyConfig
from seawall.publishing.webhook import Notifier, check_notify, notification
from seawall.telemetry import (
    BreakerLevel,
    BreakerTripped,
    EventLog,
    NotifyFailed,
    SessionFinished,
    WaveMerged,
    read_events,
)
from seawall.testing.http import Answer, FakeServer, FakeService, Fault, Request
from tests.integration.sessionkit import make_repo, seawall, write_plan
from tests.waiting import wait_until


class Webhook(FakeService):
    """Accepts JSON POSTs on /hook and keeps their bodies."""

    operations: ClassVar[Mapping[str, tuple[str, str]]] = {"deliver": ("POST", "hook")}

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        return ("hook", {}) if (method, path) == ("POST", "/hook") else None

    def authorized(self, headers: Mapping[str, str]) -> Answer | None:
        return None

    def answer(self, request: Request) -> Answer:
        with self.lock:
            assert isinstance(request.body, dict)
            self.bodies.append(request.body)
        return Answer(status=204)


@pytest.fixture
def hook() -> Iterator[FakeServer]:
    with FakeServer(Webhook()) as server:
        yield server


def bodies(server: FakeServer) -> list[dict[str, Any]]:
    assert isinstance(server.service, Webhook)
    return server.service.bodies


def test_trips_halts_and_the_finish_are_posted_with_the_documented_body(
    hook: FakeServer, tmp_path: Path
) -> None:
    events = EventLog(tmp_path / "events.jsonl", session="s-1")
    config = NotifyConfig(url=hook.origin + "/hook")
    with Notifier(config, events=events, name="demo"):
        events.append(
            BreakerTripped(wave=2, agent="parser", breaker=BreakerKind.LOOP, evidence="x4")
        )
        events.append(WaveMerged(wave=2, integration=None))  # not notified
        events.append(
            BreakerTripped(
                wave=2, level=BreakerLevel.WAVE, trigger=WaveTrigger.STALL, detail="stalled"
            )
        )
        events.append(SessionFinished(waves=2, cost_usd=0.0))
        wait_until(lambda: len(bodies(hook)) >= 3, timeout=10, what="three posts")
    trip, halt, finish = bodies(hook)
    assert trip == {
        "version": 1,
        "event": "trip",
        "session": "s-1",
        "name": "demo",
        "wave": 2,
        "detail": "breaker/loop: x4",
        "at": trip["at"],
        "agent": "parser",
    }
    assert halt["event"] == "halt" and halt["detail"] == "stalled" and "agent" not in halt
    assert finish["event"] == "finish" and finish["detail"] == "2 wave(s)"


def test_a_failed_delivery_is_retried_then_dropped_with_a_record(
    hook: FakeServer, tmp_path: Path
) -> None:
    hook.service.inject_operation("deliver", Fault(status=500))
    events = EventLog(tmp_path / "events.jsonl", session="s-1")
    config = NotifyConfig(url=hook.origin + "/hook", events=("finish",), attempts=2)
    with Notifier(config, events=events, name="demo", sleep=lambda s: None):
        events.append(SessionFinished(waves=1, cost_usd=0.0))
        wait_until(lambda: bodies(hook), timeout=10, what="the post of the finish")
    assert [b["event"] for b in bodies(hook)] == ["finish"]
    assert hook.service.count_operation("deliver") == 2, "the 500 was retried once"

    dead = NotifyConfig(url="http://127.0.0.1:9/hook", events=("finish",), attempts=2)
    with Notifier(dead, events=events, name="demo", sleep=lambda s: None):
        events.append(SessionFinished(waves=1, cost_usd=0.0))
    (failed,) = read_events(tmp_path / "events.jsonl", NotifyFailed)
    assert failed.notification == "finish" and failed.attempts == 2


def test_a_hanging_webhook_does_not_block_the_session_end(tmp_path: Path) -> None:
    with FakeServer(Webhook()) as slow:
        slow.service.inject_operation("deliver", Fault(delay=30, apply=True))
        events = EventLog(tmp_path / "events.jsonl", session="s-1")
        config = NotifyConfig(url=slow.origin + "/hook", timeout=0.5, attempts=1)
        started = time.monotonic()
        with Notifier(config, events=events, name="demo", drain_seconds=1.0):
            events.append(SessionFinished(waves=1, cost_usd=0.0))
        assert time.monotonic() - started < 3.0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (NotifyConfig(url="ftp://x"), "must be an http(s) URL"),
        (NotifyConfig(url="http://x", events=("finished",)), "unknown event(s) ['finished']"),
    ],
)
def test_a_bad_webhook_setting_is_refused(config: NotifyConfig, message: str) -> None:
    from seawall.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as raised:
        check_notify(config)
    assert message in str(raised.value)


def test_other_records_are_not_notifications() -> None:
    assert notification(WaveMerged(wave=1, integration=None, ts=1.0), name="x") is None


@pytest.mark.slow
def test_a_real_session_posts_its_finish(hook: FakeServer, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps({"one": [{"writes": {"one.txt": "1\n"}}]}))
    extra = f'\n[session.notify]\nurl = "{hook.origin}/hook"\n'
    tasks = [{"id": "one", "prompt": "do one", "scope": ["one.txt"]}]
    plan = write_plan(tmp_path / "plan.toml", session='name = "hooked"', tasks=tasks, extra=extra)
    done = seawall("run", str(plan), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stdout + done.stderr
    (finish,) = bodies(hook)
    assert finish["event"] == "finish" and finish["name"] == "hooked"
    assert str(finish["session"]).startswith("hooked-")
