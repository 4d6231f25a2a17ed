"""The steps a scripted agent follows, and loading scripts from TOML or JSON files.

A script file maps task ids to scripts; a task with several scripts uses the n-th on its
n-th dispatch (the last one repeats)::

    [default]                      # optional: for tasks without a script
    final = "STATUS: done"

    [scripts.api-auth]
    final = "Added the login route.\\nSTATUS: done"
    steps = [
      { edit = "src/auth.py", content = "def login(): ...\\n" },
      { edit = "src/auth.py", old = "...", new = "return True" },
      { tool = "Bash", arguments = { command = "pytest -q" }, result = "1 failed",
        is_error = true, exit_code = 1 },
      { read = "src/auth.py", offset = 1, limit = 40 },
      { commit = "auth: login route" },
      { say = "checking" }, { spend = 0.02 }, { sleep = 0.1 },
    ]

    [[scripts.flaky]]              # first dispatch
    steps = [{ crash = "boom" }]
    [[scripts.flaky]]              # second dispatch
    final = "STATUS: done"
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from seawall.codec import JsonView
from seawall.errors import ConfigurationError

__all__ = [
    "AgentScript",
    "Commit",
    "Crash",
    "Edit",
    "Read",
    "Say",
    "ScriptFile",
    "Sleep",
    "Spend",
    "Step",
    "Tool",
    "as_scripts",
    "load_scripts",
]


def _frozen(value: JsonView | None = None) -> JsonView:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit:
    """Change a file (relative to the workspace): replace ``old`` with ``new`` (an ``Edit``
    call; an error result when ``old`` is absent), or write ``content`` (a ``Write``)."""

    path: str
    content: str | None = None
    old: str | None = None
    new: str = ""

    def __post_init__(self) -> None:
        if (self.content is None) == (self.old is None):
            raise ConfigurationError(f"edit {self.path!r}: give either content or old/new")


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    """Commit the files this agent edited (or ``paths``) with a real ``git commit``."""

    message: str
    paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """Call any tool and receive a scripted result (nothing is executed)."""

    name: str
    arguments: JsonView = field(default_factory=_frozen)
    result: str = ""
    is_error: bool = False
    exit_code: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Read:
    """Read a file of the workspace (its real content is the result)."""

    path: str
    offset: int | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Say:
    """Write a message (text, not a tool call)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Spend:
    """Report model usage costing ``cost_usd``."""

    cost_usd: float
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Sleep:
    """Wait (cancellable), as an agent thinking for a while."""

    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Crash:
    """The agent crashes here: an error result, whatever comes after."""

    message: str = "scripted crash"


Step = Edit | Commit | Tool | Read | Say | Spend | Sleep | Crash


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentScript:
    """What one dispatch of a scripted agent does, and the final message it ends with."""

    steps: tuple[Step, ...] = ()
    final: str = "STATUS: done"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptFile:
    """Scripts per task id (one per dispatch) and the default for other tasks."""

    scripts: Mapping[str, tuple[AgentScript, ...]]
    default: AgentScript | None = None


def load_scripts(path: str | Path) -> ScriptFile:
    """Read a ``.toml`` or ``.json`` script file; errors name the file, script and step."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the script file: {exc}") from exc
    try:
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: not valid {path.suffix[1:] or 'TOML'}: {exc}") from exc
    return _script_file(data, str(path))


def _script_file(data: Any, where: str) -> ScriptFile:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: the top level must be a table")
    unknown = sorted(set(data) - {"scripts", "default"})
    if unknown:
        raise ConfigurationError(f"{where}: unknown key(s) {unknown}; known: scripts, default")
    tables = data.get("scripts", {})
    if not isinstance(tables, dict):
        raise ConfigurationError(f"{where}: scripts must be a table of task ids")
    scripts: dict[str, tuple[AgentScript, ...]] = {}
    for task_id, value in tables.items():
        attempts = value if isinstance(value, list) else [value]
        scripts[task_id] = tuple(
            _script(item, f"{where}: script {task_id!r}" + (f" #{n + 1}" if n else ""))
            for n, item in enumerate(attempts)
        )
    default = data.get("default")
    return ScriptFile(
        scripts=MappingProxyType(scripts),
        default=_script(default, f"{where}: default") if default is not None else None,
    )


def _script(data: Any, where: str) -> AgentScript:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: a script must be a table")
    unknown = sorted(set(data) - {"steps", "final"})
    if unknown:
        raise ConfigurationError(f"{where}: unknown key(s) {unknown}; known: steps, final")
    steps = data.get("steps", [])
    final = data.get("final", "STATUS: done")
    if not isinstance(steps, list) or not isinstance(final, str):
        raise ConfigurationError(f"{where}: steps must be a list and final a string")
    return AgentScript(
        steps=tuple(_step(step, f"{where}, step {n + 1}") for n, step in enumerate(steps)),
        final=final,
    )


_ACTIONS: Mapping[str, tuple[str, frozenset[str]]] = MappingProxyType(
    {
        "edit": ("path", frozenset({"content", "old", "new"})),
        "commit": ("message", frozenset({"paths"})),
        "tool": ("name", frozenset({"arguments", "result", "is_error", "exit_code"})),
        "read": ("path", frozenset({"offset", "limit"})),
        "say": ("text", frozenset()),
        "spend": ("cost_usd", frozenset({"input_tokens", "output_tokens"})),
        "sleep": ("seconds", frozenset()),
        "crash": ("message", frozenset()),
    }
)
_TYPES: Mapping[str, type[Step]] = MappingProxyType(
    {
        "edit": Edit,
        "commit": Commit,
        "tool": Tool,
        "read": Read,
        "say": Say,
        "spend": Spend,
        "sleep": Sleep,
        "crash": Crash,
    }
)


def _step(data: Any, where: str) -> Step:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: a step must be a table")
    actions = sorted(set(data) & set(_ACTIONS))
    if len(actions) != 1:
        raise ConfigurationError(
            f"{where}: a step has exactly one action of {sorted(_ACTIONS)}; found {actions}"
        )
    action = actions[0]
    first, allowed = _ACTIONS[action]
    unknown = sorted(set(data) - allowed - {action})
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown key(s) {unknown} for {action!r}; known: {sorted(allowed)}"
        )
    kwargs = {key: value for key, value in data.items() if key != action}
    kwargs[first] = data[action]
    if "paths" in kwargs:
        kwargs["paths"] = tuple(kwargs["paths"])
    try:
        step = _TYPES[action](**kwargs)
    except (TypeError, ConfigurationError) as exc:
        raise ConfigurationError(f"{where}: {exc}") from exc
    return _checked(step, where)


def _checked(step: Step, where: str) -> Step:
    """Type checks a file can get wrong (dataclasses do not check at run time)."""
    text_fields = {
        Edit: ("path",),
        Commit: ("message",),
        Tool: ("name", "result"),
        Read: ("path",),
        Say: ("text",),
        Crash: ("message",),
    }
    for name in text_fields.get(type(step), ()):
        if not isinstance(getattr(step, name), str):
            raise ConfigurationError(f"{where}: {name} must be a string")
    for name in ("seconds", "cost_usd"):
        value = getattr(step, name, 0.0)
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise ConfigurationError(f"{where}: {name} must be a number >= 0")
    if isinstance(step, Tool) and not isinstance(step.arguments, Mapping):
        raise ConfigurationError(f"{where}: arguments must be a table")
    return step


def as_scripts(
    value: AgentScript | Sequence[Step] | Sequence[AgentScript],
) -> tuple[AgentScript, ...]:
    """Normalize what a user gives for one task: a script, a list of steps, or attempts."""
    if isinstance(value, AgentScript):
        return (value,)
    items = tuple(value)
    if items and all(isinstance(item, AgentScript) for item in items):
        return tuple(item for item in items if isinstance(item, AgentScript))
    if all(not isinstance(item, AgentScript) for item in items):
        return (
            AgentScript(steps=tuple(item for item in items if not isinstance(item, AgentScript))),
        )
    raise ConfigurationError(
        "a task's script is an AgentScript, a list of steps, or a list of AgentScripts"
    )
