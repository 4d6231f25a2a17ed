"""The links a command makes, each with the target it points at.

A link is judged by its target, not only by its own path: a symbolic link inside the
scope that points outside it lets a later write (by the agent or by anyone who trusts
the tree) land outside, and a hard link of an outside file is that file. The programs
that make links:

- ``ln`` in every form: ``TARGET LINK``, ``TARGET... DIR``, ``TARGET`` alone (a link
  named like it in the working directory), ``-t DIR``, ``-T`` (the link is never put
  inside a directory), ``-n`` (a link to a directory is replaced, not entered); ``-s``
  writes the target's text, which the kernel reads from the link's directory; ``-r``
  (``--relative``) computes that text from the target as named from the working
  directory; without ``-s`` the link is a hard link of the target;
- ``cp -s`` (a symbolic link whose text is the source as written), ``cp -l`` (a hard
  link of the source), and ``cp -a``/``-P``/``-d``/``-R`` (``-r``) without ``-L``/``-H``,
  which copy a source that is itself a symbolic link as a link with the same text, now
  read from the new link's directory;
- ``rsync -l``/``-a`` (without ``-L``/``--copy-links``), which copy links the same way,
  and the links inside a source directory too.

``install`` always copies what a link points at (it makes no link): its destination is
judged as any copy's. A source directory is searched for the links it holds, up to
``MAX_WALK`` entries; a larger one is a write whose links cannot be known here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from seawall.shell import SimpleCommand

__all__ = ["LINKERS", "MAX_WALK", "LinkMade", "links_made"]

LINKERS = frozenset({"ln", "cp", "rsync"})

MAX_WALK = 2000

_LN_ARGS = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_CP_ARGS = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_RSYNC_ARGS = frozenset(
    {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T", "--temp-dir",
     "--exclude-from", "--include-from", "--files-from", "--log-file", "-B", "--block-size",
     "--compare-dest", "--copy-dest", "--link-dest", "--partial-dir", "--backup-dir",
     "--chmod", "--chown", "--suffix", "--max-size", "--min-size", "--timeout"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LinkMade:
    """One link a command makes: the target to judge and the directory it is read
    from (the link's own directory for a symbolic link's text), or why it is unknown."""

    target: str = ""
    base: Path = Path()
    unknown: str = ""


def links_made(cmd: SimpleCommand, place: Path) -> list[LinkMade]:
    """Every link ``cmd`` makes when it runs in ``place`` (see the module docstring)."""
    if cmd.name == "ln":
        return _ln(cmd, place)
    if cmd.name == "cp":
        return _cp(cmd, place)
    if cmd.name == "rsync":
        return _rsync(cmd, place)
    return []


def _split(
    cmd: SimpleCommand, with_arg: frozenset[str]
) -> tuple[set[str], dict[str, str], list[int]]:
    """(short letters and long options, option values, operand indexes) of ``cmd``."""
    flags: set[str] = set()
    values: dict[str, str] = {}
    operands: list[int] = []
    argv = cmd.argv
    i, dashes = 1, False
    while i < len(argv):
        word = argv[i]
        if dashes or word == "-" or not word.startswith("-"):
            operands.append(i)
        elif word == "--":
            dashes = True
        elif word.startswith("--"):
            name, eq, value = word.partition("=")
            flags.add(name)
            if eq:
                values[name] = value
            elif name in with_arg and i + 1 < len(argv):
                values[name] = argv[i + 1]
                i += 1
        else:
            for at, letter in enumerate(word[1:], start=1):
                flags.add(letter)
                if "-" + letter in with_arg:
                    rest = word[at + 1 :]
                    if rest:
                        values["-" + letter] = rest
                    elif i + 1 < len(argv):
                        values["-" + letter] = argv[i + 1]
                        i += 1
                    break
        i += 1
    return flags, values, operands


def _dynamic(cmd: SimpleCommand, indexes: Sequence[int]) -> bool:
    return bool(cmd.dynamic) and any(cmd.dynamic[i] for i in indexes)


def _placements(
    sources: list[str], dest: str | None, directory: str | None, place: Path, *, whole: bool
) -> list[tuple[str, Path]]:
    """(source, where its link lands) for ``SRC... DEST`` or ``-t DIR SRC...``; ``whole``:
    the destination is never entered as a directory (``-T``)."""
    if directory is not None:
        return [(src, place / directory / _base(src)) for src in sources]
    if dest is None:
        return [(src, place / _base(src)) for src in sources]
    target = place / dest
    if not whole and (target.is_dir() or dest.endswith("/") or len(sources) > 1):
        return [(src, target / _base(src)) for src in sources]
    return [(src, target) for src in sources[:1]]


def _base(path: str) -> str:
    return Path(path.rstrip("/")).name or path


def _ln(cmd: SimpleCommand, place: Path) -> list[LinkMade]:
    flags, values, operands = _split(cmd, _LN_ARGS)
    if _dynamic(cmd, operands) or ("-t" in values and "--target-directory" in values):
        return [LinkMade(unknown=f"`{' '.join(cmd.argv)}` links names not known before it runs")]
    words = [cmd.argv[i] for i in operands]
    directory = values.get("-t", values.get("--target-directory"))
    if not words:
        return []
    whole = "T" in flags or "--no-target-directory" in flags
    no_enter = "n" in flags or "--no-dereference" in flags
    if directory is None and len(words) == 1:
        placed = _placements(words, None, None, place, whole=whole)
    elif directory is None:
        dest = words[-1]
        entered = (place / dest).is_symlink() and no_enter
        placed = _placements(words[:-1], dest, None, place, whole=whole or entered)
    else:
        placed = _placements(words, None, directory, place, whole=False)
    symbolic = "s" in flags or "--symbolic" in flags
    relative = "r" in flags or "--relative" in flags
    out: list[LinkMade] = []
    for target, link in placed:
        if symbolic and not relative:
            out.append(LinkMade(target, link.parent))
        else:  # ``-r`` names the target from here; a hard link is of the file named here
            out.append(LinkMade(target, place))
    return out


def _cp(cmd: SimpleCommand, place: Path) -> list[LinkMade]:
    flags, values, operands = _split(cmd, _CP_ARGS)
    words = [cmd.argv[i] for i in operands]
    directory = values.get("-t", values.get("--target-directory"))
    if not words or (directory is None and len(words) < 2):
        return []
    if _dynamic(cmd, operands):
        return [LinkMade(unknown=f"`{' '.join(cmd.argv)}` copies names not known before it runs")]
    whole = "T" in flags or "--no-target-directory" in flags
    if directory is None:
        placed = _placements(words[:-1], words[-1], None, place, whole=whole)
    else:
        placed = _placements(words, None, directory, place, whole=False)
    if "s" in flags or "--symbolic-link" in flags:
        return [LinkMade(src, link.parent) for src, link in placed]
    if "l" in flags or "--link" in flags:
        return [LinkMade(src, place) for src, link in placed]
    follows = bool({"L", "H", "--dereference"} & flags)
    recursive = bool({"R", "r", "a", "--recursive", "--archive"} & flags)
    keeps = bool({"a", "P", "d", "--archive", "--no-dereference"} & flags)
    if follows or not (keeps or recursive):
        return []
    out: list[LinkMade] = []
    for src, link in placed:
        out.extend(_copied_links(place / src, link, recursive=recursive))
    return out


def _rsync(cmd: SimpleCommand, place: Path) -> list[LinkMade]:
    flags, _values, operands = _split(cmd, _RSYNC_ARGS)
    words = [cmd.argv[i] for i in operands]
    keeps = bool({"l", "a", "--links", "--archive"} & flags)
    follows = bool({"L", "--copy-links", "--safe-links", "--no-links"} & flags)
    if len(words) < 2 or not keeps or follows or any(":" in w for w in words):
        return []  # a remote side, or links copied as what they point at (or skipped)
    if _dynamic(cmd, operands):
        return [LinkMade(unknown=f"`{' '.join(cmd.argv)}` copies names not known before it runs")]
    recursive = bool({"r", "a", "--recursive", "--archive"} & flags)
    dest = place / words[-1]
    out: list[LinkMade] = []
    for src in words[:-1]:
        if src.endswith("/") and (place / src).is_dir():
            out.extend(_walk_links(place / src, dest))
            continue
        into = dest.is_dir() or words[-1].endswith("/") or len(words) > 2
        into = into or ((place / src).is_dir() and not (place / src).is_symlink())
        out.extend(
            _copied_links(place / src, dest / _base(src) if into else dest, recursive=recursive)
        )
    return out


def _copied_links(source: Path, link: Path, *, recursive: bool) -> list[LinkMade]:
    """The links a copy that keeps links makes of ``source`` at ``link``."""
    if source.is_symlink():
        return [LinkMade(str(source.readlink()), link.parent)]
    if recursive and source.is_dir():
        return list(_walk_links(source, link))
    return []


def _walk_links(root: Path, into: Path) -> Iterator[LinkMade]:
    """Each symbolic link below ``root``, as copied below ``into``."""
    seen = 0
    for folder, dirs, files in os.walk(root):
        seen += len(dirs) + len(files)
        if seen > MAX_WALK:
            yield LinkMade(
                unknown=f"{root} holds more than {MAX_WALK} entries: its links are not checked"
            )
            return
        for name in [*dirs, *files]:
            full = Path(folder) / name
            if full.is_symlink():
                rel = full.relative_to(root)
                yield LinkMade(str(full.readlink()), (into / rel).parent)
