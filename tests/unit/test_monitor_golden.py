"""The monitor's every trip, finding and notice stays exactly what it was.

``monitor_golden.jsonl`` holds the trace (``monitor_trace``) of every fixture
transcript and the digest of the trace of every agent of the benchmark's synthetic
mix, each under default limits, tight limits and hook mode. Any change in which
breaker trips, which finding fires, at which event, with which evidence or counters,
fails here. After a deliberate change of behaviour, rewrite the file with
``python -m tests.unit.monitor_trace`` and review its diff.
"""

from __future__ import annotations

import json

import pytest

from tests.unit.monitor_trace import GOLDEN, real_files, real_traces, synthetic_traces


def _golden(real: bool) -> list[str]:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if (json.loads(line)[0] != "synthetic") is real]


@pytest.mark.skipif(not real_files(), reason="real transcripts not found (a clone without them)")
def test_real_transcripts_trace_as_before() -> None:
    expected = _golden(real=True)
    assert expected, "the golden file holds no real-transcript records"
    traced = real_traces()
    assert {json.loads(line)[0] for line in traced} == {json.loads(line)[0] for line in expected}
    for got, want in zip(traced, expected, strict=False):
        assert got == want
    assert len(traced) == len(expected)


@pytest.mark.slow
def test_synthetic_mix_traces_as_before() -> None:
    expected = _golden(real=False)
    traced = synthetic_traces()
    mismatched = [
        json.loads(got)[1:3] for got, want in zip(traced, expected, strict=True) if got != want
    ]
    assert not mismatched, f"(mode, agent) whose trace changed: {mismatched[:10]}"
    assert len(traced) == len(expected) > 200
