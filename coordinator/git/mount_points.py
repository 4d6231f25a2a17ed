"""The empty files Claude Code's sandbox makes in a lead's repository while a command runs.

To keep a path read-only, Claude Code's sandbox (bubblewrap) mounts over it; a path
that does not exist yet is first made into a mount point: an empty, read-only file
(mode 0444). It makes them for the dotfiles a program could plant (``.bashrc``,
``.gitconfig``, ``.mcp.json``, ``.vscode``, ...), for Claude Code's own files under
``.claude/`` and for the settings' ``denyWrite`` entries, when a sandboxed command
starts, and removes them when the last one ends (Claude Code 2.1.197). An in-place wave
dispatched by a lead can therefore see them come and go in the shared tree; none of
them is anyone's change.

``is_mount_point`` tells them apart: such a name, an empty regular file, mode 0444. A
file that vanished again is never seen at all; one still there (a command still
running, or a Claude Code killed before it cleaned up) is left where it is, neither
attributed, set aside nor removed: removing a mount point another mount namespace
uses would undo that namespace's read-only mount. An empty read-only file carries
nothing, and can be deleted by hand once no lead runs.
"""

from __future__ import annotations

import stat
from pathlib import Path, PurePosixPath

__all__ = ["CLAUDE_NAMES", "NAMES", "is_empty_read_only", "is_mount_point"]

NAMES = frozenset(
    {
        ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig",
        ".gitmodules", ".ripgreprc", ".mcp.json", ".vscode", ".idea", ".seawall",
    }
)  # fmt: skip
"""Names made into mount points wherever the sandbox's project directory is."""

CLAUDE_NAMES = frozenset(
    {
        "settings.json", "settings.local.json", "skills", "agents", "commands", "hooks",
        "launch.json", "workflows", "routines", "scheduled_tasks.json",
    }
)  # fmt: skip
"""Names under ``.claude/`` made into mount points."""

_READ_ONLY = 0o444


def is_mount_point(root: Path, path: str) -> bool:
    """Whether ``path`` (relative to the working tree ``root``, as git names it) is an
    empty mount point Claude Code's sandbox made (see the module docstring)."""
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    named = parts[-1] in NAMES or (
        len(parts) >= 2 and parts[-2] == ".claude" and parts[-1] in CLAUDE_NAMES
    )
    return named and is_empty_read_only(root / path)


def is_empty_read_only(path: Path) -> bool:
    """An empty regular file, readable by all and writable by none (0444): what
    bubblewrap makes to mount over."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_size == 0
        and stat.S_IMODE(info.st_mode) == _READ_ONLY
    )
