"""Landlock, the Linux kernel's unprivileged file-system sandbox, through ``ctypes``.

A Landlock ruleset names the kinds of access it *handles* (here: every kind of write)
and grants them beneath a few directories or on a few files; once a process restricts
itself, every write it or any descendant attempts elsewhere fails with ``EACCES``, decided
by the kernel. Reading and executing stay allowed everywhere. Rulesets stack: a program
that applies its own sandbox later (Codex does) can only narrow this one.

What Landlock cannot say: "writable beneath D except D/x". A grant covers the whole
hierarchy under the directory, so callers never grant an ancestor of a protected path
(see ``seawall.sandbox.policy``). This module only loads the standard library, so
the supervisor that uses it starts fast.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat

__all__ = ["LandlockError", "abi_version", "restrict_writes"]

_SYS_CREATE_RULESET = 444  # the same number on every architecture Linux supports
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: renames and links across directories
TRUNCATE = 1 << 14  # ABI 3
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signals to processes outside the sandbox

_WRITES_V1 = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
) | (MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
_FILE_RIGHTS = WRITE_FILE | TRUNCATE  # the write rights that apply to a file itself


class LandlockError(OSError):
    """The sandbox could not be applied (the kernel refused a ruleset or a rule)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if not hasattr(os, "sched_getaffinity"):  # not Linux
        return 0
    result = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(result), 0)


def handled_writes(abi: int) -> int:
    """Every write right the kernel of ``abi`` knows."""
    rights = _WRITES_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def restrict_writes(writable: list[str], *, abi: int | None = None) -> int:
    """Restrict this process and its future children to writing beneath ``writable``.

    Each path is a directory (writes anywhere beneath it) or a file (writes to that file);
    missing paths are skipped. Signals to processes outside the sandbox are refused too
    where the kernel can (ABI 6). Returns the ABI used; raises ``LandlockError`` when the
    kernel has no Landlock or refuses the ruleset.
    """
    level = abi_version() if abi is None else abi
    if level < 1:
        raise LandlockError(errno.ENOSYS, "Landlock is not available on this kernel")
    rights = handled_writes(level)
    attr = _RulesetAttr(handled_access_fs=rights, scoped=SCOPE_SIGNAL if level >= 6 else 0)
    size = 24 if level >= 6 else (16 if level >= 4 else 8)
    libc = _libc()
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _error("landlock_create_ruleset")
    try:
        for path in writable:
            _add_rule(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _error("prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise _error("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return level


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        allowed = rights if stat.S_ISDIR(os.fstat(fd).st_mode) else rights & _FILE_RIGHTS
        rule = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
        if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise _error(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _error(call: str) -> LandlockError:
    code = ctypes.get_errno()
    return LandlockError(code, f"{call} failed: {os.strerror(code)}")
