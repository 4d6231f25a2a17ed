"""Fuzzing with hypothesis: nothing but the documented errors escapes any reader.

CI runs a bounded number of examples per property (``FUZZ_EXAMPLES``, default 200);
``SEAWALL_FUZZ_EXAMPLES=20000 pytest tests/reliability/test_fuzz.py`` runs a long pass,
and ``tests/reliability/fuzz_atheris.py`` drives the same targets coverage-guided.

Properties:

- transcript parsers (Claude stream-json, Codex exec --json, the mixed reader,
  ``parse_lines``): any text, any bytes decoded with replacement, and real records with
  any field replaced by any JSON value give a list of events and never raise;
- the plan loader: any text and any TOML document built from the plan vocabulary give a
  ``Plan`` or a ``PlanError``/``ConfigurationError``, never ``KeyError``/``TypeError``...;
- the pre-tool-use hook: any bytes on stdin and any JSON payload get a valid decision
  (exit 0 with nothing or a PreToolUse JSON on stdout, or exit 2 with a reason);
- the scope matcher: a path it allows (any text, any grant shape) resolves inside the
  workspace and under a grant;
- the command policy: a command it allows contains no denied command at any nesting
  level, through wrappers the unit property does not build (eval, xargs, find -exec,
  timeout, nice, exec, if/for/while, process substitution, here-strings).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import sys
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seawall.errors import ConfigurationError
from seawall.events import Event, Final, Turn
from seawall.hooks.pre_tool_use import handle
from seawall.hooks.protocol import HookResponse
from seawall.model import Enforcement, Isolation, Task, Wave
from seawall.plan import parse_plan
from seawall.scope.command_policy import CommandContext, CommandPolicy
from seawall.scope.manifest import build_manifest, write_manifest
from seawall.scope.matcher import ScopeMatcher, compile_grant, grant_matches
from seawall.transcripts import (
    ClaudeStreamParser,
    CodexJsonParser,
    TranscriptReader,
    parse_lines,
)
from tests.reliability.records import REAL_RECORDS, to_line, toml_document

EVENT_TYPES = get_args(Event)  # every kind of the event model
FUZZ_EXAMPLES = int(os.environ.get("SEAWALL_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ----- strategies ------------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**320),  # overflows float()
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["success", "error", "tool_use", "tool_result", "Bash", "Exit code 1"]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=12), children, max_size=4),
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "type", "subtype", "message", "content", "id", "name", "input", "usage", "result",
        "is_error", "tool_use_id", "total_cost_usd", "duration_ms", "num_turns", "timestamp",
        "parent_tool_use_id", "item", "text", "exit_code", "status", "changes", "error",
        "aggregated_output", "arguments", "server", "tool", "thread_id", "input_tokens",
    ]
)  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    """A real record with 1-3 mutations: a value replaced, a key added or dropped."""
    record: Any = json.loads(json.dumps(draw(st.sampled_from(REAL_RECORDS))))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(record))
        path = draw(st.sampled_from(paths[1:] or paths))
        action = draw(st.sampled_from(["replace", "add", "drop"]))
        if action == "replace" or not path:
            record = _replace(record, path, draw(JSON_VALUES))
        else:
            parent_path = path[:-1]
            parent: Any = record
            for step in parent_path:
                parent = parent[step]
            if isinstance(parent, dict) and action == "add":
                parent = {**parent, draw(KEYS): draw(JSON_VALUES)}
            elif isinstance(parent, dict):
                parent = {k: v for k, v in parent.items() if k != path[-1]}
            else:
                parent = [item for index, item in enumerate(parent) if index != path[-1]]
            record = _replace(record, parent_path, parent)
    if not isinstance(record, dict):
        record = {"type": "assistant", "message": record}
    result: dict[str, Any] = record
    return result


LINES = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", errors="replace")),
    mutated_records().map(to_line),
    st.sampled_from([to_line(r) for r in REAL_RECORDS]),
    st.builds(lambda n: "[" * n, st.integers(1, 200_000)),  # nesting beyond the recursion limit
    st.builds(lambda n: '{"a":' * n, st.integers(1, 200_000)),
    st.sampled_from(["[2025-01-01 00:00:00] [INFO] {", "}", '  "type": "result",', "{"]),
)

# ----- transcript parsers ----------------------------------------------------------------


def _check_events(events: list[Event]) -> None:
    for event in events:
        assert isinstance(event, EVENT_TYPES)
        if isinstance(event, Final):
            assert event.cost_usd is None or isinstance(event.cost_usd, float)
            assert event.duration_ms is None or isinstance(event.duration_ms, int)


@FUZZ
@given(lines=st.lists(LINES, max_size=12))
def test_every_transcript_parser_reads_any_lines_without_raising(lines: list[str]) -> None:
    claude, codex, reader = ClaudeStreamParser(), CodexJsonParser(), TranscriptReader()
    for parser in (claude, codex, reader):
        events: list[Event] = []
        for line in lines:
            events.extend(parser.feed(line))
        events.extend(parser.finish())
        _check_events(events)
    assert claude.turns == sum(
        1 for e in events_of(lines, ClaudeStreamParser()) if isinstance(e, Turn)
    )
    # parse_lines is the reader fed line by line, then finished
    assert repr(list(parse_lines(lines))) == repr(events_of(lines, TranscriptReader()))


def events_of(
    lines: list[str], parser: ClaudeStreamParser | CodexJsonParser | TranscriptReader
) -> list[Event]:
    events: list[Event] = []
    for line in lines:
        events.extend(parser.feed(line))
    return events + parser.finish()


@FUZZ
@given(records=st.lists(mutated_records(), min_size=1, max_size=8))
def test_parsers_survive_mutated_real_records(records: list[dict[str, Any]]) -> None:
    claude, codex, reader = ClaudeStreamParser(), CodexJsonParser(), TranscriptReader()
    for record in records:
        _check_events(claude.feed_record(record))
        _check_events(codex.feed_record(record))
        _check_events(reader.feed(to_line(record)))
    _check_events(reader.finish())
    # a Claude turn count is never more than the assistant records it was given
    assert claude.turns <= sum(1 for r in records if r.get("type") == "assistant")


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000,
        '{"type": "result", "total_cost_usd": 1' + "0" * 400 + "}",
        '{"type": "result", "duration_ms": Infinity}',
        '{"type": "result", "duration_ms": NaN}',
        '{"type": "result", "duration_ms": -Infinity, "total_cost_usd": NaN}',
    ],
    ids=["deep-nesting", "huge-cost", "inf-duration", "nan-duration", "neg-inf"],
)
def test_known_hostile_lines_are_not_fatal(line: str) -> None:
    """Found by this fuzzer: each of these raised (RecursionError, OverflowError,
    ValueError) out of the parsers before the fix in ``coordinator/transcripts``."""
    for parser in (ClaudeStreamParser(), CodexJsonParser(), TranscriptReader()):
        events = parser.feed(line)
        _check_events(events)
    finals = [e for e in ClaudeStreamParser().feed(line) if isinstance(e, Final)]
    if finals:
        assert finals[0].duration_ms is None and (
            finals[0].cost_usd is None or finals[0].cost_usd == finals[0].cost_usd
        )


# ----- the plan loader -------------------------------------------------------------------

SESSION_KEYS = [
    "name", "type", "isolation", "enforcement", "max_turns", "max_agents_per_wave",
    "budgets", "checks", "agent", "overlap", "breakers", "wave_breaker", "stagnation",
    "spiral", "commands", "tracker", "worktre",
]  # fmt: skip
TASK_KEYS = ["id", "prompt", "scope", "depends_on", "kind", "agent", "max_turns",
             "collision_risk", "extra"]  # fmt: skip
GOOD_VALUES: dict[str, Any] = {
    "name": st.sampled_from(["s1", "plan-2", "", "-x", "a" * 70]),
    "type": st.sampled_from(["feature", "bugfix", "refactor", "nope"]),
    "isolation": st.sampled_from(["auto", "none", "worktree", "bogus"]),
    "enforcement": st.sampled_from(["strict", "warn", "off", "loud"]),
    "max_turns": st.one_of(st.integers(-2, 300), st.just("auto"), st.just("many")),
    "max_agents_per_wave": st.integers(-1, 200),
    "id": st.sampled_from(["a", "b", "c", "bad id", "../x", "a" * 65]),
    "prompt": st.text(max_size=20),
    "scope": st.lists(st.sampled_from(["src/", "src/*.py", "docs/a.md", "/abs/", "a[b]", ""])),
    "depends_on": st.lists(st.sampled_from(["a", "b", "c", "zz"]), max_size=3),
    "kind": st.sampled_from(["implement", "test", "docs", "weird"]),
    "collision_risk": st.sampled_from(["low", "high", "extreme"]),
}


def _value(key: str) -> st.SearchStrategy[Any]:
    good = GOOD_VALUES.get(key)
    return st.one_of(good, JSON_VALUES) if good is not None else JSON_VALUES


@st.composite
def plan_documents(draw: st.DrawFn) -> str:
    data: dict[str, Any] = {}
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(SESSION_KEYS), unique=True, max_size=6))
        data["session"] = {key: draw(_value(key)) for key in keys}
    if draw(st.booleans()):
        data["runners"] = draw(
            st.dictionaries(
                st.sampled_from(["agent", "claude", "x y"]),
                st.one_of(
                    st.fixed_dictionaries(
                        {"kind": st.sampled_from(["command", "scripted", "nope"])},
                        optional={
                            "argv": st.lists(st.text(max_size=5), max_size=3),
                            "env": JSON_VALUES,
                            "options": JSON_VALUES,
                        },
                    ),
                    JSON_VALUES,
                ),
                max_size=2,
            )
        )
    tasks = []
    for _ in range(draw(st.integers(0, 4))):
        keys = draw(st.lists(st.sampled_from(TASK_KEYS), unique=True, max_size=7))
        tasks.append({key: draw(_value(key)) for key in keys})
    keep_tasks: bool = bool(tasks) or draw(st.booleans())
    if keep_tasks:
        data["task"] = tasks if draw(st.integers(0, 9)) else draw(JSON_VALUES)
    if draw(st.integers(0, 9)) == 0:
        data[draw(st.text(max_size=8))] = draw(JSON_VALUES)
    return toml_document(data)


def _load_or_documented_error(text: str) -> None:
    try:
        plan = parse_plan(text, path="fuzz.toml")
    except ConfigurationError as exc:  # PlanError is a ConfigurationError
        assert str(exc)
        return
    assert all(task.id for task in plan.tasks)
    assert len({task.id for task in plan.tasks}) == len(plan.tasks)


@FUZZ
@given(text=plan_documents())
def test_plan_loader_raises_only_plan_errors_on_plan_shaped_toml(text: str) -> None:
    _load_or_documented_error(text)


@FUZZ
@given(text=st.one_of(st.text(max_size=300), st.sampled_from(["[session]\nname = 's'\n"])))
def test_plan_loader_raises_only_plan_errors_on_any_text(text: str) -> None:
    _load_or_documented_error(text)


# ----- the pre-tool-use hook -------------------------------------------------------------


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with a live scope manifest of session ``fz`` (task ``t`` owns src/)."""
    repo = tmp_path_factory.mktemp("hookrepo")
    (repo / ".git").mkdir()
    (repo / "src").mkdir()
    wave = Wave(
        number=1,
        tasks=(Task(id="t", prompt="p", scope=("src/",)),),
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=10,
    )
    write_manifest(build_manifest(session="fz", wave=wave, repo=repo))
    return repo


def _assert_valid_pre_tool_use(response: HookResponse) -> None:
    assert response.exit_code in (0, 2), response
    if response.exit_code == 2:
        assert response.stderr.strip()
        return
    if not response.stdout:
        return
    output = json.loads(response.stdout)
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    if "permissionDecision" in specific:
        assert specific["permissionDecision"] == "deny"
        assert isinstance(specific["permissionDecisionReason"], str)
    else:
        assert isinstance(specific["additionalContext"], str)


TOOL_INPUTS = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {},
        optional={
            "file_path": st.one_of(
                st.sampled_from(["src/a.py", "../x", "/etc/passwd", "", "src/\x00a"]),
                st.text(max_size=30),
                JSON_VALUES,
            ),
            "command": st.one_of(
                st.sampled_from(["ls", "git push --force", "echo > ../x", "cd src && rm -rf /"]),
                st.text(max_size=60),
                JSON_VALUES,
            ),
            "notebook_path": st.text(max_size=20),
        },
    ),
)
PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "hook_event_name": st.sampled_from(["PreToolUse", "PostToolUse"]),
        "tool_name": st.one_of(
            st.sampled_from(["Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read"]),
            JSON_VALUES,
        ),
        "tool_input": TOOL_INPUTS,
        "cwd": st.one_of(
            st.sampled_from(["{repo}", "{repo}/src", "/", "/nonexistent"]), JSON_VALUES
        ),
        "session_id": JSON_VALUES,
        "tool_use_id": JSON_VALUES,
    },
)
ENVS = st.sampled_from(
    [
        {},
        {"SEAWALL_SESSION": "fz", "SEAWALL_WAVE": "1", "SEAWALL_TASK_ID": "t"},
        {"SEAWALL_SESSION": "fz", "SEAWALL_TASK_ID": "nobody"},
        {"SEAWALL_SESSION": "../etc", "SEAWALL_WAVE": "x"},
        {"SEAWALL_SESSION": "fz", "SEAWALL_WAVE": "99", "SEAWALL_ENFORCEMENT": "warn"},
        {"SEAWALL_ENFORCEMENT": "bogus"},
    ]
)


def _fill_cwd(payload: dict[str, Any], repo: Path) -> dict[str, Any]:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and "{repo}" in cwd:
        payload = {**payload, "cwd": cwd.replace("{repo}", str(repo))}
    return payload


@FUZZ
@given(payload=PAYLOADS, env=ENVS)
def test_pre_tool_use_answers_any_payload_with_a_valid_decision(
    hook_repo: Path, payload: dict[str, Any], env: dict[str, str]
) -> None:
    payload = _fill_cwd(payload, hook_repo)
    env = {**env, "SEAWALL_REPO": str(hook_repo)} if env.get("SEAWALL_SESSION") else env
    with contextlib.chdir(hook_repo):
        response = handle(payload, env)
    _assert_valid_pre_tool_use(response)


def _hook_process_answer(data: bytes, env: dict[str, str]) -> tuple[int, str, str]:
    """``seawall hook pre-tool-use`` in process: the real stdin reader and handler."""
    from seawall.cli.hooks import _run_hook

    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    saved_stdin, saved_env = sys.stdin, dict(os.environ)
    os.environ.update(env)
    sys.stdin = stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _run_hook(Namespace(event="pre-tool-use", session=None))
    finally:
        sys.stdin = saved_stdin
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue(), err.getvalue()


STDIN = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    PAYLOADS.map(lambda p: json.dumps(p, allow_nan=True).encode()),
    JSON_VALUES.map(lambda v: json.dumps(v, allow_nan=True).encode()),
    st.builds(lambda n: b"[" * n, st.integers(1, 100_000)),
)


@FUZZ
@given(data=STDIN)
def test_hook_stdin_reader_answers_any_bytes(hook_repo: Path, data: bytes) -> None:
    with contextlib.chdir(hook_repo):
        code, out, err = _hook_process_answer(data, {})
    _assert_valid_pre_tool_use(HookResponse(exit_code=code, stdout=out, stderr=err.strip()))


def test_hook_stdin_that_is_not_json_fails_closed(hook_repo: Path) -> None:
    with contextlib.chdir(hook_repo):
        code, out, err = _hook_process_answer(b"\xff\xfe not json", {})
    assert (code, out) == (2, "") and "seawall" in err


# ----- the scope matcher -----------------------------------------------------------------


@pytest.fixture(scope="module")
def scope_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scope")
    ws = base / "ws"
    for directory in ("src/app/sub", "src/other", "docs", "pkg/a"):
        (ws / directory).mkdir(parents=True)
    (base / "outside").mkdir()
    (ws / "src/app/out").symlink_to(base / "outside", target_is_directory=True)
    (ws / "src/app/up").symlink_to("..", target_is_directory=True)
    (ws / "docs/loop").symlink_to("../src/app", target_is_directory=True)
    (ws / "src/app/f.py").write_text("x\n")
    (ws / "src/app/hard.py").write_text("x\n")
    os.link(ws / "src/app/hard.py", base / "outside/hard.py")
    return ws


SEGMENT = st.one_of(
    st.sampled_from(["src", "app", "sub", "other", "docs", "pkg", "a", "..", ".", "", "out",
                     "up", "loop", "f.py", "hard.py", "x.py", ".seawall", ".git", "~"]),
    st.text(min_size=1, max_size=6).filter(lambda s: "/" not in s),
)  # fmt: skip
GRANTS = st.lists(
    st.sampled_from(["src/app/", "docs/*.md", "pkg/**/*.py", "src/app/f.py", "docs/", "*"]),
    min_size=1,
    max_size=3,
    unique=True,
)


@FUZZ
@given(parts=st.lists(SEGMENT, min_size=1, max_size=8), grants=GRANTS, absolute=st.booleans())
def test_any_allowed_path_resolves_inside_a_granted_scope(
    scope_tree: Path, parts: list[str], grants: list[str], absolute: bool
) -> None:
    matcher = ScopeMatcher(grants, workspace=scope_tree, session="s")
    path = "/".join(parts)
    candidate = f"{scope_tree}/{path}" if absolute else path
    verdict = matcher.check(candidate)
    if not verdict.allowed:
        return
    if candidate == "~" or candidate.startswith("~/"):
        candidate = os.path.expanduser(candidate)  # as a shell (and the matcher) reads it
    real = os.path.realpath(os.path.join(scope_tree, candidate))
    root = os.path.realpath(scope_tree)
    assert os.path.commonpath([real, root]) == root, (path, real)
    rel = os.path.relpath(real, root)
    compiled = [compile_grant(grant) for grant in grants]
    assert any(grant_matches(g, rx, rel) for g, rx in compiled), (path, rel, grants)
    assert not rel.startswith((".git/", ".seawall/")) and rel not in (".git", ".seawall")


# ----- the command policy ----------------------------------------------------------------

SAFE = ["ls -la", "echo hi", "git status", "pytest -q", "git push origin main",
        "rm -rf build", "cat f", "git reset --soft HEAD~1"]  # fmt: skip
DENIED = ["git push --force", "git reset --hard", "git clean -fdx", "rm -rf /",
          "git push -f origin main", "rm -rf ~", "git push origin +main",
          "git push --force-with-lease"]  # fmt: skip


@st.composite
def nested_commands(draw: st.DrawFn, depth: int = 0) -> tuple[str, bool]:
    """A command line and whether a denied command runs somewhere inside it."""
    if depth >= 3 or draw(st.integers(0, 2)) == 0:
        bad = draw(st.booleans())
        return draw(st.sampled_from(DENIED if bad else SAFE)), bad
    inner, bad = draw(nested_commands(depth + 1))
    quoted = shlex.quote(inner)
    forms = [
        f"eval {quoted}",
        f"timeout 30 bash -c {quoted}",
        f"nice -n 5 sh -c {quoted}",
        f"if true; then {inner}; fi",
        f"for i in 1 2; do {inner}; done",
        f"while false; do :; done; {inner}",
        f"cat <(bash -c {quoted})",
        f"bash <<< {quoted}",
        f"exec bash -c {quoted}",
        f"xargs -0 bash -c {quoted} < /dev/null",
        f"find . -maxdepth 0 -exec bash -c {quoted} \\;",
        f"(cd /tmp && {inner})",
        f"x=$(bash -c {quoted})",
    ]
    return draw(st.sampled_from(forms)), bad


@FUZZ
@given(line=nested_commands())
def test_an_allowed_command_hides_no_denied_command_in_any_wrapper(
    line: tuple[str, bool],
) -> None:
    command, contains_denied = line
    context = CommandContext(cwd=Path("/srv/work"), shared_tree=False, home="/home/agent")
    findings = CommandPolicy().check(command, context)
    if contains_denied:
        assert findings, command
