"""Claude Code's own sandbox, the OS layer of a lead agent and the subagents it dispatches.

A lead's subagents (Claude Code's Agent or Task tool) run inside the lead's Claude Code
process, not as processes seawall starts, so seawall's Landlock sandbox cannot be given
to them. Claude Code has a sandbox of its own for every Bash command (bubblewrap and
seccomp on Linux, Seatbelt on macOS): ``sandbox_settings`` is the ``sandbox`` object
seawall writes into the project's ``.claude/settings.json`` (``merge_sandbox`` keeps
every key of the user's), ``sandbox_gaps`` says what a settings object lacks of it, and
``check_prerequisites`` whether this machine can run it and what to install when not.

What the settings say:

- ``enabled`` and ``failIfUnavailable``: the lead does not start without a working
  sandbox; ``allowUnsandboxedCommands`` false: no command may ask to run outside it
  (``dangerouslyDisableSandbox``);
- ``filesystem.allowWrite``: the repository and the folder agent worktrees live in
  (Claude Code adds its own temporary directory, ``$TMPDIR`` inside the sandbox);
- ``filesystem.denyWrite``: what the Landlock policy protects in a repository
  (``seawall.sandbox.policy.PROTECTED_NAMES``: ``.git``, ``.seawall``, Claude Code's
  project settings);
- ``excludedCommands``: ``seawall:*`` (every ``seawall ...`` command line; a bare
  ``seawall`` entry would match only the command without arguments). The lead's own
  steps (``seawall next``) write ``.seawall/`` and ``.git``, so they run outside the
  sandbox. Claude Code runs a whole command line outside it when any command of the line
  is excluded (``seawall next; python3 -c ...``, a redirection, a pipe), so seawall's
  hook refuses a line that runs ``seawall`` with anything else, and refuses ``seawall``
  to a subagent (``seawall.hooks.pre_tool_use``).

The network is left to the user's settings (``sandbox.network``): closed unless they
allow domains. Paths are absolute: Claude Code resolves a relative one against the
settings file's folder, and on Linux ignores glob patterns.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seawall.codec import JsonObject, JsonView
from seawall.errors import ConfigurationError
from seawall.sandbox.policy import PROTECTED_NAMES

__all__ = [
    "EXCLUDED_COMMANDS",
    "PACKAGES",
    "UNSANDBOXED_PROGRAMS",
    "Prerequisites",
    "check_prerequisites",
    "merge_sandbox",
    "sandbox_gaps",
    "sandbox_settings",
]

UNSANDBOXED_PROGRAMS = ("seawall",)
"""Programs Claude Code's sandbox runs outside it: seawall's own steps."""

EXCLUDED_COMMANDS = tuple(f"{program}:*" for program in UNSANDBOXED_PROGRAMS)
"""``UNSANDBOXED_PROGRAMS`` as ``sandbox.excludedCommands`` entries (prefix rules)."""

PACKAGES = {"bwrap": "bubblewrap", "socat": "socat"}
"""The programs Claude Code's Linux sandbox needs, and the package each comes in."""

_REQUIRED = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
# package managers, tried in this order: the first on PATH is the one named
_INSTALLERS = (
    ("apt-get", "apt-get install -y"),
    ("dnf", "dnf install -y"),
    ("yum", "yum install -y"),
    ("zypper", "zypper install -y"),
    ("pacman", "pacman -S --noconfirm"),
    ("apk", "apk add"),
)
# what Claude Code runs a sandboxed command under, reduced to starting ``true``
_PROBE = (
    "--new-session", "--die-with-parent", "--unshare-net", "--unshare-pid",
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true",
)  # fmt: skip
_PROBE_TIMEOUT_S = 20


def sandbox_settings(repo: Path, *, worktree_root: Path) -> JsonObject:
    """The ``sandbox`` object seawall wants in the settings of a lead in ``repo``."""
    root = Path(os.path.realpath(repo))
    worktrees = Path(os.path.realpath(worktree_root))
    return {
        **_REQUIRED,
        "excludedCommands": list(EXCLUDED_COMMANDS),
        "filesystem": {
            "allowWrite": list(dict.fromkeys([str(root), str(worktrees)])),
            "denyWrite": [str(root / name) for name in PROTECTED_NAMES],
        },
    }


def merge_sandbox(current: object, wanted: JsonView, *, where: str) -> JsonObject:
    """``current`` (the settings' ``sandbox`` object, or None) with ``wanted`` added.

    The three switches take seawall's values; the lists gain the entries they lack (the
    user's stay first, in their order); every other key (``network``, ``denyRead``,
    ``autoAllowBashIfSandboxed``, ...) is kept as it is. A part of the wrong type is
    refused, never overwritten (``where`` names the file)."""
    merged = dict(_object(current, f"{where}: sandbox"))
    merged.update({key: wanted[key] for key in _REQUIRED})
    merged["excludedCommands"] = _union(
        merged.get("excludedCommands"),
        wanted["excludedCommands"],
        f"{where}: sandbox.excludedCommands",
    )
    filesystem = dict(_object(merged.get("filesystem"), f"{where}: sandbox.filesystem"))
    for key in ("allowWrite", "denyWrite"):
        filesystem[key] = _union(
            filesystem.get(key), wanted["filesystem"][key], f"{where}: sandbox.filesystem.{key}"
        )
    merged["filesystem"] = filesystem
    return merged


def sandbox_gaps(current: object, wanted: JsonView) -> list[str]:
    """What ``current`` (a ``sandbox`` object) lacks of ``wanted``, one line each; empty
    when it holds all of it."""
    if not isinstance(current, Mapping):
        return ["no sandbox settings"]
    gaps = [
        f"{key} is not {_json(value)}"
        for key, value in _REQUIRED.items()
        if current.get(key) is not value
    ]
    excluded = current.get("excludedCommands")
    have = excluded if isinstance(excluded, list) else []
    gaps += [
        f"{name!r} is not in excludedCommands"
        for name in wanted["excludedCommands"]
        if name not in have
    ]
    filesystem = current.get("filesystem")
    for key in ("allowWrite", "denyWrite"):
        listed = filesystem.get(key) if isinstance(filesystem, Mapping) else None
        have = listed if isinstance(listed, list) else []
        gaps += [
            f"{path} is not in filesystem.{key}"
            for path in wanted["filesystem"][key]
            if path not in have
        ]
    return gaps


@dataclass(frozen=True, slots=True, kw_only=True)
class Prerequisites:
    """Whether Claude Code's sandbox can run on this machine: each problem says what is
    wrong and what to do (``install`` is the one command that installs what is missing)."""

    problems: tuple[str, ...] = ()
    install: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def check_prerequisites(
    *,
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
    probe: Callable[[Sequence[str]], str] | None = None,
) -> Prerequisites:
    """Whether Claude Code's sandbox can run here.

    On Linux it needs ``bwrap`` (the ``bubblewrap`` package) and ``socat``, and bubblewrap
    must be able to make its namespaces (unprivileged user namespaces, or root with
    the right to make them): a sandbox of the shape Claude Code uses is started once to
    see. macOS has its own (Seatbelt); Windows has none. ``probe`` runs an argv and
    returns the error text ("" when it worked); the default starts it."""
    if platform == "darwin":
        return Prerequisites()
    if not platform.startswith("linux"):
        return Prerequisites(
            problems=(f"Claude Code's sandbox does not run on {platform}: run the lead in WSL2",)
        )
    missing = [package for program, package in PACKAGES.items() if which(program) is None]
    if missing:
        install = _install_command(missing, which)
        problem = (
            f"Claude Code's sandbox needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {install}"
        )
        return Prerequisites(problems=(problem,), install=install)
    bwrap = which("bwrap") or "bwrap"
    error = (probe or _run_probe)([bwrap, *_PROBE])
    if not error:
        return Prerequisites()
    return Prerequisites(problems=(_namespace_problem(error),))


def _install_command(packages: Sequence[str], which: Callable[[str], str | None]) -> str:
    for program, command in _INSTALLERS:
        if which(program) is not None:
            return f"{command} {' '.join(packages)}"
    return f"install the package{'s' if len(packages) > 1 else ''} {' and '.join(packages)}"


def _namespace_problem(error: str) -> str:
    where = "/proc/sys/user/max_user_namespaces"
    try:
        limit = Path(where).read_text(encoding="ascii").strip()
    except OSError:
        limit = ""
    if limit == "0":
        fix = "user namespaces are turned off: sysctl -w user.max_user_namespaces=15000"
    else:
        fix = (
            "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; "
            "on Ubuntu 24.04 and later sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), "
            "or give the container the right to make namespaces"
        )
    return f"bubblewrap cannot make its sandbox here ({error.strip()[:300]}): {fix}"


def _run_probe(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    return done.stderr or f"bwrap exited with {done.returncode}"


def _object(value: object, where: str) -> JsonView:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where} is not an object; fix it by hand first")
    return value


def _union(current: object, wanted: Sequence[str], where: str) -> list[Any]:
    if current is None:
        current = []
    if not isinstance(current, list):
        raise ConfigurationError(f"{where} is not a list; fix it by hand first")
    return [*current, *(item for item in wanted if item not in current)]


def _json(value: object) -> str:
    return "true" if value is True else "false" if value is False else repr(value)
