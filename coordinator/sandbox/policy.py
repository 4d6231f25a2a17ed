"""What one agent's sandbox lets it write, as a list of paths the kernel can enforce.

An agent writes only to its workspace (a worktree of its own) or, working in place, to
its scope; to its own temporary directory; and to its agent CLI's state directories
(``~/.claude``, ``~/.claude.json``, ``$CODEX_HOME``, npm's cache). The repository's
``.git``, seawall's ``.seawall/`` and Claude Code's project settings stay read-only.

A scope grant is approximated by its literal directory prefix (``src/auth/**`` grants
``src/auth/``; ``src/*.py`` grants ``src/``); the post-wave scope check judges the exact
patterns. A file named literally that does not exist yet is granted as that file alone
(``new_files``): the supervisor creates it empty before the sandbox is applied (a
Landlock rule attaches to an existing inode) and removes it after the agent if it is
still that empty file; its directory stays read-only, so a sibling cannot be created. A
grant that would contain a protected path (the repository root, for ``**``) is split
into its entries minus the protected ones, so a brand-new file directly in such a
directory cannot be created: the kernel cannot grant "a directory except one entry".
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEVICE_PATHS",
    "PROTECTED_NAMES",
    "SCRATCH_PREFIX",
    "SandboxPolicy",
    "cli_state_paths",
    "scope_policy",
    "workspace_policy",
]

SCRATCH_PREFIX = "seawall-agent-"
"""The name's start of each sandboxed agent's own temporary directory (its ``TMPDIR``,
made by its runner and removed when it ends): the hook lets the agent write there too."""

PROTECTED_NAMES = (".git", ".seawall", ".claude/settings.json", ".claude/settings.local.json")
"""Entries of a repository an agent working in place may never write."""

DEVICE_PATHS = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
    "/dev/random",
    "/dev/urandom",
)
"""Devices every program expects to write (``> /dev/null``, terminals, shared memory)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxPolicy:
    """The paths one agent may write: directories (with everything beneath) and files.

    ``writable`` comes from the session (workspace or scope); the runner adds the
    agent's temporary directory, the CLI state paths and ``DEVICE_PATHS`` when it starts
    the agent (``with_paths``). ``describe`` names what was granted, for the record.
    """

    writable: tuple[Path, ...]
    describe: str = ""
    new_files: tuple[Path, ...] = ()
    """Granted files absent when the policy was made: created empty before the agent
    starts (never over an existing file) and removed after it when still empty."""
    placeholder_record: Path | None = None
    """Where the files created for ``new_files`` are listed before the agent starts
    (see ``seawall.sandbox.placeholders``); None: not listed."""

    def with_paths(self, extra: Iterable[Path]) -> SandboxPolicy:
        """This policy with ``extra`` paths writable too (duplicates dropped)."""
        merged = dict.fromkeys((*self.writable, *extra))
        return dataclasses.replace(self, writable=tuple(merged))


def workspace_policy(workspace: Path) -> SandboxPolicy:
    """An agent in its own worktree: the whole worktree is writable."""
    return SandboxPolicy(writable=(workspace,), describe=f"the worktree {workspace}")


def scope_policy(workspace: Path, scope: Sequence[str], *, create: bool = False) -> SandboxPolicy:
    """An agent working in place in ``workspace``: its scope's literal prefixes only.

    A directory grant that does not exist yet falls back to its nearest existing
    directory, and grants nothing where that directory holds a protected path (the
    repository root). A file that does not exist yet is granted alone (``new_files``)
    when its directory exists, else nothing. With ``create``, the missing directories
    are made first (empty: git does not see them): the literal directory of
    ``pkg/new/**``, the parent of ``pkg/new.py``."""
    root = Path(os.path.realpath(workspace))
    protected = [root / name for name in PROTECTED_NAMES]
    granted: dict[Path, None] = {}
    for grant in scope:
        target = _literal_prefix(root, grant, protected, create=create)
        if target is None:
            continue
        for path in _split_around(target, protected, root):
            granted[path] = None
    new = tuple(path for path in granted if not path.exists())
    shown = ", ".join(_shown(root, path) for path in granted) or "nothing in the repository"
    return SandboxPolicy(writable=tuple(granted), describe=f"in place: {shown}", new_files=new)


def cli_state_paths(env: Mapping[str, str], *, create_for: str = "") -> tuple[Path, ...]:
    """The agent CLIs' own state: ``~/.claude``, ``~/.claude.json``, ``$CLAUDE_CONFIG_DIR``,
    ``$CODEX_HOME`` (default ``~/.codex``), and npm's and the XDG caches.

    ``create_for`` names the program being started (``claude``, ``codex``): its own
    state directory is made when missing, since each CLI makes it on its first start,
    which the sandbox would refuse (the home directory itself stays read-only)."""
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    claude = [home / ".claude"]
    if env.get("CLAUDE_CONFIG_DIR"):
        claude.append(Path(env["CLAUDE_CONFIG_DIR"]))
    codex = [Path(env.get("CODEX_HOME") or home / ".codex")]
    for directory in {"claude": claude, "codex": codex}.get(create_for, []):
        directory.mkdir(parents=True, exist_ok=True)
    caches = [home / ".npm", Path(env.get("XDG_CACHE_HOME") or home / ".cache")]
    return (*claude, home / ".claude.json", *codex, *caches)


def _literal_prefix(
    root: Path, grant: str, protected: Sequence[Path], *, create: bool
) -> Path | None:
    """The path a grant's literal (glob-free) leading part names, or (for a directory)
    its nearest existing directory when it does not exist; None when that would widen
    it to a directory holding a protected path, or lead out of the repository, and for
    an absent file whose directory does not exist."""
    absolute = grant.startswith("/")
    parts = grant.split("/")
    literal: list[str] = []
    for part in parts:
        if "*" in part or "?" in part or "[" in part:
            break
        if part not in ("", "."):
            literal.append(part)
    if ".." in literal:
        return None
    directory = grant.endswith("/") or len(literal) < len([p for p in parts if p])
    wanted = Path(os.path.realpath(Path("/", *literal) if absolute else root.joinpath(*literal)))
    if not absolute and not wanted.is_relative_to(root):
        return None  # a symlink out of the repository grants nothing
    if any(wanted.is_relative_to(path) for path in protected):
        return None
    if create and not wanted.exists() and not absolute:
        (wanted if directory else wanted.parent).mkdir(parents=True, exist_ok=True)
    if not directory and not wanted.exists():
        return wanted if wanted.parent.is_dir() else None  # the file alone, never its dir
    path = wanted
    while not path.exists():
        if path.parent == path:
            return None
        path = path.parent
    if path != wanted and any(held.is_relative_to(path) for held in protected):
        return None  # widening a new path to the root would grant every entry
    return path


def _split_around(target: Path, protected: Sequence[Path], root: Path) -> list[Path]:
    """``target``, or its entries (recursively) where it holds a protected path. Entries
    are resolved: a symlink leading out of the repository grants nothing."""
    if any(target.is_relative_to(path) for path in protected):
        return []
    if not any(path.is_relative_to(target) for path in protected):
        return [target]
    try:
        entries = sorted(target.iterdir())
    except OSError:
        return []
    pieces: list[Path] = []
    for entry in entries:
        resolved = Path(os.path.realpath(entry))
        if resolved.is_relative_to(root) and not target.is_relative_to(resolved):
            pieces.extend(_split_around(resolved, protected, root))
    return pieces


def _shown(root: Path, path: Path) -> str:
    if path.is_relative_to(root):
        relative = path.relative_to(root).as_posix()
        return relative + "/" if path.is_dir() else relative
    return str(path)
