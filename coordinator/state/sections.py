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
from dataclasses import dataclass
from pathlib import Path

from seawall.codec import decode_any, encode
from seawall.runtime.files import write_in_place
from seawall.state.ledger import WaveRecord
from seawall.state.render import wave_section

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


@dataclass(slots=True)
class _Prefix:
    """The Wave History's first ``count`` waves joined into one text: reused while none
    of their pieces changed (``numbers`` are their wave numbers)."""

    waves: list[WaveRecord]
    count: int
    last: WaveRecord
    numbers: set[int]
    text: str
    inferred: bool
    interrupted: bool

    def holds(self, waves: list[WaveRecord], interrupted: bool, changed: set[str] | None) -> bool:
        if changed is None or interrupted != self.interrupted or waves is not self.waves:
            return False
        if len(waves) < self.count or waves[self.count - 1] is not self.last:
            return False
        numbers = self.numbers
        return not any(
            key.startswith("wave/") and int(key.removeprefix("wave/")) in numbers for key in changed
        )


class SectionMemo:
    """Each wave's STATE.md section, rendered again only when the wave's record changed
    (``parts`` maps ``wave/<n>`` to the record's JSON bytes, as the ledger's save cut it).

    ``history`` renders the whole Wave History: every wave but the last is kept joined
    as one text, reused while ``changed`` (the pieces the saves since the last render
    changed, as the ledger's writer tells them; None: not known) names none of them, so
    a render costs what changed, not the length of the history.

    A section is given a digest pair the first time it is reused (a wave that changes on
    every save is never hashed); ``write_digests`` keeps those pairs beside STATE.md and
    ``seed`` takes the sections of a STATE.md whose pairs still match.
    """

    def __init__(self, digests: Path) -> None:
        self._memo: dict[tuple[int, bool], tuple[bytes, list[str]]] = {}
        self._digests: dict[int, tuple[bytes, str]] = {}  # wave -> (its bytes, the pair)
        self._pairs: dict[str, str] = {}  # the pairs to write: of sections reused as current
        self._recount = True  # the pairs are to be found again from every digest
        self._prefix: _Prefix | None = None
        self._written = ""
        self.path = digests
        self.parts: Mapping[str, bytes] = {}
        self.changed: set[str] | None = None

    def __call__(self, wave: WaveRecord, interrupted: bool) -> list[str]:
        key = self.parts.get(f"wave/{wave.number}")
        held = self._memo.get((wave.number, interrupted))
        if key is not None and held is not None and held[0] == key:
            if not interrupted:
                self._pair(wave.number, key, held[1])
            return held[1]
        lines = wave_section(wave, interrupted=interrupted)
        if key is not None:
            self._memo[(wave.number, interrupted)] = (key, lines)
        if not interrupted:
            self._pairs.pop(str(wave.number), None)
        return lines

    def _pair(self, number: int, key: bytes, lines: list[str]) -> None:
        """Give wave ``number``'s section (``lines``, rendered from ``key``) its pair."""
        pair = self._digests.get(number)
        if pair is None or pair[0] != key:
            pair = self._digests[number] = (key, f"{_digest(key)} {_text_digest(lines)}")
        self._pairs[str(number)] = pair[1]

    def history(self, waves: list[WaveRecord], interrupted: bool) -> tuple[list[str], bool]:
        """The Wave History's lines (the reused first waves as one joined text) and
        whether any agent's status in it was inferred."""
        changed, self.changed = self.changed, None
        prefix = self._prefix
        if prefix is not None and not prefix.holds(waves, interrupted, changed):
            prefix = self._prefix = None
        if changed is None or any(k.startswith("wave/") and k not in self.parts for k in changed):
            self._recount = True  # a wave may be gone: its pair with it
        start = prefix.count if prefix is not None else 0
        rest = waves[start:]
        sections = [self(wave, interrupted) for wave in rest]
        head = [prefix.text] if prefix is not None else []
        inferred = prefix.inferred if prefix is not None else False
        lines = [*head, *(line for section in sections for line in section)]
        if len(rest) > 1:  # all but the last wave become the reused text
            settled = rest[:-1]
            numbers = prefix.numbers if prefix is not None else set()
            numbers.update(wave.number for wave in settled)
            if not interrupted:  # settled: worth a digest pair, for a resume to reuse
                for wave in settled:
                    key = self.parts.get(f"wave/{wave.number}")
                    held = self._memo.get((wave.number, False))
                    if key is not None and held is not None and held[0] == key:
                        self._pair(wave.number, key, held[1])
            self._prefix = _Prefix(
                waves=waves,
                count=len(waves) - 1,
                last=waves[-2],
                numbers=numbers,
                text="\n".join([*head, *(line for section in sections[:-1] for line in section)]),
                inferred=inferred or any(a.inferred for wave in settled for a in wave.agents),
                interrupted=interrupted,
            )
        return lines, inferred or any(a.inferred for wave in rest for a in wave.agents)

    def write_digests(self) -> None:
        """Keep the digest pairs of the sections just rendered beside STATE.md (only
        when they changed; like STATE.md, unflushed: a lost or stale file only costs a
        render)."""
        if self._recount:
            self._pairs = {}
            for number, (key, pair) in self._digests.items():
                held = self._memo.get((number, False))
                if held is not None and held[0] == key and self.parts.get(f"wave/{number}") == key:
                    self._pairs[str(number)] = pair
            self._recount = False
        text = encode(self._pairs).decode("utf-8")
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
        self._prefix = None
        self._recount = True
        sections = split_sections(text)
        for number, lines in sections.items():
            key = parts.get(f"wave/{number}")
            pair = pairs.get(str(number))
            if key is None or not isinstance(pair, str):
                continue
            if pair == f"{_digest(key)} {_text_digest(lines)}":
                self._memo[(number, False)] = (key, lines)
                self._digests[number] = (key, pair)
