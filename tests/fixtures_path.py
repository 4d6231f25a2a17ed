"""Where the real public fixtures are: ``$SEAWALL_FIXTURES``, else ``../shared/fixtures``.

The default is relative to the project root (where CI lays the fixtures beside the
clone). A folder counts as the fixtures only when it holds ``transcripts/SOURCES.md``,
the list of where each transcript came from, so an unrelated ``shared`` folder near a
clone is never mistaken for them; tests that need the fixtures skip without them.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FIXTURES", "TRANSCRIPTS", "fixtures_root", "transcript_files", "transcripts_present"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def fixtures_root() -> Path:
    configured = os.environ.get("SEAWALL_FIXTURES")
    if configured:
        return Path(configured).expanduser().resolve()
    return (PROJECT_ROOT / ".." / "shared" / "fixtures").resolve()


FIXTURES = fixtures_root()
TRANSCRIPTS = FIXTURES / "transcripts"


def transcripts_present() -> bool:
    return (TRANSCRIPTS / "SOURCES.md").is_file()


def transcript_files() -> list[Path]:
    """Every transcript of the fixtures (``.jsonl`` and ``.txt`` logs), sorted; none
    when the fixtures are absent."""
    if not transcripts_present():
        return []
    return sorted(path for path in TRANSCRIPTS.rglob("*") if path.suffix in (".jsonl", ".txt"))
