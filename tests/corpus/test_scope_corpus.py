"""The scope barrier against its adversarial corpus: 0 escapes, 0 false denies.

Every case runs through the hook's entry function in process; one pair per class (and
every special caller) also runs through the real ``seawall hook pre-tool-use``
process, fed exactly what Claude Code sends, so the two are known to agree.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from seawall.runtime.processes import process_alive
from tests.corpus.kit import (
    Case,
    World,
    build_world,
    decision_in_process,
    decision_of_process,
    load_cases,
)
from tests.waiting import wait_until

CASES = load_cases()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("corpus"))


def test_the_corpus_is_large_and_every_case_has_a_twin() -> None:
    assert len(CASES) >= 300
    by_pair = Counter((case.cls, case.index) for case in CASES)
    assert set(by_pair.values()) == {2}
    expects = Counter(case.expect for case in CASES)
    assert expects["deny"] == expects["allow"]
    classes = {case.cls for case in CASES}
    assert len(classes) >= 14, classes


@pytest.mark.slow
def test_no_escape_and_no_false_deny(world: World) -> None:
    wrong = []
    for case in CASES:
        got, reason = decision_in_process(world, case)
        if got != case.expect:
            wrong.append(f"{case.id}: {case.tool} {dict(case.tool_input)} -> {got} {reason[:160]}")
    escapes = [line for line in wrong if "-deny:" in line]
    false_denies = [line for line in wrong if "-allow:" in line]
    assert not escapes and not false_denies, "\n".join(wrong)


def _sample() -> list[Case]:
    """Both sides of the first pair of each class, and of the first pair of each kind of
    caller (lead, lead's agent, tampered manifest, a tool other than Bash)."""
    wanted: dict[str, tuple[str, int]] = {}
    for case in CASES:
        kind = "tamper" if case.tamper else case.who if case.who != "agent" else case.tool
        for key in (case.cls, "kind:" + (kind if kind in ("lead", "lead-agent", "tamper") else "")):
            wanted.setdefault(key, (case.cls, case.index))
        if case.tool != "Bash":
            wanted.setdefault("tool", (case.cls, case.index))
    pairs = set(wanted.values())
    return [case for case in CASES if (case.cls, case.index) in pairs]


@pytest.mark.slow
def test_the_real_hook_process_agrees(world: World) -> None:
    """A pair of each class and caller, each decided in a fresh process of its own."""
    sample = _sample()
    assert len({case.cls for case in sample}) == len({case.cls for case in CASES})
    alone = {"SEAWALL_HOOK_RESIDENT": "off"}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda case: decision_of_process(world, case, alone), sample))
    wrong = [
        f"{case.id}: {dict(case.tool_input)} -> {got} {reason[:160]}"
        for case, (got, reason) in zip(sample, results, strict=True)
        if got != case.expect
    ]
    assert not wrong, "\n".join(wrong)


def test_a_denial_says_why_and_how_to_carry_on(world: World) -> None:
    case = next(c for c in CASES if c.cls == "git-writes" and c.expect == "deny")
    got, reason = decision_in_process(world, case)
    assert got == "deny"
    assert reason.startswith("seawall command-blocked:")
    assert "coordinator records and merges" in reason and "STATUS" in reason


def test_nothing_the_corpus_ran_changed_the_repository(world: World) -> None:
    assert (world.repo / "src/app/db.py").read_text() == "DB = 1\n"
    assert not (world.repo / "other/planted.py").exists()
    assert isinstance(world.repo, Path)


def test_claude_codes_sandbox_is_the_os_layer_for_inline_programs(tmp_path: Path) -> None:
    """The lead's agent may run ``python3 -c`` once the project's settings turn Claude
    Code's sandbox on with no way around it; with a way around it, it may not."""
    world = build_world(tmp_path)
    case = next(c for c in CASES if c.cls == "inline-programs" and c.expect == "deny")
    assert decision_in_process(world, case)[0] == "deny"
    settings = world.repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    sandbox = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": True}
    settings.write_text(json.dumps({"sandbox": sandbox}))
    got, reason = decision_in_process(world, case)
    assert got == "deny" and "no OS sandbox confines this agent" in reason
    settings.write_text(json.dumps({"sandbox": {**sandbox, "allowUnsandboxedCommands": False}}))
    assert decision_in_process(world, case) == ("allow", "")


@pytest.mark.slow
def test_every_case_through_the_resident_server(world: World) -> None:
    """The whole corpus through the real hook command answered by the resident decision
    server (the first call starts it): 0 escapes and 0 false denies there too."""
    home = Path(tempfile.mkdtemp(prefix="sw-corp-"))
    extra = {"SEAWALL_HOOK_RESIDENT": str(home), "SEAWALL_HOOK_IDLE": "120"}
    try:
        first = decision_of_process(world, CASES[0], extra)
        wait_until(lambda: any(home.glob("*.sock")), timeout=30, what="the resident server")
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda case: decision_of_process(world, case, extra), CASES))
        wrong = [
            f"{case.id}: {dict(case.tool_input)} -> {got} {reason[:160]}"
            for case, (got, reason) in zip(CASES, results, strict=True)
            if got != case.expect
        ]
        assert first[0] == CASES[0].expect
        assert not wrong, "\n".join(wrong)
    finally:
        for lock in home.glob("*.lock"):
            pid = lock.read_text(encoding="ascii").strip()
            if pid.isdigit() and process_alive(int(pid)):
                os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)
