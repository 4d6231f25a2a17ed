"""The ``ray`` runner: any other runner, with each agent run as a task on a Ray cluster.

For a wave with more agents than one machine can build and test at once. Per ``run()``:

1. The agent's branch travels as git bundles through Ray's object store: a chain per
   repository, the first with the history up to the first wave's base, each later one
   with only the commits since (shared by the agents of a wave), plus a small extra
   bundle for an earlier checkpoint ref. No shared filesystem or git server.
2. A Ray task (``num_cpus`` / ``memory`` / ``runtime_env`` per agent) clones them on some
   worker, checks out the agent's branch, rebuilds the wrapped runner and runs it there
   (see ``adapters.runners._ray_worker``).
3. Events come back while the agent runs, through a small hub actor; each is handed to
   ``emit`` at once, so detectors, breakers and the live table work unchanged. After each
   edit the worker sends a shadow checkpoint as a bundle; the coordinator stores it,
   moves the agent's checkpoint ref (``refs/seawall/<session>/<task>``, compare-and-swap:
   a ref someone else moved is left to them) and makes the local worktree's files and
   branch what the remote agent's are *before* it emits the edit's result. So when the
   coordinator sees an edit, its own copy holds it, and when ``run()`` returns, the local
   worktree, branch and checkpoint ref are the agent's: the coordinator reviews and
   merges exactly as for a local agent.
4. Stop and time limit: the hub's stop flag ends the agent cleanly (the wrapped runner
   stops it, the worker checkpoints it as ``wip`` and returns); after ``stop_grace``
   seconds without an answer the task is force-cancelled. Either way ``run()`` returns a
   cancelled / timed-out result with the checkpoints that arrived. A worker that dies
   gives a cancelled, failed result whose ``stop_reason`` says so (the session records it
   as partial), again with the checkpoints that arrived.

The workspace must be a linked worktree (``isolation = "worktree"``) with a branch checked
out: the remote agent's work is mirrored into it, which would be unsafe for agents
sharing the main working tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import anyio
import anyio.to_thread

from adapters.runners._ray_git import bundle
from adapters.runners._ray_hub import Hub
from adapters.runners._ray_local import LocalWorktree
from adapters.runners._ray_wire import (
    Job,
    WorkerOutcome,
    decode_event,
    encode_spec,
)
from coordinator.errors import ConfigurationError, MissingExtraError, RunnerError
from coordinator.git.repo import common_dir, open_repository
from coordinator.model import OptionValue, RunnerSpec
from coordinator.options import options_text
from coordinator.runner import AgentRequest, AgentResult, AgentRunner, EmitFn, Emitter

__all__ = ["RayRunner", "parse_memory"]

_BASE_CACHE = 8  # repositories whose bundle chains stay in the object store
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_OPTIONS = (
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
)
_STRATEGIES = ("DEFAULT", "SPREAD")
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|CREDENTIAL|_KEY$", re.IGNORECASE)
HUB_CHECK = 5.0  # seconds a health check of the hub may take before it counts as lost


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError(package="ray", extra="ray", purpose="the ray runner") from exc
    return ray


def parse_memory(text: str) -> int:
    """Bytes from ``"2147483648"``, ``"4GiB"``, ``"512MB"``, ``"1.5G"``."""
    match = _MEMORY.match(text)
    if match is None:
        raise ConfigurationError(f"memory {text!r} is not a size like 4GiB, 512MB or 1073741824")
    number, unit = float(match.group(1)), (match.group(2) or "").upper()
    scale = _UNITS[unit[:1]] if "I" not in unit else 1024 ** ("KMGT".index(unit[0]) + 1)
    return int(number * scale)


@dataclass(slots=True)
class _Stop:
    """Why the coordinator ended the run, if it did; where and when the agent started."""

    kind: str = ""  # "", "cancelled", "timed_out", "unplaced"
    reason: str = ""
    forced: bool = False
    started: anyio.Event | None = None
    started_at: float | None = None
    node: str = ""  # the Ray node the agent runs on, once it started


@dataclass(slots=True)
class _Settled:
    """How the remote task ended: its value, or the Ray error that ended it."""

    outcome: WorkerOutcome | None = None
    error: BaseException | None = None
    done: bool = False


class RayRunner(AgentRunner):
    """Runs the wrapped runner for each agent as a Ray task. Plan table::

        [runners.remote]
        kind = "ray"
        argv = ["claude-wrapper"]          # argv, model and env go to the wrapped runner
        options = { inner = "command", "inner.output" = "stream-json",
                    address = "ray://head:10001", num_cpus = "2", memory = "4GiB",
                    runtime_env = '{"pip": ["seawall[ray]"]}', stop_grace = "10" }

    ``inner`` is a ``RunnerSpec`` (rebuilt on the worker by its kind) or a picklable
    factory returning an ``AgentRunner``. ``address=None`` connects to the Ray already
    initialised in this process, or starts a local one (``init_options`` go to
    ``ray.init``); ``"auto"`` or ``"ray://host:10001"`` joins a cluster. ``scratch_dir``
    is where workers make their temporary clones (a path on the workers; default: their
    temporary directory). ``poll`` is how long one wait for the worker's messages lasts.
    """

    def __init__(
        self,
        inner: RunnerSpec | Callable[[], AgentRunner],
        *,
        address: str | None = None,
        num_cpus: float = 1.0,
        num_gpus: float = 0.0,
        memory: int | None = None,
        resources: Mapping[str, float] | None = None,
        labels: Mapping[str, str] | None = None,
        prefer_labels: Mapping[str, str] | None = None,
        strategy: str = "DEFAULT",
        queue_timeout: float | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        init_options: Mapping[str, Any] | None = None,
        stop_grace: float = 10.0,
        checkpoint_every: float = 30.0,
        scratch_dir: str | None = None,
        poll: float = 0.5,
    ) -> None:
        if isinstance(inner, RunnerSpec):
            if inner.kind == "ray":
                raise ConfigurationError("the ray runner cannot wrap another ray runner")
        elif not callable(inner):
            raise ConfigurationError(
                "the ray runner wraps a RunnerSpec or a factory returning an AgentRunner, "
                f"not {inner!r}"
            )
        if num_cpus < 0 or num_gpus < 0 or (memory is not None and memory <= 0):
            raise ConfigurationError(
                "the ray runner's num_cpus, num_gpus and memory must be positive"
            )
        if strategy not in _STRATEGIES:
            raise ConfigurationError(
                f"the ray runner's strategy must be one of {', '.join(_STRATEGIES)}, "
                f"not {strategy!r} (labels and prefer_labels place by node label)"
            )
        if queue_timeout is not None and queue_timeout <= 0:
            raise ConfigurationError("the ray runner's queue_timeout must be positive")
        if stop_grace <= 0 or poll <= 0 or checkpoint_every < 0:
            raise ConfigurationError("the ray runner's stop_grace and poll must be positive")
        self.inner = inner
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.memory = memory
        self.resources = dict(resources or {})
        self.labels = dict(labels or {})
        self.prefer_labels = dict(prefer_labels or {})
        self.strategy = strategy
        self.queue_timeout = queue_timeout
        self.runtime_env = dict(runtime_env) if runtime_env is not None else None
        self.init_options = dict(init_options or {})
        self.stop_grace = stop_grace
        self.checkpoint_every = checkpoint_every
        self.scratch_dir = scratch_dir
        self.poll = poll
        self._lock: anyio.Lock | None = None
        self._started_ray = False
        self._hub: tuple[str, Any] | None = None
        self._hub_name = f"seawall-hub-{secrets.token_hex(6)}"
        self._remote: Any = None
        self._bases: OrderedDict[tuple[str, str], list[tuple[str, Any]]] = OrderedDict()
        self.bundled_bytes = 0  # bytes of history bundles put in the object store, in all

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        """Build from ``[runners.NAME]``: ``options.inner`` is the wrapped runner's kind,
        ``inner.KEY`` options are its options; ``argv``, ``model`` and ``env`` are its."""
        options = options_text(spec.options, field=f"runners.{spec.name}.options")
        inner_options: dict[str, OptionValue] = {
            key.removeprefix("inner."): options.pop(key)
            for key in list(options)
            if key.startswith("inner.")
        }
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ConfigurationError(
                f"runner {spec.name!r}: unknown option(s) {unknown}; known: "
                f"{', '.join(_OPTIONS)} and inner.<option of the wrapped runner>"
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
            return cls(
                inner,
                address=options.get("address") or None,
                num_cpus=float(options.get("num_cpus", "1")),
                num_gpus=float(options.get("num_gpus", "0")),
                memory=parse_memory(options["memory"]) if options.get("memory") else None,
                resources=_json_table(spec.name, "resources", options.get("resources"), float),
                labels=_json_table(spec.name, "labels", options.get("labels"), str),
                prefer_labels=_json_table(
                    spec.name, "prefer_labels", options.get("prefer_labels"), str
                ),
                strategy=options.get("strategy", "DEFAULT").upper(),
                queue_timeout=(
                    float(options["queue_timeout"]) if options.get("queue_timeout") else None
                ),
                runtime_env=_runtime_env(spec.name, options.get("runtime_env")),
                stop_grace=float(options.get("stop_grace", "10")),
                checkpoint_every=float(options.get("checkpoint_every", "30")),
                scratch_dir=options.get("scratch_dir") or None,
            )
        except ValueError as exc:
            raise ConfigurationError(f"runner {spec.name!r}: {exc}") from None

    # -- Ray -------------------------------------------------------------------------

    async def _connect(self) -> Any:
        """Ray, initialised; the hub actor and the remote function of this Ray job."""
        ray = _import_ray()
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if not ray.is_initialized():
                options = {"address": self.address, **self.init_options}
                ray.init(**options)  # on the loop thread: Ray installs handlers there
                self._started_ray = self.address is None
            job = str(ray.get_runtime_context().get_job_id())
            if self._hub is None or self._hub[0] != job:
                self._hub = (job, await self._new_hub(ray))
                self._bases.clear()
                from adapters.runners._ray_worker import run_remote

                self._remote = ray.remote(run_remote)
            return ray

    async def _new_hub(self, ray: Any) -> Any:
        """A hub actor on this (the coordinator's) node, under the runner's hub name.

        Pinned here, it is lost only with the coordinator's own node, never with a
        worker's. The name of a hub that just died may not be free yet: retry briefly.
        """
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(
            node_id=ray.get_runtime_context().get_node_id(), soft=False
        )
        actor = ray.remote(Hub).options(
            num_cpus=0, max_concurrency=1000, name=self._hub_name, scheduling_strategy=here
        )
        for attempt in range(50):
            try:
                return actor.remote()
            except ValueError:  # the name is still held by the hub that was lost
                if attempt == 49:
                    raise
                await anyio.sleep(0.2)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _live_hub(self, ray: Any, lost: Any) -> Any:
        """The hub to use after ``lost`` failed a call: it again if a health check
        passes, else a new one (made once, shared by every run that noticed)."""
        assert self._lock is not None and self._hub is not None
        async with self._lock:
            job, current = self._hub
            if current is not lost:
                return current  # another run replaced it already
            try:
                with anyio.fail_after(HUB_CHECK):
                    await _wait(ray, current.ping.remote())
                return current
            except (TimeoutError, ray.exceptions.RayError):
                pass
            with contextlib.suppress(ray.exceptions.RayError, ValueError):
                ray.kill(current, no_restart=True)
            self._hub = (job, await self._new_hub(ray))
            return self._hub[1]

    def _current_hub(self) -> Any:
        assert self._hub is not None
        return self._hub[1]

    def close(self) -> None:
        """Shut down the local Ray this runner started, if it started one."""
        if self._started_ray:
            _import_ray().shutdown()
            self._started_ray = False
        self._hub = None

    async def _base_bundle(self, ray: Any, local: LocalWorktree) -> list[Any]:
        """The objects holding the history up to ``local.head``: a chain of bundles per
        repository, each with the commits since the one before (a new wave's base adds
        only the commits merged since the last wave's), shared by every agent."""
        repo = open_repository(local.worktree)
        key = (str(ray.get_runtime_context().get_job_id()), str(common_dir(repo)))
        assert self._lock is not None
        async with self._lock:
            chain = self._bases.setdefault(key, [])
            tips = [tip for tip, _ in chain]
            if local.head in tips:
                return [ref for _, ref in chain[: tips.index(local.head) + 1]]
            known: list[str] = []
            if chain and repo.descendant_of(local.head, chain[-1][0]):
                known = [chain[-1][0]]
            else:
                chain.clear()  # history rewritten (or the first wave): start over whole
            refs = [f"refs/heads/{local.branch}"]
            data = await anyio.to_thread.run_sync(lambda: bundle(local.worktree, refs, known=known))
            if data is None and not known:
                raise RunnerError(f"the branch {local.branch} has no commits to send")
            if data is not None:
                chain.append((local.head, await anyio.to_thread.run_sync(ray.put, data)))
                self.bundled_bytes += len(data)
            self._bases.move_to_end(key)
            while len(self._bases) > _BASE_CACHE:
                self._bases.popitem(last=False)
            return [ref for _, ref in chain]

    # -- one run ---------------------------------------------------------------------

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the wrapped runner for ``request`` on Ray; see the module docstring."""
        started = anyio.current_time()
        emitter = Emitter(emit)
        if request.stop.reason is not None:
            return _stopped_before(request)
        local = await anyio.to_thread.run_sync(LocalWorktree.open, request)
        ray = await self._connect()
        base = await self._base_bundle(ray, local)
        extra = None
        if local.ref_value is not None:  # an earlier dispatch's checkpoints stay reachable
            extra = await anyio.to_thread.run_sync(
                lambda: bundle(local.worktree, [local.ref], known=[local.head])
            )
        job = self._job(request, local)
        run_id = secrets.token_hex(8)
        task = self._remote.options(**self._placement()).remote(
            job, base, extra, self._current_hub(), run_id
        )
        stop = _Stop(started=anyio.Event())
        settled = _Settled()
        try:
            await self._supervise(ray, request, task, run_id, local, emitter, stop, settled)
        finally:
            with anyio.CancelScope(shield=True):
                if not settled.done:  # outer cancellation: end the remote agent, then go on
                    await self._end(ray, task, run_id, "the coordinator was cancelled")
                with contextlib.suppress(ray.exceptions.RayError):
                    self._current_hub().drop.remote(run_id)
        return await self._result(ray, request, local, emitter, stop, settled, started)

    def _placement(self) -> dict[str, Any]:
        """The Ray task options that place one agent: resources, labels, strategy."""
        options: dict[str, Any] = {"num_cpus": self.num_cpus, "max_retries": 0}
        if self.num_gpus:
            options["num_gpus"] = self.num_gpus
        if self.memory is not None:
            options["memory"] = self.memory
        if self.resources:
            options["resources"] = dict(self.resources)
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        if self.prefer_labels:  # try the preferred nodes first, then any the labels allow
            options["label_selector"] = {**self.labels, **self.prefer_labels}
            options["fallback_strategy"] = [{"label_selector": dict(self.labels)}]
        elif self.labels:
            options["label_selector"] = dict(self.labels)
        if self.strategy != "DEFAULT":
            options["scheduling_strategy"] = self.strategy
        return options

    def _job(self, request: AgentRequest, local: LocalWorktree) -> Job:
        spec = self.inner if isinstance(self.inner, RunnerSpec) else None
        return Job(
            task_id=request.task_id,
            prompt=request.prompt,
            session=request.session or "session",
            wave=request.wave,
            max_turns=request.max_turns,
            env=dict(request.env),
            branch=local.branch,
            head=local.head,
            checkpoint_ref=local.ref,
            checkpoint=local.ref_value,
            subdir=local.subdir,
            transcript_name=request.transcript_path.name if request.transcript_path else None,
            inner=encode_spec(spec) if spec is not None else None,
            factory=None if spec is not None else self.inner,
            identity=local.identity,
            checkpoint_every=self.checkpoint_every,
            local_root=str(local.worktree),
            scratch_dir=self.scratch_dir,
            hub_name=self._hub_name,
        )

    async def _supervise(
        self,
        ray: Any,
        request: AgentRequest,
        task: Any,
        run_id: str,
        local: LocalWorktree,
        emitter: Emitter,
        stop: _Stop,
        settled: _Settled,
    ) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump, ray, run_id, local, emitter, stop)
            watch = anyio.CancelScope()
            group.start_soon(self._watch, ray, request, task, run_id, stop, watch)
            try:
                settled.outcome = await _wait(ray, task)
            except ray.exceptions.RayError as exc:
                settled.error = exc
            settled.done = True
            watch.cancel()
            with contextlib.suppress(ray.exceptions.RayError):
                self._current_hub().close.remote(run_id)

    async def _watch(
        self,
        ray: Any,
        request: AgentRequest,
        task: Any,
        run_id: str,
        stop: _Stop,
        scope: anyio.CancelScope,
    ) -> None:
        """Stop the agent on the coordinator's signal, on its time limit (counted from
        when it started on a worker, not from when it was queued), or when no worker
        took it within ``queue_timeout``."""
        assert stop.started is not None
        with scope:
            clock = anyio.CancelScope()
            async with anyio.create_task_group() as group:

                async def limits() -> None:
                    assert stop.started is not None
                    with anyio.move_on_after(self.queue_timeout or float("inf")):
                        await stop.started.wait()
                    if not stop.started.is_set():
                        stop.kind = "unplaced"
                        stop.reason = (
                            f"no Ray node took the agent within {self.queue_timeout:g} s "
                            f"(it asks for {self._asks()})"
                        )
                        clock.cancel()
                        return
                    if request.time_limit is not None:
                        clock.deadline = anyio.current_time() + request.time_limit

                group.start_soon(limits)
                with clock:
                    stop.reason = await request.stop.wait()
                    stop.kind = "cancelled"
                group.cancel_scope.cancel()
            if not stop.kind:
                stop.kind, stop.reason = "timed_out", "time limit"
            if stop.kind == "unplaced":
                ray.cancel(task, force=True)
                return
            await self._signal_stop(ray, run_id, stop.reason)
            await anyio.sleep(self.stop_grace)
            stop.forced = True
            ray.cancel(task, force=True)

    def _asks(self) -> str:
        asks = [f"num_cpus={self.num_cpus:g}"]
        if self.num_gpus:
            asks.append(f"num_gpus={self.num_gpus:g}")
        asks += [f"{name}={amount:g}" for name, amount in self.resources.items()]
        asks += [f"label {key}={value}" for key, value in self.labels.items()]
        return ", ".join(asks)

    async def _signal_stop(self, ray: Any, run_id: str, reason: str) -> None:
        """Raise the run's stop flag on the hub, on a new hub if this one is lost."""
        hub = self._current_hub()
        try:
            await _wait(ray, hub.stop.remote(run_id, reason))
        except ray.exceptions.RayError:
            hub = await self._live_hub(ray, hub)
            with contextlib.suppress(ray.exceptions.RayError):
                await _wait(ray, hub.stop.remote(run_id, reason))

    async def _pump(
        self, ray: Any, run_id: str, local: LocalWorktree, emitter: Emitter, stop: _Stop
    ) -> None:
        """Hand the worker's messages on, in order, until the run is closed. A lost hub
        is replaced and polled again (the worker starts its messages over there, and the
        stop flag is raised again if it was); the task's own result still brings the
        agent's final state."""
        hub = self._current_hub()
        while True:
            try:
                messages, closed = await _wait(ray, hub.take.remote(run_id, self.poll))
            except ray.exceptions.RayError:
                hub = await self._live_hub(ray, hub)
                if stop.kind in ("cancelled", "timed_out"):
                    with contextlib.suppress(ray.exceptions.RayError):
                        hub.stop.remote(run_id, stop.reason)
                continue
            for kind, payload in messages:
                if kind == "event":
                    await emitter(decode_event(payload))
                elif kind == "checkpoint":
                    await anyio.to_thread.run_sync(local.apply, payload)
                elif kind == "started" and stop.started is not None:
                    stop.node = str(payload.get("node", ""))
                    if not stop.started.is_set():
                        stop.started_at = anyio.current_time()
                        stop.started.set()
            if closed:
                return

    async def _end(self, ray: Any, task: Any, run_id: str, reason: str) -> None:
        """Stop the remote agent: the stop flag, then force after ``stop_grace``."""
        await self._signal_stop(ray, run_id, reason)
        with anyio.move_on_after(self.stop_grace):
            with contextlib.suppress(ray.exceptions.RayError):  # it ended; how no longer matters
                await _wait(ray, task)
            return
        ray.cancel(task, force=True)

    async def _result(
        self,
        ray: Any,
        request: AgentRequest,
        local: LocalWorktree,
        emitter: Emitter,
        stop: _Stop,
        settled: _Settled,
        started: float,
    ) -> AgentResult:
        outcome = settled.outcome
        if stop.kind == "unplaced":
            raise RunnerError(f"task {request.task_id!r}: {stop.reason}")
        if outcome is not None and outcome.setup_error:
            raise RunnerError(
                f"task {request.task_id!r}: cannot start the agent on Ray: {outcome.setup_error}"
            )
        if outcome is not None and outcome.runner_error:
            raise RunnerError(outcome.runner_error)
        if outcome is not None and outcome.final is not None:
            await anyio.to_thread.run_sync(local.apply, outcome.final)
        if outcome is not None and outcome.transcripts and request.transcript_path is not None:
            await anyio.to_thread.run_sync(_write_transcripts, request.transcript_path, outcome)
        remote = (outcome.result if outcome is not None else None) or {}
        counter = emitter.counter
        fields: dict[str, Any] = {
            "final_text": remote.get("final_text", ""),
            "exit_code": remote.get("exit_code"),
            "is_error": bool(remote.get("is_error", True)),
            "timed_out": bool(remote.get("timed_out", False)),
            "cancelled": bool(remote.get("cancelled", False)),
            "stop_reason": str(remote.get("stop_reason", "")),
            "stderr_tail": str(remote.get("stderr_tail", "")),
        }
        if stop.kind:
            fields.update(
                exit_code=None,
                is_error=True,
                timed_out=stop.kind == "timed_out",
                cancelled=stop.kind == "cancelled",
                stop_reason=stop.reason,
            )
        elif settled.error is not None:
            fields.update(
                exit_code=None,
                is_error=True,
                cancelled=True,
                stop_reason=await anyio.to_thread.run_sync(_lost_reason, ray, stop, settled.error),
                stderr_tail=str(settled.error)[-8000:],
            )
        elif outcome is not None and outcome.crash:
            fields.update(is_error=True, stderr_tail=outcome.crash)
        if not fields["final_text"] and counter.final is not None:
            fields["final_text"] = counter.final.text
        return AgentResult(
            task_id=request.task_id,
            turns=counter.turns,
            tool_calls=counter.tool_calls,
            cost_usd=counter.cost_usd,
            transcript_path=request.transcript_path,
            duration_s=anyio.current_time() - (stop.started_at or started),
            queued_s=(stop.started_at or anyio.current_time()) - started,
            **fields,
        )


def _lost_reason(ray: Any, stop: _Stop, error: BaseException) -> str:
    """Why the remote task ended without a result: its node was lost, or its worker died."""
    first = str(error).strip().splitlines()
    detail = f"{type(error).__name__}" + (f": {first[0][:300]}" if first else "")
    lost = isinstance(error, ray.exceptions.NodeDiedError)
    if not lost and stop.node:
        alive = {node.get("NodeID"): node.get("Alive") for node in ray.nodes()}
        lost = not alive.get(stop.node, False)
    if lost:
        where = f" ({stop.node[:12]})" if stop.node else ""
        return (
            f"node lost: the Ray node running the agent{where} left the cluster; its "
            f"mirrored checkpoints are kept ({detail})"
        )
    return f"the Ray worker died ({detail})"


def _json_table(runner: str, key: str, raw: str | None, kind: type[Any]) -> dict[str, Any]:
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


async def _wait(ray: Any, ref: Any) -> Any:
    """The value of a Ray object, awaited without blocking the event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): wait in a thread
        return await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
    return await asyncio.wrap_future(ref.future())


def _stopped_before(request: AgentRequest) -> AgentResult:
    return AgentResult(
        task_id=request.task_id,
        is_error=True,
        cancelled=True,
        stop_reason=request.stop.reason or "stopped",
        transcript_path=request.transcript_path,
    )


def _write_transcripts(transcript: Path, outcome: WorkerOutcome) -> None:
    transcript.parent.mkdir(parents=True, exist_ok=True)
    for name, data in (outcome.transcripts or {}).items():
        (transcript.parent / Path(name).name).write_bytes(data)


def _runtime_env(name: str, raw: str | None) -> dict[str, Any] | None:
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
