"""A provider's limit read from what each CLI prints: Claude Code, Codex, opencode."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from seawall.adapters.runners.opencode import OpenCodeJsonParser
from seawall.events import Final, LimitKind, ProviderLimit
from seawall.transcripts import ClaudeStreamParser, CodexJsonParser
from seawall.transcripts.codex_limits import codex_limit, reset_time


def _line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def _final(events: list[Any]) -> Final:
    finals = [event for event in events if isinstance(event, Final)]
    assert len(finals) == 1, events
    return finals[0]


def _claude(*lines: str) -> Final:
    parser = ClaudeStreamParser()
    return _final([event for text in lines for event in parser.feed(text)])


def _result(**fields: Any) -> str:
    return _line("result", subtype="success", num_turns=1, total_cost_usd=0, **fields)


def test_a_claude_subscriber_at_the_usage_limit_is_a_usage_limit_with_its_reset() -> None:
    final = _claude(
        _line(
            "rate_limit_event",
            rate_limit_info={
                "status": "rejected",
                "resetsAt": 1796508960,
                "rateLimitType": "five_hour",
            },
            uuid="u",
            session_id="s",
        ),
        _result(
            is_error=True,
            api_error_status=429,
            result="You've hit your session limit · resets 10:16pm (UTC)",
        ),
    )
    assert final.is_error
    assert final.limit == ProviderLimit(
        kind=LimitKind.USAGE,
        resets_at=1796508960.0,
        detail="You've hit your session limit · resets 10:16pm (UTC)",
    )


def test_claude_api_errors_after_its_retries_are_rate_and_overloaded_limits() -> None:
    text = "API Error: Request rejected (429) · rate limited"
    rate = _claude(_result(is_error=True, api_error_status=429, result=text))
    assert rate.limit == ProviderLimit(kind=LimitKind.RATE, detail=text)
    overloaded = _claude(_result(is_error=True, api_error_status=529, result="Overloaded"))
    assert overloaded.limit is not None and overloaded.limit.kind is LimitKind.OVERLOADED


def test_claude_endings_that_are_no_limit_have_none() -> None:
    allowed = _line(
        "rate_limit_event",
        rate_limit_info={"status": "allowed_warning", "resetsAt": 1796508960},
        uuid="u",
        session_id="s",
    )
    assert _claude(allowed, _result(is_error=False, result="STATUS: done")).limit is None
    # a failed run whose API error is no limit, and text that only mentions one
    assert _claude(_result(is_error=True, api_error_status=500, result="boom")).limit is None
    assert _claude(_result(is_error=True, result="I hit a rate limit in the tests")).limit is None


def test_codex_usage_limit_reads_the_reset_in_local_time() -> None:
    now = datetime(2026, 12, 5, 21, 40).astimezone().timestamp()
    limit = codex_limit(
        "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
        "or try again at 10:17 PM.",
        now=now,
    )
    assert limit is not None and limit.kind is LimitKind.USAGE
    # printed truncated to the minute: the reset is taken as that minute's end
    assert limit.resets_at == datetime(2026, 12, 5, 22, 18).astimezone().timestamp()


def test_a_reset_time_of_day_already_past_is_tomorrows_and_a_dated_one_is_its_day() -> None:
    now = datetime(2026, 12, 5, 23, 30).astimezone().timestamp()
    assert reset_time("try again at 1:05 AM.", now=now) == (
        datetime(2026, 12, 6, 1, 6).astimezone().timestamp()
    )
    # the minute that has begun is this one, not tomorrow's
    assert reset_time("try again at 11:30 PM.", now=now + 30) == now + 60
    dated = "You’ve hit your usage limit. … or try again at Dec 8th, 2026 9:00 AM."
    assert reset_time(dated, now=now) == datetime(2026, 12, 8, 9, 1).astimezone().timestamp()
    assert reset_time("You've hit your usage limit.", now=now) is None


def test_codex_rate_limits_after_its_retries_and_other_errors() -> None:
    retried = codex_limit("exceeded retry limit, last status: 429 Too Many Requests")
    assert retried is not None and retried.kind is LimitKind.RATE and retried.resets_at is None
    overloaded = codex_limit("stream error: server_overloaded: the server is overloaded")
    assert overloaded is not None and overloaded.kind is LimitKind.OVERLOADED
    assert codex_limit("unexpected status 401 Unauthorized") is None


def test_codex_stream_error_then_turn_failed_carries_the_limit() -> None:
    parser = CodexJsonParser()
    message = "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage"
    events = [
        *parser.feed(_line("thread.started", thread_id="t")),
        *parser.feed(_line("turn.started")),
        *parser.feed(_line("error", message=message)),
        *parser.feed(_line("turn.failed", error={"message": "turn failed"})),
    ]
    final = _final(events)
    assert final.is_error and final.limit is not None
    assert final.limit.kind is LimitKind.USAGE and final.limit.detail == message


def test_opencode_api_error_429_with_retry_after_is_a_limit() -> None:
    parser = OpenCodeJsonParser()
    # the line opencode 1.18 prints after its own retries of a 429
    error = {
        "name": "APIError",
        "data": {
            "message": "Rate limit reached",
            "statusCode": 429,
            "isRetryable": True,
            "responseHeaders": {"content-type": "application/json", "retry-after": "120"},
            "responseBody": '{"type": "error", "error": {"type": "rate_limit_exceeded"}}',
            "metadata": {"url": "http://127.0.0.1:39057/v1/chat/completions"},
        },
    }
    line = {"type": "error", "timestamp": 1796442732384, "sessionID": "ses_1", "error": error}
    parser.feed(json.dumps(line))
    final = _final(parser.finish())
    assert final.limit is not None and final.limit.kind is LimitKind.RATE
    assert final.limit.resets_at is not None and final.limit.resets_at > 0
    other = OpenCodeJsonParser()
    other.feed(json.dumps({"type": "error", "error": {"name": "UnknownError", "data": {}}}))
    assert _final(other.finish()).limit is None


def test_a_final_with_its_limit_crosses_the_ray_wire() -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    from seawall.adapters.runners.ray.wire import decode_event, encode_event

    limit = ProviderLimit(kind=LimitKind.USAGE, provider="anthropic", resets_at=1.0e9)
    final = Final(text="limit", is_error=True, denials=("Write a",), limit=limit)
    data = encode_event(final)
    assert json.loads(json.dumps(data)) == data  # plain data on the wire
    assert decode_event(data) == final


def test_state_md_says_why_an_agent_is_paused_and_until_when() -> None:
    from seawall.model import Enforcement, Isolation, Status
    from seawall.session.limits import limit_reason
    from seawall.state.ledger import AgentRecord, WaveRecord
    from seawall.state.render import history_line

    limit = ProviderLimit(kind=LimitKind.USAGE, provider="anthropic", resets_at=1796508960.0)
    agent = AgentRecord(task="a", status=Status.PAUSED, reason=limit_reason(limit))
    wave = WaveRecord(
        number=1, tasks=[], isolation=Isolation.WORKTREE, enforcement=Enforcement.WARN,
        max_turns=5, agents=[agent],
    )  # fmt: skip
    line = history_line(wave, agent)
    assert "PAUSED (paused: anthropic's usage limit, resets at 2026-12-05 " in line, line


def test_a_held_runner_starts_its_agent_after_the_reset_or_at_a_stop(tmp_path: Path) -> None:
    import time

    import anyio

    from seawall.adapters.runners.callable import CallableRunner
    from seawall.runner import AgentRequest
    from seawall.session.limits import HeldRunner

    started: list[float] = []

    async def agent(request: AgentRequest, emit: object) -> str:
        started.append(time.time())
        return "STATUS: done"

    async def main() -> None:
        until = time.time() + 0.5
        held = HeldRunner(CallableRunner(agent), until)
        await held.run(AgentRequest(task_id="t", prompt="p", workspace=tmp_path), print)
        assert started[-1] >= until  # the agent started only after the reset
        stopped = AgentRequest(task_id="t", prompt="p", workspace=tmp_path)
        stopped.stop.stop("the wave was aborted")
        before = time.time()
        result = await HeldRunner(CallableRunner(agent), time.time() + 3600).run(stopped, print)
        assert time.time() - before < 5 and result.cancelled  # no wait for an hour

    anyio.run(main)


def test_a_held_runner_reports_edits_as_its_runner_does() -> None:
    """A held agent's workspace is watched only when its own runner names no edits:
    otherwise the sandbox's empty scope files would count as the agent's writes."""
    from seawall.adapters.runners.callable import CallableRunner
    from seawall.adapters.runners.claude_code import ClaudeCodeRunner
    from seawall.session.limits import HeldRunner

    async def agent(request: object, emit: object) -> str:
        return "STATUS: done"

    claude, plain = ClaudeCodeRunner(), CallableRunner(agent)
    assert HeldRunner(claude, 0.0).reports_edits is claude.reports_edits is True
    assert HeldRunner(plain, 0.0).reports_edits is plain.reports_edits
