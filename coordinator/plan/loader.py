"""Plan files: TOML with ``[session]``, ``[runners.NAME]`` tables and ``[[task]]`` entries.

``load_plan`` validates everything before returning; a plan is either whole and valid
or rejected with a ``PlanError`` naming the file, the line, the task and the field.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from seawall.codec import JsonView
from seawall.config import FieldError, build, check_keys, field_line, suggest, table_element
from seawall.config.toml_text import toml_problem
from seawall.errors import PlanError
from seawall.model import Plan, RunnerSpec, SessionConfig, Task

__all__ = [
    "load_plan",
    "parse_plan",
    "toml_error",
    "validate_scope_pattern",
    "validate_task_id",
]

_TOP_LEVEL = ("session", "runners", "task")
# written key -> field; ``max_agents_per_wave`` is the old name of ``max_agents``, still read
_SESSION_ALIASES = {"type": "session_type", "max_agents": "max_agents_per_wave"}
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_UNSUPPORTED_GLOB = set("[]{}\\\0")


def load_plan(path: str | Path) -> Plan:
    """Read and validate the plan file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError("no such plan file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read the plan: {exc}", path=str(path)) from exc
    return parse_plan(text, path=str(path))


def parse_plan(text: str, *, path: str = "<plan>") -> Plan:
    """Validate plan TOML given as text. ``path`` is used in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(exc, text, path) from exc
    try:
        return _plan(data, path, text)
    except PlanError as exc:
        located = with_line(exc, text)
        if located is exc:
            raise
        raise located from None


def with_line(error: PlanError, text: str) -> PlanError:
    """``error`` with the line of the plan ``text`` it points to (itself when it has
    one already, or the text does not show it)."""
    if error.line is not None:
        return error
    line = _line(text, error)
    if line is None:
        return error
    return PlanError(
        error.detail,
        path=error.path,
        task=error.task,
        field=error.field,
        line=line,
        hint=error.hint,
    )


def toml_error(exc: tomllib.TOMLDecodeError, text: str, path: str) -> PlanError:
    """A TOML syntax error of the plan file with its line, column and hint (see
    ``seawall.config.toml_text``)."""
    problem = toml_problem(exc, text)
    return PlanError(
        f"not valid TOML: {problem.message}",
        path=path,
        line=problem.line,
        column=problem.column,
        hint=problem.hint,
    )


def _plan(data: JsonView, path: str, text: str) -> Plan:  # the user's TOML
    try:
        check_keys(data, _TOP_LEVEL, "")
    except FieldError as exc:
        raise PlanError(exc.message, path=path, field=exc.field) from None
    session = _session(data.get("session", {}), path)
    runners = _runners(data.get("runners", {}), path)
    tasks = _tasks(data.get("task", []), path)
    _check_references(session, runners, tasks, path)
    return Plan(session=session, tasks=tasks, runners=runners, path=path, source=text)


def _line(text: str, error: PlanError) -> int | None:
    """The line of the plan ``error`` points to, when the text shows it."""
    if error.field is None and error.task is None:
        return None
    field = error.field or ""
    if error.task is None:
        written_field = field
        for written, name in _SESSION_ALIASES.items():
            written_field = re.sub(rf"^session\.{name}\b", f"session.{written}", written_field)
        line = field_line(text, written_field)
        return line if line is not None or written_field == field else field_line(text, field)
    label = re.fullmatch(r"#(\d+)", error.task)
    if label:
        element: int | None = int(label.group(1)) - 1
    else:
        element = table_element(text, "task", "id", error.task)
    if element is None:
        return None
    return field_line(text, field, table="task", element=element)


def _session(table: Any, path: str) -> SessionConfig:
    if isinstance(table, Mapping) and "max_agents" in table and "max_agents_per_wave" in table:
        raise PlanError(
            "is set twice: max_agents_per_wave is the old name of max_agents; keep max_agents",
            path=path,
            field="session.max_agents",
        )
    old_cap = isinstance(table, Mapping) and "max_agents_per_wave" in table
    if isinstance(table, Mapping):
        table = {_SESSION_ALIASES.get(key, key): value for key, value in table.items()}
    try:
        config = build(SessionConfig, table, "session.")
    except FieldError as exc:
        raise PlanError(exc.message, path=path, field=exc.field) from None
    if config.max_turns != "auto" and config.max_turns < 1:
        raise PlanError('must be at least 1 or "auto"', path=path, field="session.max_turns")
    if config.max_wait < 0:
        raise PlanError("must not be negative (minutes)", path=path, field="session.max_wait")
    if config.max_agents_per_wave < 1:
        cap = "session.max_agents_per_wave" if old_cap else "session.max_agents"
        raise PlanError("must be at least 1", path=path, field=cap)
    if not config.name or not _TASK_ID.fullmatch(config.name):
        raise PlanError(
            "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            path=path,
            field="session.name",
        )
    for index, extra in enumerate(config.sandbox_writable):
        if not extra.startswith(("/", "~/")):
            raise PlanError(
                "must be an absolute path or start with ~/",
                path=path,
                field=f"session.sandbox_writable[{index}]",
            )
    _check_patterns(config.reads, path, task=None, field="session.reads")
    for index, check in enumerate(config.checks):
        if not check.strip():
            raise PlanError("a check command is empty", path=path, field=f"session.checks[{index}]")
    return config


def _runners(table: Any, path: str) -> Mapping[str, RunnerSpec]:
    if not isinstance(table, Mapping):
        raise PlanError("must be a table of [runners.NAME] tables", path=path, field="runners")
    runners: dict[str, RunnerSpec] = {}
    for name, spec in table.items():
        where = f"runners.{name}"
        if not isinstance(spec, Mapping):
            raise PlanError("must be a table", path=path, field=where)
        if "kind" not in spec:
            raise PlanError("is missing 'kind'", path=path, field=where)
        try:
            runner = build(RunnerSpec, {**spec, "name": name}, f"{where}.")
        except FieldError as exc:
            raise PlanError(exc.message, path=path, field=exc.field) from None
        runners[name] = _resolve_paths(runner, path)
    return MappingProxyType(runners)


_PATH_OPTIONS = ("script", "inner.script")


def _resolve_paths(runner: RunnerSpec, plan_path: str) -> RunnerSpec:
    """Runner options that name files (``script``) are relative to the plan file."""
    base = Path(plan_path).parent
    options = dict(runner.options)
    for key in _PATH_OPTIONS:
        value = options.get(key)
        if (
            isinstance(value, str)
            and value
            and not Path(value).is_absolute()
            and not plan_path.startswith("<")
        ):
            options[key] = str((base / value).resolve())
    if options == dict(runner.options):
        return runner
    return replace(runner, options=MappingProxyType(options))


def _tasks(entries: Any, path: str) -> tuple[Task, ...]:
    if not isinstance(entries, list):
        raise PlanError("must be an array of [[task]] tables", path=path, field="task")
    if not entries:
        raise PlanError("the plan has no [[task]] entries", path=path)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        task = _task(entry, index, path)
        if task.id in seen:
            raise PlanError(
                f"duplicate task id (also task #{seen[task.id] + 1})",
                path=path,
                task=task.id,
                field="id",
            )
        seen[task.id] = index
        tasks.append(task)
    return tuple(tasks)


def _task(entry: Any, index: int, path: str) -> Task:
    label = f"#{index + 1}"
    if not isinstance(entry, Mapping):
        raise PlanError("must be a table", path=path, task=label)
    task_id = entry.get("id")
    if not isinstance(task_id, str):
        raise PlanError("is missing or not a string", path=path, task=label, field="id")
    problem = validate_task_id(task_id)
    if problem:
        raise PlanError(problem, path=path, task=task_id, field="id")
    try:
        task = build(Task, entry, "")
    except FieldError as exc:
        raise PlanError(exc.message, path=path, task=task_id, field=exc.field) from None
    if not task.prompt.strip():
        raise PlanError("the prompt is empty", path=path, task=task_id, field="prompt")
    if task.max_turns is not None and task.max_turns < 1:
        raise PlanError("must be at least 1", path=path, task=task_id, field="max_turns")
    _check_patterns(task.scope, path, task=task_id, field="scope")
    _check_patterns(task.reads, path, task=task_id, field="reads")
    for number, model in enumerate(task.models, start=1):
        if not model.strip():
            raise PlanError(
                f"model {number} of the list is empty",
                path=path,
                task=task_id,
                field="models",
                hint='name each attempt\'s model: models = ["sonnet", "opus"]',
            )
    return task


def _check_patterns(patterns: tuple[str, ...], path: str, *, task: str | None, field: str) -> None:
    """Scope and read paths share one syntax (see :func:`validate_scope_pattern`)."""
    for i, pattern in enumerate(patterns):
        problem = validate_scope_pattern(pattern)
        if problem:
            kind = "scope pattern" if field == "scope" else "read path"
            raise PlanError(
                f"invalid {kind} {pattern!r}: {problem}",
                path=path,
                task=task,
                field=f"{field}[{i}]",
            )


def validate_task_id(task_id: str) -> str | None:
    """Why ``task_id`` is unsafe as a branch or path name, or None when it is safe."""
    if not _TASK_ID.fullmatch(task_id):
        return (
            f"{task_id!r} is not a safe id: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if ".." in task_id or task_id.endswith((".", ".lock")):
        return f"{task_id!r} is not a safe id: no '..', and no trailing '.' or '.lock'"
    return None


def validate_scope_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid scope pattern, or None when it is valid."""
    if not pattern.strip():
        return "it is empty"
    bad = sorted(_UNSUPPORTED_GLOB.intersection(pattern))
    if bad:
        return f"unsupported character(s) {', '.join(repr(c) for c in bad)}"
    body = pattern[1:] if pattern.startswith("/") else pattern
    body = body.removesuffix("/")
    segments = body.split("/")
    for segment in segments:
        if segment == "":
            return "it has an empty path segment ('//')"
        if segment in (".", ".."):
            return f"it has a {segment!r} segment"
        if "**" in segment and segment != "**":
            return "'**' must be a whole path segment (write 'src/**/*.py', not 'src/**.py')"
    return None


def _check_references(
    session: SessionConfig,
    runners: Mapping[str, RunnerSpec],
    tasks: tuple[Task, ...],
    path: str,
) -> None:
    import networkx as nx  # here, not at import: `import seawall` stays light

    ids = {task.id for task in tasks}
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(task.id for task in tasks)
    for task in tasks:
        for i, dependency in enumerate(task.depends_on):
            if dependency == task.id:
                raise PlanError(
                    "a task cannot depend on itself",
                    path=path,
                    task=task.id,
                    field=f"depends_on[{i}]",
                )
            if dependency not in ids:
                raise PlanError(
                    f"unknown dependency {dependency!r}{_did_you_mean(dependency, ids)}",
                    path=path,
                    task=task.id,
                    field=f"depends_on[{i}]",
                )
            graph.add_edge(dependency, task.id)
        if task.agent is not None and task.agent not in runners and not _builtin_runner(task.agent):
            raise PlanError(
                _unknown_runner(task.agent, runners), path=path, task=task.id, field="agent"
            )
    if session.agent not in runners and not _builtin_runner(session.agent):
        raise PlanError(_unknown_runner(session.agent, runners), path=path, field="session.agent")
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return
    names = [edge[0] for edge in cycle] + [cycle[0][0]]
    raise PlanError(
        f"dependency cycle: {' -> '.join(names)}", path=path, task=names[0], field="depends_on"
    )


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    return suggest(name, sorted(known))


def _unknown_runner(name: str, runners: Mapping[str, RunnerSpec]) -> str:
    """``unknown runner 'codx'; did you mean 'codex'?``, else what the plan may name."""
    from seawall.registry import RUNNER_GROUP, available

    known = [*runners, *available(RUNNER_GROUP)]
    close = _did_you_mean(name, known)
    if close:
        return f"unknown runner {name!r}{close}"
    return (
        f"unknown runner {name!r}: define [runners.{name}] or use one of "
        f"{', '.join(sorted(set(known)))}"
    )


def _builtin_runner(name: str) -> bool:
    from seawall.registry import RUNNER_GROUP, available

    return name in available(RUNNER_GROUP)
