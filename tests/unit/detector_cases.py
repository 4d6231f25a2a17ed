"""Synthetic agent runs, as data: each says what happens, why, and what must be flagged.

A case is a list of steps (a tool call with its result, or the end of a run) fed to
one ``AgentMonitor``. ``trip``/``at`` name the breaker that must trip and the step it
trips on (None: nothing may trip); ``findings`` the detector patterns that must be
found, and no others (git writes included).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from seawall.events import Event, Final, HumanTurn, Message, ToolCall, ToolResult
from seawall.model import BreakerLimits

__all__ = [
    "CASES",
    "Case",
    "Step",
    "bash",
    "edit",
    "final",
    "human",
    "read",
    "refused",
    "say",
    "tool",
]

_ids = itertools.count()


@dataclass(frozen=True, slots=True)
class Step:
    """One step: the events it adds, and whether it counts (a call or a run end)."""

    events: tuple[Event, ...]
    counts: bool = True


def tool(
    name: str, output: str = "", *, error: bool = False, code: int | None = None, **arguments: Any
) -> Step:
    call_id = f"c{next(_ids)}"
    return Step(
        (
            ToolCall(call_id=call_id, name=name, arguments=arguments),
            ToolResult(call_id=call_id, text=output, is_error=error, exit_code=code),
        )
    )


def bash(command: str, output: str = "", code: int = 0, **extra: Any) -> Step:
    return tool("Bash", output, error=code != 0, code=code, command=command, **extra)


def read(path: str, output: str = "content", **extra: Any) -> Step:
    return tool("Read", output, file_path=path, **extra)


def edit(path: str, old: str = "a", new: str = "b", *, error: str = "") -> Step:
    return tool(
        "Edit",
        error or f"The file {path} has been updated.",
        error=bool(error),
        file_path=path,
        old_string=old,
        new_string=new,
    )


def final(text: str, *, error: bool, subtype: str = "") -> Step:
    return Step((Final(text=text, is_error=error, subtype=subtype),))


def say(text: str) -> Step:
    return Step((Message(text=text),), counts=False)


def human(text: str) -> Step:
    return Step((HumanTurn(text=text),), counts=False)


def refused(name: str, **arguments: Any) -> Step:
    """A call the person at the keyboard refused."""
    call_id = f"c{next(_ids)}"
    text = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    return Step(
        (
            ToolCall(call_id=call_id, name=name, arguments=arguments),
            ToolResult(call_id=call_id, text=text, is_error=True, refused=True),
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    name: str
    reason: str
    steps: Sequence[Step]
    trip: str | None = None  # e.g. "loop" for breaker/loop
    at: int | None = None  # the step it trips on
    findings: frozenset[str] = field(default_factory=frozenset)
    limits: BreakerLimits | None = None
    minutes_per_step: float = 0.0  # the wall clock advanced per step

    def events(self) -> Iterator[tuple[int, Event]]:
        step = 0
        for item in self.steps:
            step += item.counts
            for event in item.events:
                yield step, event


def _times(n: int, make: Any) -> list[Step]:
    return [make(i) for i in range(n)]


TYPE_ERROR = (
    "src/app.py:12: error: Incompatible return value type (got int, expected str)\n"
    "Found 1 error in 1 file (checked 3 source files)"
)
LINT_LINE = "src/app.py:3:1: F401 'os' imported but unused"

CASES: tuple[Case, ...] = (
    # -- class 1: a changing answer is a wait -------------------------------------------------
    Case(
        name="polling date sees a new time each call",
        reason="15:30:20, 15:30:41, ... are different answers: waits, never a loop",
        steps=[bash("date +%T", f"15:3{n}:2{n}") for n in range(6)],
    ),
    Case(
        name="polling a job's progress that moves",
        reason="the same status call whose output changes each time is waiting on a job",
        steps=[
            bash("gh run view 7 --json status", f"in_progress 2025-11-14T20:1{n}:45Z")
            for n in range(6)
        ],
    ),
    Case(
        name="the same call with the same answer four times",
        reason="the identical call with the same result repeating is a loop",
        steps=[bash("gh run view 7 --json status", "in_progress") for _ in range(4)],
        trip="loop",
        at=4,
        findings=frozenset({"turn-key-repetition"}),
    ),
    # -- class 2: waiting through the shell --------------------------------------------------
    Case(
        name="cat of a file a background command writes",
        reason="reading a file a background command of the agent's writes is a wait, even "
        "through Bash and even while it stays empty",
        steps=[
            bash("pytest -q > /tmp/out.log 2>&1", "started", run_in_background=True),
            *[bash("cat /tmp/out.log", "") for _ in range(6)],
        ],
    ),
    Case(
        name="sleep then tail of a background job's log",
        reason="`sleep 30 && tail -n 20 build.log` only waits and reads what the job writes",
        steps=[
            bash("make build > build.log 2>&1 &", ""),
            *[bash("sleep 30 && tail -n 20 build.log", "compiling…") for _ in range(5)],
        ],
    ),
    Case(
        name="Read polling of a background output file",
        reason="the Read tool on the file a background command writes is a wait",
        steps=[
            bash("npm test > /tmp/t.log", "started", run_in_background=True),
            *[read("/tmp/t.log", "") for _ in range(5)],
        ],
    ),
    Case(
        name="tail of Claude Code's own task output file",
        reason="a backgrounded task's tasks/<id>.output is what the agent waits on",
        steps=[bash("tail -30 /tmp/claude-1000/p/tasks/b1.output", "running") for _ in range(5)],
    ),
    Case(
        name="cat of a file nothing writes",
        reason="everything else counts, including re-reading a file nothing writes",
        steps=[bash("cat notes.txt", "same") for _ in range(4)],
        trip="loop",
        at=4,
        findings=frozenset({"turn-key-repetition"}),
    ),
    # -- class 3: the list of waits is narrow ------------------------------------------------
    Case(
        name="sleep then a failing test run",
        reason="`sleep 2 && pnpm test` is a test run; its identical failures count",
        steps=[
            bash("sleep 2 && pnpm test", "FAIL src/a.test.ts\n  expected 1, got 2", 1)
            for _ in range(3)
        ],
        trip="command-failures",
        at=3,
        findings=frozenset({"error-echo", "turn-key-repetition"}),
    ),
    Case(
        name="restart the server, sleep, curl, fail, again",
        reason="a restart loop: the same curl fails the same way after every restart; it "
        "trips on the third cycle, not the seventh",
        steps=[
            s
            for _ in range(3)
            for s in (
                bash("pkill -f 'node server.js'; node server.js &", ""),
                bash(
                    "sleep 3 && curl -sf localhost:3000/health",
                    "curl: (7) Failed to connect to localhost port 3000: Connection refused",
                    7,
                ),
            )
        ],
        trip="command-failures",
        at=6,
        findings=frozenset({"error-echo"}),
    ),
    Case(
        name="a watch that only sleeps",
        reason="a command that only sleeps is a wait: it trips no-progress, never a loop",
        steps=[bash("sleep 30") for _ in range(12)],
        trip="no-progress",
        at=12,
    ),
    # -- class 4: failures of a whole run ----------------------------------------------------
    Case(
        name="a Codex agent restarted into the same turn.failed",
        reason="three runs ending in the same failure are a restart loop",
        steps=[
            final(
                "You've hit your usage limit. Try again at 9:01 AM.",
                error=True,
                subtype="turn.failed",
            )
            for _ in range(4)
        ],
        trip="command-failures",
        at=3,
    ),
    Case(
        name="a Claude result with is_error, three times",
        reason="`result` with is_error is a failed run, the same one three times",
        steps=[
            s
            for _ in range(3)
            for s in (
                bash("ls", "a.py"),
                final("API Error: 529 overloaded", error=True, subtype="success"),
            )
        ],
        trip="command-failures",
        at=6,
        findings=frozenset({"turn-key-repetition"}),  # the restarted agent's same `ls`
    ),
    Case(
        name="runs that fail differently",
        reason="three different failures are iteration, not a restart loop",
        steps=[final(f"error: {why}", error=True) for why in ("disk full", "auth", "timeout")],
        trip="consecutive-failures",
        at=3,
    ),
    Case(
        name="a failed run, a good run, a failed run",
        reason="a run that succeeds in between ends the chain",
        steps=[
            final("boom", error=True),
            final("done", error=False),
            final("boom", error=True),
            final("done", error=False),
        ],
    ),
    # -- denials of seawall's guard -----------------------------------------------------------
    Case(
        name="calls outside the scope between in-scope edits",
        reason="a denial is no failure: in-scope work goes on, denials have their own limit",
        steps=[
            edit("/r/src/a.py"),
            *[
                tool(
                    "Edit",
                    f"seawall scope-denied: /r/docs/{n}.md is outside the scope "
                    "(this task may change: src/)",
                    error=True,
                    file_path=f"/r/docs/{n}.md",
                    old_string="a",
                    new_string="b",
                )
                for n in range(4)
            ],
            edit("/r/src/b.py"),
            tool(
                "Bash",
                "seawall command-blocked: `shutdown -h now`: stops the machine",
                error=True,
                command="shutdown -h now",
            ),
        ],
        trip="scope-denials",
        at=7,
        limits=BreakerLimits(max_scope_denials=5),
    ),
    # -- class 5: failure signatures, not whole outputs ---------------------------------------
    Case(
        name="the same type error, the third time with an added linter line",
        reason="one more warning line does not make an identical failure different",
        steps=[
            bash("mypy src", TYPE_ERROR, 1),
            edit("src/b.py"),
            bash("mypy src", TYPE_ERROR, 1),
            edit("src/c.py"),
            bash("mypy src", TYPE_ERROR + "\n" + LINT_LINE, 1),
        ],
        trip="command-failures",
        at=5,
        findings=frozenset({"error-echo"}),
    ),
    Case(
        name="near-identical commands are the same fix",
        reason="blank space, flag order and quoting do not make another attempt",
        steps=[
            bash("pytest -q -x tests/a.py", "E assert 1 == 2", 1),
            edit("src/x.py"),
            bash("pytest  -x -q 'tests/a.py'", "E assert 1 == 2", 1),
            edit("src/y.py"),
            bash('pytest -q -x "tests/a.py"', "E assert 1 == 2\n1 warning", 1),
        ],
        trip="command-failures",
        at=5,
        findings=frozenset({"error-echo"}),
    ),
    Case(
        name="a different error each time",
        reason="a build failing differently three times is iteration",
        steps=[
            bash("make", f"error: {what}", 2)
            for what in ("missing header foo.h", "undefined symbol bar", "syntax error in baz.c")
        ],
        trip="consecutive-failures",
        at=3,
    ),
    Case(
        name="edit with the same stale old_string",
        reason="the same edit fails the same way three times",
        steps=[
            s
            for _ in range(3)
            for s in (
                read("/r/a.py", "def f(): pass"),
                edit(
                    "/r/a.py",
                    old="def g():",
                    new="def g(x):",
                    error="String to replace not found in file.",
                ),
            )
        ],
        findings=frozenset({"error-echo"}),
    ),
    # -- class 6 lives in test_detector_cases (hook admissions) -------------------------------
    # -- class 7: git writes ------------------------------------------------------------------
    Case(
        name="add and commit in one command",
        reason="a command with several kinds of write records each",
        steps=[bash("git add -A && git commit -m wip", "[main 1a2b3c4] wip")],
        findings=frozenset({"git-write"}),
    ),
    # -- the stagnation decision table ---------------------------------------------------
    Case(
        name="pagination spiral",
        reason="3+ reads of one file changing only offset, and no edit of it",
        steps=[read("/r/big.py", f"lines {n}", offset=n * 200, limit=200) for n in range(3)],
        findings=frozenset({"pagination-spiral"}),
    ),
    Case(
        name="paging that ends in an edit",
        reason="a sequential read that ends in an edit is preparation",
        steps=[
            *[read("/r/big.py", f"lines {n}", offset=n * 200, limit=200) for n in range(3)],
            edit("/r/big.py"),
        ],
    ),
    Case(
        name="turn-key repetition",
        reason="`pnpm test` three times with nothing between",
        steps=[bash("pnpm test", "Tests: 3 passed (in 1.2s)") for _ in range(3)],
        findings=frozenset({"turn-key-repetition"}),
    ),
    Case(
        name="turn keys broken by another call",
        reason="consecutive means consecutive: a different call between restarts the count",
        steps=[
            bash("pnpm test", "ok"),
            read("/r/a.ts"),
            bash("pnpm test", "ok"),
            read("/r/b.ts"),
            bash("pnpm test", "ok"),
        ],
    ),
    Case(
        name="status partial",
        reason="the agent's own STATUS: partial is recorded live",
        steps=[
            bash("ls", "a"),
            say("Out of turns.\nSTATUS: partial — parser done | REMAINING: cli"),
        ],
        findings=frozenset({"status-partial"}),
    ),
    Case(
        name="a quoted status is no status",
        reason="the marker mid-sentence is not a STATUS line",
        steps=[say("I will end with `STATUS: failed` if this breaks.")],
    ),
    Case(
        name="a git stash",
        reason="the first git write is surfaced at once",
        steps=[bash("git stash", "Saved working directory")],
        findings=frozenset({"git-write"}),
    ),
    # -- the per-agent trip table -------------------------------------------------------
    Case(
        name="unverified edits",
        reason="25 edits with no passing test or build",
        steps=[edit(f"/r/f{n % 10}.py", old=f"x{n}") for n in range(25)],
        trip="unverified-edits",
        at=25,
    ),
    Case(
        name="edits with a passing verify between",
        reason="a passing test run resets the count",
        steps=[
            *[edit(f"/r/f{n}.py") for n in range(20)],
            bash("pytest -q", "20 passed"),
            *[edit(f"/r/g{n}.py") for n in range(20)],
        ],
    ),
    Case(
        name="loop",
        reason="the identical Read with the same result four times",
        steps=[read("/r/a.py", "same") for _ in range(4)],
        trip="loop",
        at=4,
        findings=frozenset({"turn-key-repetition"}),
    ),
    Case(
        name="command failures",
        reason="one command failing the same way three times, other calls between",
        steps=[
            s
            for _ in range(3)
            for s in (bash("cargo build", "error[E0308]: mismatched", 101), read("/r/src/lib.rs"))
        ],
        trip="command-failures",
        at=5,
        findings=frozenset({"error-echo"}),
    ),
    Case(
        name="consecutive failures",
        reason="three different calls failing in a row",
        steps=[
            bash("ls nope", "No such file", 2),
            read("/r/missing", "File does not exist", error=True),
            bash("cat nope", "No such file", 1),
        ],
        trip="consecutive-failures",
        at=3,
    ),
    Case(
        name="no progress",
        reason="12 polls of a background task with nothing else happening",
        steps=[tool("TaskOutput", "running", task_id="b1") for _ in range(12)],
        trip="no-progress",
        at=12,
    ),
    Case(
        name="tool budget",
        reason="the 401st call crosses a budget of 400",
        steps=[read(f"/r/f{n}.py", str(n)) for n in range(401)],
        trip="tool-budget",
        at=401,
    ),
    Case(
        name="blast radius",
        reason="61 distinct files edited, over 60",
        steps=[
            *[edit(f"/r/f{n}.py") for n in range(20)],
            bash("pytest", "ok"),
            *[edit(f"/r/g{n}.py") for n in range(20)],
            bash("pytest", "ok"),
            *[edit(f"/r/h{n}.py") for n in range(21)],
        ],
        trip="blast-radius",
        at=63,
    ),
    Case(
        name="session time",
        reason="the wall clock passes 90 minutes",
        steps=[read(f"/r/f{n}.py", str(n)) for n in range(10)],
        minutes_per_step=10.0,
        trip="session-time",
        at=10,
    ),
    # -- identity of calls and failures, people, status queries ---------------------------------
    Case(
        name="one command retried with its description reworded",
        reason="a call is what it does: the free-text description an agent rewords on every "
        "retry makes no other call, so the same error three times trips",
        steps=[
            bash(
                "ls *.md",
                "Exit code 2\nls: cannot access '*.md': No such file or directory",
                code=2,
                description=words,
            )
            for words in ("List markdown files", "Check for markdown docs", "Find the .md files")
        ],
        trip="command-failures",
        at=3,
        findings=frozenset({"error-echo", "turn-key-repetition"}),
    ),
    Case(
        name="one read-only command repeated with reworded descriptions into warnings",
        reason="`git remote -v` answering the same warnings four times is a loop, whatever "
        "the description says",
        steps=[
            bash(
                "git remote -v",
                "warning: unable to access '/root/.config/git/attributes'",
                description=f"Show the remotes ({n})",
            )
            for n in range(4)
        ],
        trip="loop",
        at=4,
        findings=frozenset({"turn-key-repetition"}),
    ),
    Case(
        name="different errors behind one shared warning line",
        reason="a tool's warning printed before every error is boilerplate: three different "
        "errors are three failures of iteration, not one failure three times",
        steps=[
            step
            for error in (
                "Error response from daemon: pull access denied for app-base",
                'service "web" refers to undefined network backend: invalid compose project',
                'Error: failed to solve: failed to compute cache key: "/requirements.txt" '
                "not found",
            )
            for step in (
                bash(
                    "docker-compose up -d",
                    "WARN[0000] /srv/app/docker-compose.yml: the attribute `version` is "
                    "obsolete, it will be ignored\n" + error,
                    code=1,
                ),
                edit("docker-compose.yml", old=error[:12]),
            )
        ],
    ),
    Case(
        name="the same error behind one shared warning line",
        reason="and the same AppArmor error after that boilerplate three times is stuck",
        steps=[
            step
            for n in range(3)
            for step in (
                bash(
                    "docker-compose up -d",
                    "WARN[0000] /srv/app/docker-compose.yml: the attribute `version` is "
                    "obsolete, it will be ignored\nError response from daemon: AppArmor "
                    "enabled on system but the docker-default profile could not be loaded",
                    code=1,
                ),
                edit("docker-compose.yml", old=f"security_opt{n}"),
            )
        ],
        trip="command-failures",
        at=5,
        findings=frozenset({"error-echo"}),
    ),
    Case(
        name="polling pending CI checks",
        reason="`gh pr checks` exits non-zero while checks are pending: an answer, not a "
        "failure of the agent's; a changing answer is a wait",
        steps=[
            bash(
                "sleep 60 && gh pr checks 12",
                "build\tpending\t0\thttps://github.com/o/r/actions/runs/7\n"
                "lint\tpass\t41s\thttps://github.com/o/r/actions/runs/8",
                code=8,
            )
            for _ in range(6)
        ],
    ),
    Case(
        name="asking a failing check's status between fixes",
        reason="`gh pr checks` that exits 1 (a check failed) is an answer, not a failure: "
        "the agent reads it, fixes and pushes",
        steps=[
            step
            for n in range(3)
            for step in (
                bash("gh pr checks 12", f"build\tfail\t{n + 1}m\thttps://x/runs/{n}", code=1),
                edit("ci.yml", old=f"o{n}"),
                bash("git push", ""),
            )
        ],
        findings=frozenset({"git-write"}),
    ),
    Case(
        name="a person refuses three web fetches",
        reason="a refusal by the person at the keyboard is their decision, not a failure of "
        "the agent",
        steps=[refused("WebFetch", url=f"https://example.com/{n}") for n in range(3)],
    ),
    Case(
        name="a person's reply between failures",
        reason="what the agent does after a person spoke answers them: the streak of "
        "failures starts again",
        steps=[
            bash("make deploy", "Exit code 2\nno rule to make target 'deploy'", code=2),
            bash("./deploy.sh", "Exit code 126\npermission denied: ./deploy.sh", code=126),
            human("use the staging script instead"),
            bash("./staging.sh", "Exit code 1\nmissing STAGING_HOST", code=1),
            bash("STAGING_HOST=s1 ./staging.sh", "Exit code 1\nconnection refused", code=1),
        ],
    ),
    Case(
        name="a person asks for the same call again",
        reason="two identical calls, a person's word, two more: what follows a person "
        "answers them, so neither the turn-key run nor the loop count spans the reply",
        steps=[
            bash("git status --short", " M src/a.py"),
            bash("git status --short", " M src/a.py"),
            human("I staged it myself, check again"),
            bash("git status --short", " M src/a.py"),
            bash("git status --short", " M src/a.py"),
        ],
    ),
    Case(
        name="the same call four times with no person between",
        reason="the negative twin of the case above: four identical calls in a row with the "
        "same answer are a loop",
        steps=[bash("git status --short", " M src/a.py") for _ in range(4)],
        trip="loop",
        at=4,
        findings=frozenset({"turn-key-repetition"}),
    ),
    Case(
        name="working through a failing build resets the unverified-edits count",
        reason="a build whose failure set changes between runs is progress: edits between "
        "checks that move the failures on never pile up unverified",
        steps=[
            step
            for n in range(5)
            for step in (
                *[edit(f"src/m{n}.ts", old=f"o{n}{k}") for k in range(4)],
                bash(
                    "npm run build",
                    "\n".join(
                        f"src/m{k}.ts(3,7): error TS2322: Type 'string' is not assignable"
                        for k in range(n, 6)
                    ),
                    code=2,
                ),
            )
        ],
        limits=BreakerLimits(max_edits_without_verify=6, max_same_command_failures=3),
    ),
)
