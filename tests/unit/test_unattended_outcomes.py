"""The outcome contract: exit-code mapping and the chain effect of every outcome."""

from __future__ import annotations

import pytest

from seawall.unattended.outcomes import (
    ENVIRONMENTAL_PUBLISH_GATES,
    EXIT_CODE_OUTCOMES,
    PARKED_OUTCOMES,
    RETRYABLE_OUTCOMES,
    ChainEffect,
    Outcome,
    chain_effect,
    is_blocked,
    is_finished,
    outcome_for_exit_code,
)


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (0, Outcome.DONE),
        (4, Outcome.PARTIAL),
        (3, Outcome.NEEDS_INPUT),
        (5, Outcome.FAILED),
        (6, Outcome.RATE_LIMITED),
        (7, Outcome.VERIFICATION_FAILED),
        (8, Outcome.FAILED),
        (1, Outcome.FAILED),
        (2, Outcome.FAILED),
        (127, Outcome.FAILED),
        (255, Outcome.FAILED),
    ],
)
def test_exit_codes_map_to_outcomes(code: int, outcome: Outcome) -> None:
    assert outcome_for_exit_code(code) is outcome


def test_the_mapping_is_data_and_read_only() -> None:
    assert dict(EXIT_CODE_OUTCOMES) == {
        0: "done",
        4: "partial",
        3: "needs-input",
        5: "failed",
        6: "rate-limited",
        7: "verification-failed",
        8: "failed",
    }
    with pytest.raises(TypeError):
        EXIT_CODE_OUTCOMES[9] = Outcome.DONE  # type: ignore[index]


@pytest.mark.parametrize(
    ("outcome", "gate", "effect"),
    [
        ("done", None, ChainEffect.ENDS),
        ("no-tests-needed", None, ChainEffect.ENDS),
        ("partial", None, ChainEffect.ENDS),
        ("failed", None, ChainEffect.COUNTS),
        ("spiral", None, ChainEffect.COUNTS),
        ("timed-out", None, ChainEffect.COUNTS),
        ("died", None, ChainEffect.SKIPPED),
        ("rate-limited", None, ChainEffect.SKIPPED),
        ("running", None, ChainEffect.SKIPPED),
        ("needs-input", None, ChainEffect.ENDS),
        ("awaiting-answer", None, ChainEffect.ENDS),
        ("verification-failed", None, ChainEffect.ENDS),
        ("verification-failed", "tests", ChainEffect.ENDS),
        ("verification-failed", "remote", ChainEffect.COUNTS),
        ("verification-failed", "push", ChainEffect.COUNTS),
        ("verification-failed", "pr-create", ChainEffect.COUNTS),
        ("needs-input", "push", ChainEffect.ENDS),  # only verification-failed is a refusal
        ("blocked-breaker", None, ChainEffect.SKIPPED),
        ("blocked-rate-limit", None, ChainEffect.SKIPPED),
        ("blocked-arming", "push", ChainEffect.SKIPPED),
        ("something-new", None, ChainEffect.COUNTS),  # unknown: halting is the safe side
    ],
)
def test_chain_effect(outcome: str, gate: str | None, effect: ChainEffect) -> None:
    assert chain_effect(outcome, gate) is effect


def test_every_retryable_outcome_but_died_and_rate_limited_counts() -> None:
    counted = {o for o in RETRYABLE_OUTCOMES if chain_effect(o) is ChainEffect.COUNTS}
    assert counted == RETRYABLE_OUTCOMES - {Outcome.DIED, Outcome.RATE_LIMITED}
    assert {"needs-input", "awaiting-answer", "verification-failed"} == PARKED_OUTCOMES
    assert {"remote", "push", "pr-create"} == ENVIRONMENTAL_PUBLISH_GATES


def test_blocked_and_finished_predicates() -> None:
    assert is_blocked("blocked-anything") and not is_blocked("failed")
    assert is_finished("partial") and is_finished("done") and not is_finished("needs-input")
