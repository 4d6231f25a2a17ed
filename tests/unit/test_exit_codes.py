"""One table of exit codes: the code returns them, and README, docs and --help agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seawall import exitcodes
from seawall.breakers.wave import WaveBreakerState, WaveTrigger
from seawall.cli import build_parser
from seawall.exitcodes import MEANINGS, ExitCode
from seawall.session.engine import SessionResult
from seawall.session.result import HALT_CODES
from seawall.state.ledger import Halt, HaltedAgent, HaltReason, SessionPhase
from seawall.unattended.outcomes import EXIT_CODE_OUTCOMES

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"<!-- exit-codes:[^>]*-->\n(.*?)\n<!-- /exit-codes -->", re.S)


@pytest.mark.parametrize("name", ["README.md", "docs/sessions.md"])
def test_the_documents_hold_the_rendered_table(name: str) -> None:
    blocks = _BLOCK.findall((ROOT / name).read_text(encoding="utf-8"))
    assert blocks == [exitcodes.markdown_table()]


def test_every_code_has_its_meaning_once() -> None:
    assert set(MEANINGS) == set(ExitCode)
    assert len({int(code) for code in ExitCode}) == len(ExitCode)
    for code in ExitCode:
        assert f"{int(code)} {MEANINGS[code]}" in exitcodes.describe()
    rows = exitcodes.markdown_table().splitlines()[2:]
    assert [int(row.split("|")[1]) for row in rows] == sorted(int(c) for c in ExitCode)


def _help(*argv: str) -> str:
    parser = build_parser()
    for action in parser._actions:
        if argv and hasattr(action, "choices") and isinstance(action.choices, dict):
            sub = action.choices.get(argv[0])
            if sub is not None:
                return str(sub.format_help())
    return parser.format_help()


@pytest.mark.parametrize("argv", [(), ("run",), ("resume",)])
def test_help_ends_with_the_table(argv: tuple[str, ...]) -> None:
    text = _help(*argv)
    assert exitcodes.help_epilog() in text
    for code, meaning in MEANINGS.items():
        assert re.search(rf"^\s+{int(code)}\s+{re.escape(meaning)}$", text, re.M)


def _result(
    phase: SessionPhase,
    *,
    done: tuple[str, ...] = (),
    abandoned: tuple[str, ...] = (),
    halt: Halt | None = None,
    breaker: WaveBreakerState | None = None,
) -> SessionResult:
    return SessionResult(
        session="s",
        phase=phase,
        waves=1,
        done=done,
        abandoned=abandoned,
        breaker=breaker or WaveBreakerState(),
        state_md=Path("STATE.md"),
        halt=halt,
    )


def test_session_results_use_the_table() -> None:
    assert _result(SessionPhase.DONE, done=("a",)).exit_code == ExitCode.OK
    assert _result(SessionPhase.HALTED).exit_code == ExitCode.HALTED
    limited = _result(SessionPhase.HALTED, halt=HALTS[HaltReason.RATE_LIMITED])
    assert limited.exit_code == ExitCode.RATE_LIMITED
    assert _result(SessionPhase.DONE, done=("a",), abandoned=("b",)).exit_code == 4
    assert _result(SessionPhase.DONE, abandoned=("b",)).exit_code == ExitCode.NOTHING_SUCCEEDED
    assert (int(ExitCode.CARRYOVER), int(ExitCode.INTERRUPTED)) == (4, 130)


HALTS = {
    HaltReason.AGENT_START: Halt(
        reason=HaltReason.AGENT_START,
        detail="W1 a: not found",
        wave=1,
        agents=(HaltedAgent(task="a", reason="not found", exit_code=127),),
        stderr="",
    ),
    HaltReason.CHECKS_FAIL_AT_BASE: Halt(
        reason=HaltReason.CHECKS_FAIL_AT_BASE, detail="wave 1: the base fails", wave=1
    ),
    HaltReason.RATE_LIMITED: Halt(reason=HaltReason.RATE_LIMITED, detail="429", wave=2),
    HaltReason.SESSION_TIME: Halt(
        reason=HaltReason.SESSION_TIME,
        detail="ran 61 of its 60 minutes",
        budget="session_minutes",
        elapsed_s=3660.0,
        limit_s=3600.0,
    ),
}

EXPECTED_CODES = {
    HaltReason.AGENT_START: ExitCode.AGENT_START,
    HaltReason.CHECKS_FAIL_AT_BASE: ExitCode.CHECKS_FAILED,
    HaltReason.RATE_LIMITED: ExitCode.RATE_LIMITED,
    HaltReason.SESSION_TIME: ExitCode.HALTED,
}


@pytest.mark.parametrize("reason", list(HaltReason))
def test_each_halt_reason_has_its_exit_code(reason: HaltReason) -> None:
    result = _result(SessionPhase.HALTED, done=("a",), halt=HALTS[reason])
    assert result.exit_code == EXPECTED_CODES[reason] == HALT_CODES[reason]


def test_a_tripped_wave_breaker_halts_with_3() -> None:
    tripped = WaveBreakerState(tripped=True, trigger=WaveTrigger.STALL, detail="2 waves")
    result = _result(SessionPhase.HALTED, done=("a",), breaker=tripped)
    assert result.exit_code == ExitCode.HALTED and result.breaker.trigger is WaveTrigger.STALL


def test_the_unattended_runner_maps_every_session_outcome_code() -> None:
    # the codes a session run ends with; errors, usage and Ctrl-C are the runner's "failed"
    not_outcomes = {ExitCode.ERROR, ExitCode.USAGE, ExitCode.INTERRUPTED}
    assert set(EXIT_CODE_OUTCOMES) == set(ExitCode) - not_outcomes
