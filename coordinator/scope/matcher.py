"""Path scope matching on resolved paths.

A scope is a list of grants, relative to the agent's workspace root unless absolute:

- ``src/pkg/`` (trailing ``/``): the directory and everything below it;
- a grant with ``*`` or ``**``: ``*`` matches within one path segment, ``**`` spans any
  number of segments (zero included);
- anything else: exactly that path.

A candidate path is resolved before it is matched: relative paths against the working
directory (the workspace root by default), ``..``, ``.``, ``//`` and every symlink on the
way (so a symlink pointing out of scope is out of scope). A path outside the workspace
is allowed only by an absolute grant. Paths with a NUL byte, control or invisible
format characters, overlong paths, and names whose Unicode has more than one form
(NFC/NFKC differ: look-alikes that normalise to another path) and existing files with
more than one hard link are refused: which file they name is ambiguous. seawall's own
state and guard files (any ``.seawall`` or ``.git`` component at any depth,
``.claude/settings*.json``) are never writable through a grant; the one carve-out is
the session's own stop notes: ``.seawall/<session>/BLOCKED.md``, and the agent's own
``.seawall/<session>/agents/<task>/BLOCKED.md`` (another agent's note is refused, and so
is every agent's note to a matcher that serves no one agent).
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seawall.errors import ConfigurationError

__all__ = [
    "MAX_COMPONENT_BYTES",
    "MAX_PATH_BYTES",
    "PathVerdict",
    "ScopeMatcher",
    "ambiguity",
    "compile_grant",
    "grant_matches",
    "protected",
]

MAX_PATH_BYTES = 4096
MAX_COMPONENT_BYTES = 255
_PROTECTED = re.compile(r"\.claude/settings(?:\.local)?\.json")
_STATE_DIRS = frozenset({".seawall", ".git"})


def protected(rel: str) -> bool:
    """Whether a workspace-relative path is seawall or git state: a ``.seawall`` or
    ``.git`` component at any depth (in any letter case), or Claude Code's settings."""
    if _PROTECTED.fullmatch(rel):
        return True
    return any(part.casefold() in _STATE_DIRS for part in rel.split("/"))


@dataclass(frozen=True, slots=True, kw_only=True)
class PathVerdict:
    """Whether a path may be written, the resolved path that was judged, and why."""

    allowed: bool
    path: str  # workspace-relative POSIX path when inside the workspace, else absolute
    reason: str
    grant: str | None = None
    carved_out: bool = False


# ``os.fsdecode`` and pygit2 give a byte of a name that is not UTF-8 as one of these
# (``surrogateescape``); such a name is exact, not a look-alike of another one
_RAW_BYTE_FIRST, _RAW_BYTE_LAST = 0xDC80, 0xDCFF


def ambiguity(path: str) -> str | None:
    """Why ``path`` does not name one file unambiguously, or None when it does."""
    if "\x00" in path:
        return "the path contains a NUL byte"
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        return f"the path is longer than {MAX_PATH_BYTES} bytes"
    for part in path.split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
            return f"a path component is longer than {MAX_COMPONENT_BYTES} bytes"
    for char in path:
        if _RAW_BYTE_FIRST <= ord(char) <= _RAW_BYTE_LAST:
            continue  # a byte of a name that is not UTF-8: one file, named exactly
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn"):
            return f"the path contains an invisible or control character (U+{ord(char):04X})"
    if not path.isascii():
        nfc = unicodedata.normalize("NFC", path)
        if nfc != path:
            return "the path is not in Unicode NFC form (a look-alike of another path)"
        if unicodedata.normalize("NFKC", path) != nfc:
            return "the path has Unicode look-alike characters that normalise to another path"
    return None


def compile_grant(grant: str) -> tuple[str, re.Pattern[str] | None]:
    """Normalise a grant and compile it: (grant, regex or None for a directory/exact grant)."""
    if not grant or "\x00" in grant:
        raise ConfigurationError(f"invalid scope entry {grant!r}")
    absolute = grant.startswith("/")
    directory = grant.endswith("/")
    parts = [p for p in unicodedata.normalize("NFC", grant).split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ConfigurationError(f"scope entry {grant!r} must not contain '..'")
    body = "/".join(parts)
    norm = ("/" if absolute else "") + body + ("/" if directory and body else "")
    if not any("*" in p for p in parts):
        return norm, None
    pieces: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            pieces.append(".*" if last else "(?:[^/]+/)*")
            continue
        segment = "[^/]*".join(re.escape(chunk) for chunk in part.split("*"))
        pieces.append(segment + ("" if last else "/"))
    pattern = "".join(pieces) + ("(?:/.*)?" if directory else "")
    return norm, re.compile(("/" if absolute else "") + pattern, re.DOTALL)


def grant_matches(grant: str, regex: re.Pattern[str] | None, path: str) -> bool:
    """Whether the normalised ``path`` (relative or absolute) falls under ``grant``."""
    if regex is not None:
        return regex.fullmatch(path) is not None
    if grant.endswith("/"):
        return path == grant[:-1] or path.startswith(grant) or (grant == "/")
    return path == grant


class ScopeMatcher:
    """Judges write access of paths for one agent.

    ``workspace`` is the agent's working tree (a worktree or the repository itself);
    ``state_root`` is the repository whose ``.seawall/<session>/`` holds the session's
    state. ``grants`` are the scope entries of the agent; ``agent`` its task id, whose
    stop note (``agents/<agent>/BLOCKED.md``) it may write (None: no one agent's);
    ``scratch`` its own temporary directory, which it may write (None: it has none).
    """

    def __init__(
        self,
        grants: Sequence[str],
        *,
        workspace: Path,
        session: str,
        state_root: Path | None = None,
        agent: str | None = None,
        scratch: Path | None = None,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.scratch = Path(os.path.realpath(scratch)) if scratch is not None else None
        self.state_root = Path(os.path.realpath(state_root or workspace))
        self.session = session
        self.agent = agent
        self.grants = tuple(compile_grant(grant) for grant in grants)

    def check(self, path: str, *, cwd: Path | None = None) -> PathVerdict:
        """Resolve ``path`` and say whether this agent may write it."""
        problem = ambiguity(path)
        if problem:
            return PathVerdict(allowed=False, path=path, reason=problem)
        base = Path(cwd) if cwd is not None else self.workspace
        resolved = os.path.realpath(base / _expand_home(path))
        if self._is_own_note(resolved):
            return PathVerdict(
                allowed=True, path=resolved, reason="the session's own note", carved_out=True
            )
        rel = _relative(resolved, self.workspace)
        shown = rel if rel is not None else resolved
        if rel is None and self.scratch is not None and _relative(resolved, self.scratch):
            return PathVerdict(allowed=True, path=resolved, reason="the agent's own $TMPDIR")
        if protected(rel if rel is not None else resolved.lstrip("/")):
            return PathVerdict(
                allowed=False, path=shown, reason=f"{shown} is seawall or git state, not task files"
            )
        if _relative(resolved, self.state_root / ".seawall") is not None:
            return PathVerdict(allowed=False, path=shown, reason="seawall state is not task files")
        if _hard_linked(resolved):
            reason = f"{shown} has other hard links: writing it changes files elsewhere too"
            return PathVerdict(allowed=False, path=shown, reason=reason)
        for grant, regex in self.grants:
            target = resolved if grant.startswith("/") else rel
            if target is not None and grant_matches(grant, regex, target):
                return PathVerdict(allowed=True, path=shown, reason="in scope", grant=grant)
        if rel is not None:
            where = "outside this task's file scope"
        else:  # scratch files belong in the agent's own temporary directory
            where = "outside the repository (for scratch files use $TMPDIR, the agent's own)"
        return PathVerdict(allowed=False, path=shown, reason=f"{shown} is {where}")

    def matches_relative(self, rel: str) -> bool:
        """Lexical check of a workspace-relative path (as git reports it); no disk access."""
        if ambiguity(rel) or protected(rel):
            return False
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if ".." in parts:
            return False
        norm = "/".join(parts)
        return any(
            grant_matches(grant, regex, norm)
            for grant, regex in self.grants
            if not grant.startswith("/")
        )

    def _is_own_note(self, resolved: str) -> bool:
        rel = _relative(resolved, self.state_root / ".seawall" / self.session)
        if rel is None:
            return False
        parts = rel.split("/")
        if parts == ["BLOCKED.md"]:
            return True
        own = ["agents", self.agent, "BLOCKED.md"]
        return self.agent is not None and parts == own


def _relative(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` in POSIX form, or None when it is not inside."""
    root_text = str(root)
    if path == root_text:
        return "."
    prefix = root_text.rstrip("/") + "/"
    if path.startswith(prefix):
        return path[len(prefix) :]
    return None


def _expand_home(path: str) -> str:
    """``~`` and ``~/x`` as a shell would expand them; other paths unchanged."""
    if path == "~" or path.startswith("~/"):
        return str(Path.home()) + path[1:]
    return path


def _hard_linked(path: str) -> bool:
    """True for an existing regular file with more than one name (a hard link)."""
    try:
        info = Path(path).stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1
