"""STATE.md's wave sections, rendered again only when their wave changed.

A wave's section is a function of the wave's record alone, so a section rendered from
the same record bytes can be reused. Within a process ``SectionMemo`` keeps each
section with the bytes it was rendered from. Across processes (a resume) the sections
already on disk are reused: beside STATE.md, ``STATE.md.digests`` records, per wave,
the digest of the record bytes a section was rendered from and the digest of that
section's text. On load, a section of the STATE.md on disk is taken only when both
digests match (the wave's record is the one it was rendered from, and the text is the
one rendered then); any other section, a torn file or a missing one is rendered again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from coordinator.codec import decode_any, encode
from coordinator.fsutil import write_in_place
from coordinator.state.ledger import WaveRecord
from coordinator.state.render import wave_section

__all__ = ["SectionMemo", "split_sections"]

_HEADER = "### Wave "


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _text_digest(lines: list[str]) -> str:
    return _digest("\n".join(lines).encode("utf-8", "surrogateescape"))


def split_sections(text: str) -> dict[int, list[str]]:
    """The wave sections of a STATE.md text, by wave number: each from its
    ``### Wave N`` header to the next header or the end of the Wave History."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(_HEADER)]
    found: dict[int, list[str]] = {}
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        for at in range(start + 1, end):
            if lines[at].startswith(("## ", "\\* inferred")):
                end = at
                break
        number = lines[start].removeprefix(_HEADER).partition(" ")[0]
        if number.isdigit():
            found[int(number)] = lines[start:end]
    return found


class SectionMemo:
    """Each wave's STATE.md section, rendered again only when the wave's record changed
    (``parts`` maps ``wave/<n>`` to the record's JSON bytes, as the ledger's save cut it).

    A section is given a digest pair the first time it is reused (a wave that changes on
    every save is never hashed); ``write_digests`` keeps those pairs beside STATE.md and
    ``seed`` takes the sections of a STATE.md whose pairs still match.
    """

    def __init__(self, digests: Path) -> None:
        self._memo: dict[tuple[int, bool], tuple[bytes, list[str]]] = {}
        self._digests: dict[int, tuple[bytes, str]] = {}  # wave -> (its bytes, the pair)
        self._written = ""
        self.path = digests
        self.parts: Mapping[str, bytes] = {}

    def __call__(self, wave: WaveRecord, interrupted: bool) -> list[str]:
        key = self.parts.get(f"wave/{wave.number}")
        held = self._memo.get((wave.number, interrupted))
        if key is not None and held is not None and held[0] == key:
            if not interrupted:
                pair = self._digests.get(wave.number)
                if pair is None or pair[0] != key:
                    self._digests[wave.number] = (key, f"{_digest(key)} {_text_digest(held[1])}")
            return held[1]
        lines = wave_section(wave, interrupted=interrupted)
        if key is not None:
            self._memo[(wave.number, interrupted)] = (key, lines)
        return lines

    def write_digests(self) -> None:
        """Keep the digest pairs of the sections just rendered beside STATE.md (only
        when they changed; like STATE.md, unflushed: a lost or stale file only costs a
        render)."""
        pairs: dict[str, str] = {}
        for number, (key, pair) in self._digests.items():
            held = self._memo.get((number, False))
            if held is not None and held[0] == key and self.parts.get(f"wave/{number}") == key:
                pairs[str(number)] = pair
        text = encode(pairs).decode("utf-8")
        if text != self._written:
            write_in_place(self.path, text)
            self._written = text

    def seed(self, parts: Mapping[str, bytes], state_md: Path) -> None:
        """Take the sections of ``state_md`` whose recorded digests match the ledger's
        pieces ``parts`` (just read) and the section text found on disk."""
        try:
            raw = self.path.read_bytes()
            pairs = decode_any(raw)
            text = state_md.read_text(encoding="utf-8", errors="surrogateescape")
        except (OSError, ValueError):
            return
        if not isinstance(pairs, dict):
            return
        self._written = raw.decode("utf-8", "replace")
        sections = split_sections(text)
        for number, lines in sections.items():
            key = parts.get(f"wave/{number}")
            pair = pairs.get(str(number))
            if key is None or not isinstance(pair, str):
                continue
            if pair == f"{_digest(key)} {_text_digest(lines)}":
                self._memo[(number, False)] = (key, lines)
                self._digests[number] = (key, pair)
