"""The empty files seawall makes for an agent working in place, and their record.

A granted file that does not exist yet is created empty before the sandbox is applied
(a Landlock rule attaches to an existing inode). Each one is written to a record (one
line per file: device, inode, path) in the session's own folder before the agent
starts, so that a placeholder left by a supervisor killed outright is still known as
seawall's and not taken as the agent's empty file. A placeholder counts as unused while
the path holds that same inode and it is still empty.

Standard library only: the supervisor imports it at every agent's start.
"""

# os and open rather than pathlib: the supervisor starts with every agent, and fast
# ruff: noqa: PTH103, PTH108, PTH120, PTH123

from __future__ import annotations

import os

__all__ = ["Made", "create", "drop_recorded", "remove_unused", "write_record"]

Made = tuple[str, int, int]  # path, device, inode


def create(paths: list[str]) -> list[Made]:
    """Create each missing file empty; (path, device, inode) of those made here."""
    made: list[Made] = []
    for path in paths:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except OSError:
            continue  # it exists (never ours to remove), or cannot be made: not granted
        info = os.fstat(fd)
        os.close(fd)
        made.append((path, info.st_dev, info.st_ino))
    return made


def write_record(record: str, made: list[Made]) -> None:
    """Write ``made`` to the file ``record`` (its folder created), flushed to disk."""
    os.makedirs(os.path.dirname(record) or ".", exist_ok=True)
    text = "".join(f"{device} {inode} {path}\n" for path, device, inode in made)
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_unused(made: list[Made]) -> list[str]:
    """Remove each placeholder that is still that same empty file; the paths removed."""
    removed: list[str] = []
    for path, device, inode in made:
        try:
            info = os.lstat(path)
            if (info.st_dev, info.st_ino, info.st_size) == (device, inode, 0):
                os.unlink(path)
                removed.append(path)
        except OSError:
            continue
    return removed


def drop_recorded(record: str) -> list[str]:
    """Remove the unused placeholders named in ``record`` (then the record itself); the
    paths removed. A missing record names none."""
    try:
        with open(record, encoding="utf-8") as lines:
            made = [_parse(line) for line in lines if line.strip()]
    except FileNotFoundError:
        return []
    removed = remove_unused([entry for entry in made if entry is not None])
    os.unlink(record)
    return removed


def _parse(line: str) -> Made | None:
    device, inode, path = [*line.rstrip("\n").split(" ", 2), "", ""][:3]
    if not (device.isdigit() and inode.isdigit() and path):
        return None
    return path, int(device), int(inode)
