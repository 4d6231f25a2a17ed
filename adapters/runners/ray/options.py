"""The ray runner's plan options: placement of an agent's task, sizes, JSON tables.

``Placement`` is what Ray is asked for per agent (resources, labels, strategy, queue
timeout, runtime environment) and turns into the options of ``ray.remote(...).options``.
``runner_arguments`` reads a ``[runners.NAME]`` table of kind ``ray`` into the wrapped
runner's spec and the runner's keyword arguments; every bad value names the runner and
the option. The option tables (``runtime_env``, ``ray.init`` and task options) are
Ray's, so they stay JSON-shaped dicts here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seawall.codec import JsonObject, JsonView
from seawall.config.adapter_options import options_text
from seawall.errors import ConfigurationError
from seawall.model import OptionValue, RunnerSpec

__all__ = ["OPTIONS", "Placement", "job_runtime_env", "parse_memory", "runner_arguments"]

OPTIONS = (
    "inner",
    "address",
    "num_cpus",
    "num_gpus",
    "memory",
    "resources",
    "labels",
    "prefer_labels",
    "strategy",
    "queue_timeout",
    "runtime_env",
    "stop_grace",
    "checkpoint_every",
    "scratch_dir",
    "connect_timeout",
)
_STRATEGIES = ("DEFAULT", "SPREAD")
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|CREDENTIAL|_KEY$", re.IGNORECASE)


def parse_memory(text: str) -> int:
    """Bytes from ``"2147483648"``, ``"4GiB"``, ``"512MB"``, ``"1.5G"``."""
    match = _MEMORY.match(text)
    if match is None:
        raise ConfigurationError(f"memory {text!r} is not a size like 4GiB, 512MB or 1073741824")
    number, unit = float(match.group(1)), (match.group(2) or "").upper()
    scale = _UNITS[unit[:1]] if "I" not in unit else 1024 ** ("KMGT".index(unit[0]) + 1)
    return int(number * scale)


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Where and with what one agent's Ray task runs, and how long it may wait for it."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    prefer_labels: Mapping[str, str] = field(default_factory=dict)
    strategy: str = "DEFAULT"
    queue_timeout: float | None = None
    runtime_env: JsonView | None = None

    def __post_init__(self) -> None:
        if self.num_cpus < 0 or self.num_gpus < 0 or (self.memory is not None and self.memory <= 0):
            raise ConfigurationError(
                "the ray runner's num_cpus, num_gpus and memory must be positive"
            )
        if self.strategy not in _STRATEGIES:
            raise ConfigurationError(
                f"the ray runner's strategy must be one of {', '.join(_STRATEGIES)}, "
                f"not {self.strategy!r} (labels and prefer_labels place by node label)"
            )
        if self.queue_timeout is not None and self.queue_timeout <= 0:
            raise ConfigurationError("the ray runner's queue_timeout must be positive")

    def job_env(self) -> JsonObject:
        """The part of ``runtime_env`` Ray accepts only for a whole job (see
        ``job_runtime_env``)."""
        return job_runtime_env(self.runtime_env)[0]

    def task_options(self) -> JsonObject:
        """The Ray task options that place one agent: resources, labels, strategy."""
        options: JsonObject = {"num_cpus": self.num_cpus, "max_retries": 0}
        if self.num_gpus:
            options["num_gpus"] = self.num_gpus
        if self.memory is not None:
            options["memory"] = self.memory
        if self.resources:
            options["resources"] = dict(self.resources)
        task_env = job_runtime_env(self.runtime_env)[1]
        if task_env:  # nothing left: the task inherits the job's
            options["runtime_env"] = task_env
        if self.prefer_labels:  # try the preferred nodes first, then any the labels allow
            options["label_selector"] = {**self.labels, **self.prefer_labels}
            options["fallback_strategy"] = [{"label_selector": dict(self.labels)}]
        elif self.labels:
            options["label_selector"] = dict(self.labels)
        if self.strategy != "DEFAULT":
            options["scheduling_strategy"] = self.strategy
        return options

    def asks(self) -> str:
        """What the agent asks for, in words (for a task no node takes)."""
        asks = [f"num_cpus={self.num_cpus:g}"]
        if self.num_gpus:
            asks.append(f"num_gpus={self.num_gpus:g}")
        asks += [f"{name}={amount:g}" for name, amount in self.resources.items()]
        asks += [f"label {key}={value}" for key, value in self.labels.items()]
        return ", ".join(asks)


def job_runtime_env(
    env: JsonView | None,
) -> tuple[JsonObject, JsonObject | None]:
    """``env`` split into what Ray takes only at ``ray.init`` (``py_modules`` and a
    ``working_dir`` given as local paths, which Ray uploads for the whole job; made
    absolute here) and what it takes per task (the rest, including remote URIs)."""
    if env is None:
        return {}, None
    job: JsonObject = {}
    task = dict(env)
    modules = [str(m) for m in task.get("py_modules") or []]
    local = [m for m in modules if "://" not in m]
    if local:
        job["py_modules"] = [str(Path(m).absolute()) for m in local]
        remote = [m for m in modules if "://" in m]
        if remote:
            task["py_modules"] = remote
        else:
            task.pop("py_modules")
    working_dir = task.get("working_dir")
    if isinstance(working_dir, str) and "://" not in working_dir:
        job["working_dir"] = str(Path(task.pop("working_dir")).absolute())
    return job, task


def runner_arguments(spec: RunnerSpec) -> tuple[RunnerSpec, JsonObject]:
    """The wrapped runner's spec and the ``RayRunner`` keyword arguments of ``spec``:
    ``options.inner`` is the wrapped runner's kind, ``inner.KEY`` options are its
    options; ``argv``, ``model`` and ``env`` are its."""
    options = options_text(spec.options, field=f"runners.{spec.name}.options")
    inner_options: dict[str, OptionValue] = {
        key.removeprefix("inner."): options.pop(key)
        for key in list(options)
        if key.startswith("inner.")
    }
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigurationError(
            f"runner {spec.name!r}: unknown option(s) {unknown}; known: "
            f"{', '.join(OPTIONS)} and inner.<option of the wrapped runner>"
        )
    kind = options.get("inner")
    if not kind:
        raise ConfigurationError(
            f"runner {spec.name!r}: options.inner must name the wrapped runner's kind "
            '(for example inner = "claude-code")'
        )
    inner = RunnerSpec(
        name=f"{spec.name}.inner",
        kind=kind,
        argv=spec.argv,
        model=spec.model,
        env=spec.env,
        options=inner_options,
    )
    try:
        arguments: JsonObject = {
            "address": options.get("address") or None,
            "num_cpus": float(options.get("num_cpus", "1")),
            "num_gpus": float(options.get("num_gpus", "0")),
            "memory": parse_memory(options["memory"]) if options.get("memory") else None,
            "resources": _json_table(spec.name, "resources", options.get("resources"), float),
            "labels": _json_table(spec.name, "labels", options.get("labels"), str),
            "prefer_labels": _json_table(
                spec.name, "prefer_labels", options.get("prefer_labels"), str
            ),
            "strategy": options.get("strategy", "DEFAULT").upper(),
            "queue_timeout": (
                float(options["queue_timeout"]) if options.get("queue_timeout") else None
            ),
            "runtime_env": _runtime_env(spec.name, options.get("runtime_env")),
            "stop_grace": float(options.get("stop_grace", "10")),
            "checkpoint_every": float(options.get("checkpoint_every", "30")),
            "scratch_dir": options.get("scratch_dir") or None,
            "connect_timeout": float(options.get("connect_timeout", "60")),
        }
    except ValueError as exc:
        raise ConfigurationError(f"runner {spec.name!r}: {exc}") from None
    return inner, arguments


def _json_table(runner: str, key: str, raw: str | None, kind: type[Any]) -> JsonObject:
    """A JSON object option (``resources``, ``labels``) with values of ``kind``."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"runner {runner!r}: options.{key} must be a JSON object: {exc}"
        ) from None
    numbers = (int, float) if kind is float else (kind,)
    if not isinstance(value, dict) or not all(
        isinstance(item, numbers) and not isinstance(item, bool) for item in value.values()
    ):
        expected = "numbers" if kind is float else "strings"
        raise ConfigurationError(
            f"runner {runner!r}: options.{key} must be a JSON object of {expected}, not {raw!r}"
        )
    return {str(name): kind(item) for name, item in value.items()}


def _runtime_env(name: str, raw: str | None) -> JsonObject | None:
    """The ``runtime_env`` option; a literal secret in its ``env_vars`` is refused."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"runner {name!r}: runtime_env must be a JSON object: {exc}"
        ) from None
    if not isinstance(value, dict):
        raise ConfigurationError(f"runner {name!r}: runtime_env must be a JSON object")
    for key, item in dict(value.get("env_vars") or {}).items():
        if _SECRET.search(str(key)) and "${" not in str(item):
            raise ConfigurationError(
                f"runner {name!r}: runtime_env.env_vars.{key} looks like a secret written "
                "into the plan, which the session keeps in its ledger; set it on the workers "
                f'and write {key} = "${{{key}}}" (Ray takes it from the worker\'s environment)'
            )
    return value
