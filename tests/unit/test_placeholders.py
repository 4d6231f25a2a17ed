"""seawall's empty placeholders for absent scope files, and their record."""

from __future__ import annotations

import os
from pathlib import Path

from seawall.sandbox.placeholders import create, drop_recorded, write_record


def test_only_a_recorded_placeholder_still_empty_and_the_same_file_is_dropped(
    tmp_path: Path,
) -> None:
    existing = tmp_path / "users.py"
    existing.write_text("")
    paths = [tmp_path / name for name in ("unused.py", "written.py", "replaced.py")]
    made = create([str(existing), *map(str, paths)])
    assert [Path(path).name for path, _, _ in made] == ["unused.py", "written.py", "replaced.py"]
    record = tmp_path / "state" / "w1" / "task.txt"
    write_record(str(record), made)
    paths[1].write_text("agent's work\n")
    (tmp_path / "new.tmp").write_text("")  # an agent's own empty file renamed over it
    os.replace(tmp_path / "new.tmp", paths[2])
    assert drop_recorded(str(record)) == [str(paths[0])]
    assert not paths[0].exists()
    assert paths[1].read_text() == "agent's work\n"
    assert paths[2].exists() and existing.exists()
    assert not record.exists()
    assert drop_recorded(str(record)) == []  # read once; a missing record names nothing


def test_a_damaged_record_line_is_skipped(tmp_path: Path) -> None:
    (made,) = create([str(tmp_path / "a.py")])
    record = tmp_path / "task.txt"
    write_record(str(record), [made])
    record.write_text(record.read_text() + "not a record line\n\n")
    assert drop_recorded(str(record)) == [str(tmp_path / "a.py")]
