"""Properties of the ledger rules over generated ledgers."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.unattended.breaker import evaluate_breaker
from seawall.unattended.ledger import AttemptRow, Ledger, item_histories

DAY = 86_400.0
NOW = 100 * DAY
OUTCOMES = [
    "done",
    "partial",
    "failed",
    "timed-out",
    "died",
    "rate-limited",
    "needs-input",
    "verification-failed",
    "blocked-breaker",
    "running",
]

row_spec = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.integers(min_value=0, max_value=5),  # task number within the item
    st.sampled_from(OUTCOMES),
    st.sampled_from([None, "push", "tests"]),
)


def build(
    specs: list[tuple[str, int, str, str | None]], *, start: float, step: float
) -> list[AttemptRow]:
    # A refused tick writes its blocked row under a task id of its own.
    return [
        AttemptRow(
            item=item,
            task=f"{item}-refused-{i}" if outcome.startswith("blocked-") else f"{item}{task}",
            outcome=outcome,
            ts=start + i * step,
            publish_gate=gate,
        )
        for i, (item, task, outcome, gate) in enumerate(specs)
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(row_spec, max_size=25), st.lists(st.integers(0, 25), max_size=10))
def test_blocked_rows_anywhere_change_neither_the_count_nor_the_clock(
    specs: list[tuple[str, int, str, str | None]], positions: list[int]
) -> None:
    rows = [r for r in build(specs, start=1000.0, step=10.0) if r.outcome != "blocked-breaker"]
    noisy = list(rows)
    for n, position in enumerate(positions):
        at = min(position, len(noisy))
        ts = noisy[at - 1].ts + 0.5 if at else 999.0
        noisy.insert(at, AttemptRow(item="a", task=f"blocked{n}", outcome="blocked-breaker", ts=ts))
    plain = evaluate_breaker(rows, now=5000.0, limit=3, cooldown_sec=100.0)
    blocked = evaluate_breaker(noisy, now=5000.0, limit=3, cooldown_sec=100.0)
    assert (plain.state, plain.consecutive_failures, plain.clock_ts) == (
        blocked.state,
        blocked.consecutive_failures,
        blocked.clock_ts,
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(row_spec, max_size=30))
def test_compaction_preserves_what_intake_reads(
    specs: list[tuple[str, int, str, str | None]],
) -> None:
    rows = build(specs, start=NOW - 60 * DAY, step=2 * DAY)  # some old, some recent
    with TemporaryDirectory() as tmp:
        ledger = Ledger(Path(tmp) / "attempted.jsonl")
        for row in rows:
            ledger.append(row)
        before = item_histories(ledger.read().rows)
        ledger.compact(now=NOW, max_bytes=0)
        kept = ledger.read().rows
    after = item_histories(kept)
    assert set(after) == set(before)  # the newest row of every item stays
    for item, history in before.items():
        assert after[item].finished == history.finished
        if not history.finished:
            assert after[item] == history  # attempts, outcome and task ids all intact
    assert all(row in kept for row in rows if row.ts >= NOW - 30 * DAY)
