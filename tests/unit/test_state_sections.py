"""STATE.md's wave sections across a resume: reused only where digests prove them
current, so the first save after a load renders what a normal save renders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from seawall.model import Enforcement, Isolation, Status, Task
from seawall.state import sections
from seawall.state.ledger import AgentRecord, SessionState, WavePhase, WaveRecord
from seawall.state.render import render_state_md, wave_section
from seawall.state.sections import split_sections
from seawall.state.store import StateStore

Rendered = list[int]


def _state(waves: int) -> SessionState:
    state = SessionState(
        session="s1", name="demo", repo="/r", target_branch="main", start_commit="0" * 40
    )
    for number in range(1, waves + 1):
        wave = WaveRecord(
            number=number,
            tasks=[Task(id=f"w{number}a{i}", prompt="p", scope=("x",)) for i in range(2)],
            isolation=Isolation.NONE,
            enforcement=Enforcement.STRICT,
            max_turns=30,
            phase=WavePhase.DONE,
        )
        for i in range(2):
            agent = AgentRecord(task=f"w{number}a{i}", status=Status.DONE, summary="ok")
            wave.agents.append(agent)
        state.waves.append(wave)
    state.pending = [Task(id="later", prompt="p")]
    return state


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Rendered:
    """The wave numbers whose section was rendered, in order (the real renderer runs)."""
    seen: Rendered = []
    real: Callable[..., list[str]] = wave_section

    def counting(wave: WaveRecord, *, interrupted: bool = False) -> list[str]:
        seen.append(wave.number)
        return real(wave, interrupted=interrupted)

    monkeypatch.setattr(sections, "wave_section", counting)
    return seen


def _saved(tmp_path: Path, waves: int = 5) -> tuple[StateStore, SessionState]:
    store = StateStore(tmp_path / "repo", "s1")
    state = _state(waves)
    store.save(state)
    state.cost_usd = 1.0
    store.save(state)  # the sections reused: their digests are kept
    return store, state


def _resume(store: StateStore) -> tuple[StateStore, SessionState]:
    reader = StateStore(store.paths.repo, "s1")
    return reader, reader.load()


def test_the_first_save_after_a_resume_renders_only_the_changed_wave(
    tmp_path: Path, rendered: Rendered
) -> None:
    store, _ = _saved(tmp_path)
    reader, state = _resume(store)
    state.waves[2].agents[0].summary = "changed after the resume"
    rendered.clear()
    reader.save(state)
    assert rendered == [3]
    text = store.paths.state_md.read_text(encoding="utf-8")
    assert text == render_state_md(state)
    assert "changed after the resume" in text


def test_an_unchanged_resume_renders_no_section(tmp_path: Path, rendered: Rendered) -> None:
    store, _ = _saved(tmp_path)
    reader, state = _resume(store)
    rendered.clear()
    reader.save(state)
    assert rendered == []
    assert store.paths.state_md.read_text(encoding="utf-8") == render_state_md(state)


def test_a_section_edited_on_disk_is_rendered_again(tmp_path: Path, rendered: Rendered) -> None:
    store, _ = _saved(tmp_path)
    path = store.paths.state_md
    path.write_text(path.read_text(encoding="utf-8").replace("w2a1 · DONE", "w2a1 · FAILED"))
    reader, state = _resume(store)
    rendered.clear()
    reader.save(state)
    assert rendered == [2]
    assert path.read_text(encoding="utf-8") == render_state_md(state)


def test_a_stale_state_md_after_a_crash_is_not_kept(tmp_path: Path, rendered: Rendered) -> None:
    """A crash between the ledger's save and STATE.md's leaves STATE.md (and its
    digests) one save behind: the wave that save changed is rendered again."""
    store, state = _saved(tmp_path)
    behind = store.paths.state_md.read_bytes(), store.paths.state_md_digests.read_bytes()
    state.waves[3].agents[1].summary = "saved, never rendered"
    store.save(state)
    store.paths.state_md.write_bytes(behind[0])
    store.paths.state_md_digests.write_bytes(behind[1])
    reader, again = _resume(store)
    rendered.clear()
    reader.save(again)
    assert rendered == [4]
    text = store.paths.state_md.read_text(encoding="utf-8")
    assert text == render_state_md(again) and "saved, never rendered" in text


@pytest.mark.parametrize("damage", [b"", b"{not json", b"[1, 2]", b'{"1": 3}'])
def test_damaged_or_missing_digests_render_every_section(
    tmp_path: Path, rendered: Rendered, damage: bytes
) -> None:
    store, _ = _saved(tmp_path, waves=3)
    store.paths.state_md_digests.write_bytes(damage)
    reader, state = _resume(store)
    rendered.clear()
    reader.save(state)
    assert rendered == [1, 2, 3]
    assert store.paths.state_md.read_text(encoding="utf-8") == render_state_md(state)
    store.paths.state_md_digests.unlink()
    reader, state = _resume(store)
    rendered.clear()
    reader.save(state)
    assert rendered == [1, 2, 3]


def test_sections_split_at_each_wave_header_and_end_at_the_history(tmp_path: Path) -> None:
    state = _state(2)
    found = split_sections(render_state_md(state))
    assert sorted(found) == [1, 2]
    assert found[1][0].startswith("### Wave 1 ") and found[1][-1] == ""
    assert not any(line.startswith("## Pending") for line in found[2])


def test_each_save_renders_what_changed_and_the_file_stays_whole(
    tmp_path: Path, rendered: Rendered
) -> None:
    store = StateStore(tmp_path / "repo", "s1")
    state = _state(2)
    store.save(state)
    steps: list[tuple[Callable[[], object], list[int]]] = [
        (lambda: None, []),  # the last wave's bytes are the same: reused
        (lambda: state.waves.append(_state(3).waves[2]), [3]),
        (lambda: setattr(state.waves[0].agents[1], "summary", "an old wave changed"), [1]),
        (lambda: setattr(state.waves[1].agents[0], "inferred", True), [2]),
        (lambda: state.waves.append(_state(4).waves[3]), [4]),
        (lambda: setattr(state, "pending", []), []),
    ]
    for change, expected in steps:
        change()
        rendered.clear()
        store.save(state)
        assert rendered == expected
        assert store.paths.state_md.read_text(encoding="utf-8") == render_state_md(state)
    assert "\\* inferred" in render_state_md(state)
