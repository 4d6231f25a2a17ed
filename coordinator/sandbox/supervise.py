"""The per-agent supervisor: ``python -m seawall.sandbox.supervise [options] -- ARGV``.

seawall starts every agent through this small process, which stays the agent's parent:

1. it creates each granted file that does not exist yet (``--new PATH``, empty, never
   over an existing file), then applies the sandbox to the agent it starts (``--sandbox``
   and one ``--write PATH`` per writable path, see ``seawall.sandbox.landlock``),
   which the agent and everything it starts inherit and cannot undo; the supervisor
   itself stays outside it, so that it can remove what it created;
2. it becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every process the agent
   starts stays its descendant even after leaving the agent's process group or session
   (``setsid``, a double fork): orphans are re-parented to the supervisor, not to init;
3. it starts the agent with ``PR_SET_PDEATHSIG`` = SIGKILL, so the agent dies with it;
4. when the agent ends, or the supervisor gets SIGTERM, SIGINT or SIGHUP, it sends
   SIGTERM to every descendant, SIGKILL after ``--grace`` seconds, and waits until none
   is left; then it exits with the agent's status (the same exit code, or death by the
   same signal). A file it created that is still the same empty file is removed first
   (with ``--record FILE``, the files it created are listed there before the agent
   starts, so that a review can remove them if the supervisor was killed outright);
5. with ``--parent PID`` it also does so as soon as its parent is no longer ``PID`` (the
   process that started it died, however: SIGKILL, the OOM killer), so the agent does
   not outlive it. Without the option an agent outlives whoever started the supervisor,
   so that a later process can find, stop and salvage it.

It only loads the standard library, so it adds little to an agent's start. Exit code 125
means the sandbox could not be applied (nothing was started), 127 that the agent could
not be executed.
"""

# os and open rather than pathlib: the supervisor starts with every agent, and fast
# ruff: noqa: PTH110, PTH123, PTH208

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

from seawall.sandbox.landlock import LandlockError, restrict_writes
from seawall.sandbox.placeholders import create, drop_recorded, remove_unused, write_record

__all__ = ["EXEC_FAILED", "SANDBOX_FAILED", "SUPERVISOR_SAYS", "descendants", "main"]

SANDBOX_FAILED = 125
EXEC_FAILED = 127
SUPERVISOR_SAYS = "seawall supervisor:"  # how its own messages on stderr start

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_WATCHED = {signal.SIGCHLD, *_STOPS}
_POLL = 0.02
_PARENT_POLL = 0.1  # seconds between looks at the parent, with ``--parent``
_KILL_WAIT = 5.0  # bound on waiting for SIGKILLed descendants to disappear


def _prctl(option: int, value: int) -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def descendants(root: int) -> tuple[set[int], set[int]]:
    """The (live, zombie) descendants of process ``root``, read from ``/proc``: through
    each process's ``children`` lists where the kernel has them, else a scan of all."""
    found: set[int] = set()
    zombies: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        children = _children(pid)
        if children is None:
            return _scan(root)
        for child in children - found:
            found.add(child)
            if _state(child) in ("Z", "X"):
                zombies.add(child)
            todo.append(child)
    return found - zombies, zombies


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def _children(pid: int) -> set[int] | None:
    """Children of ``pid`` (all threads); None when the kernel has no ``children`` file."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return set()  # gone
    found: set[int] = set()
    for thread in threads:
        text = _read(f"/proc/{pid}/task/{thread}/children")
        if text is None:
            if os.path.exists(f"/proc/{pid}/task/{thread}"):
                return None
            continue
        found.update(int(child) for child in text.split())
    return found


def _state(pid: int) -> str:
    stat = _read(f"/proc/{pid}/stat") or ""
    return stat[stat.rfind(")") + 2 :][:1] or "X"


def _scan(root: int) -> tuple[set[int], set[int]]:
    parents: dict[int, list[int]] = {}
    zombies: set[int] = set()
    for name in os.listdir("/proc"):
        stat = _read(f"/proc/{name}/stat") if name.isdigit() else None
        if not stat:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        parents.setdefault(int(fields[1]), []).append(int(name))
        if fields[0] in ("Z", "X"):
            zombies.add(int(name))
    found: set[int] = set()
    todo = list(parents.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(parents.get(pid, ()))
    return found - zombies, found & zombies


def _reap(agent: int) -> int | None:
    """Reap every exited child; the agent's wait status when it was among them."""
    status = None
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == agent:
            status = code


def _end_descendants(grace: float, agent: int) -> int | None:
    """SIGTERM every descendant, SIGKILL after ``grace``, until none is left (bounded)."""
    me = os.getpid()
    status = None
    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, _KILL_WAIT)):
        deadline = time.monotonic() + wait
        while True:
            reaped = _reap(agent)
            status = reaped if reaped is not None else status
            live, zombies = descendants(me)
            if not live and not zombies:
                break
            if time.monotonic() >= deadline:
                break
            for pid in live:  # again each round: a process may have forked meanwhile
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    continue
            signal.sigtimedwait({signal.SIGCHLD}, _POLL)
        if not live and not zombies:
            break
    return status


def _start(argv: list[str], mask: set[int], writable: list[str] | None) -> int:
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the agent: dies with the supervisor, sandboxed, default signals, then exec
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(EXEC_FAILED)
        if writable is not None:
            try:
                restrict_writes(writable)
            except LandlockError as exc:
                os.write(2, f"{SUPERVISOR_SAYS} the sandbox could not be applied: {exc}\n".encode())
                os._exit(SANDBOX_FAILED)
        for signum in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"{SUPERVISOR_SAYS} cannot run {argv[0]!r}: {exc}\n".encode())
    os._exit(EXEC_FAILED)


def _exit_like(status: int | None) -> int:
    """Exit the way the agent did: its exit code, or the signal that ended it."""
    if status is None:
        return 128 + signal.SIGTERM
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        return 128 + signum  # only when the signal did not end us (it is ignored)
    return os.waitstatus_to_exitcode(status)


class _Options:
    __slots__ = ("argv", "grace", "new", "parent", "record", "writable")

    def __init__(self) -> None:
        self.grace: float = 2.0
        self.writable: list[str] | None = None
        self.new: list[str] = []
        self.parent: int | None = None
        self.record: str | None = None
        self.argv: list[str] = []


def _options(args: list[str]) -> _Options:
    """``--grace S``, ``--parent PID``, ``--sandbox`` with one ``--write PATH`` per
    writable path and one ``--new PATH`` per file to create, ``--record FILE`` where the
    files created are listed (see ``seawall.sandbox.placeholders``), ``--``, then the agent's
    argv. (Not argparse nor JSON: their imports alone would cost more than the rest of
    the start.)"""
    options = _Options()
    rest = list(args)
    while rest and rest[0] != "--":
        option = rest.pop(0)
        if option == "--sandbox":
            options.writable = options.writable or []
        elif option in ("--grace", "--write", "--new", "--parent", "--record") and rest:
            value = rest.pop(0)
            if option == "--grace":
                options.grace = float(value)
            elif option == "--new":
                options.new.append(value)
            elif option == "--parent":
                options.parent = int(value)
            elif option == "--record":
                options.record = value
            else:
                options.writable = [*(options.writable or []), value]
        else:
            raise ValueError(f"unknown or incomplete option {option!r}")
    if len(rest) < 2:
        raise ValueError("no agent command after '--'")
    options.argv = rest[1:]
    return options


def main(args: list[str] | None = None) -> int:
    try:
        options = _options(sys.argv[1:] if args is None else args)
    except ValueError as exc:
        sys.stderr.write(f"{SUPERVISOR_SAYS} bad arguments: {exc}\n")
        return SANDBOX_FAILED
    original = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if options.parent is not None and os.getppid() != options.parent:
        return 128 + signal.SIGHUP  # the parent died before the agent could start
    made = create(options.new) if options.writable is not None else []
    if options.record is not None:
        try:
            write_record(options.record, made)
        except OSError as exc:
            remove_unused(made)
            sys.stderr.write(f"{SUPERVISOR_SAYS} cannot record the files it made: {exc}\n")
            return SANDBOX_FAILED
    agent = _start(options.argv, original, options.writable)
    status = None
    wait = 1.0 if options.parent is None else _PARENT_POLL
    while status is None:
        info = signal.sigtimedwait(_WATCHED, wait)
        status = _reap(agent)
        if info is not None and info.si_signo in _STOPS:
            break
        if options.parent is not None and os.getppid() != options.parent:
            break  # orphaned: the agent goes with the process that started it
    final = _end_descendants(options.grace, agent)
    if options.record is not None:
        drop_recorded(options.record)
    else:
        remove_unused(made)
    return _exit_like(status if status is not None else final)


if __name__ == "__main__":
    sys.exit(main())
