"""The ``ray`` runner: any other runner, with each agent run as a task on a Ray cluster.

For a wave with more agents than one machine can build and test at once. Per ``run()``:

1. The agent's branch travels as git bundles through Ray's object store: a chain per
   repository, the first with the history up to the first wave's base, each later one
   with only the commits since (shared by the agents of a wave), plus a small extra
   bundle for an earlier checkpoint ref. No shared filesystem or git server.
2. A Ray task (placed by ``seawall.adapters.runners.ray.options.Placement``) clones them on some
   worker, checks out the agent's branch, rebuilds the wrapped runner and runs it there
   under the same sandbox and with the wave's scope manifest, both re-rooted to the
   clone (``seawall.adapters.runners.ray.scope``; the worker's side is
   ``seawall.adapters.runners.ray.worker``).
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

import contextlib
import secrets
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

import anyio
import anyio.to_thread

from seawall.adapters.runners.ray.git import bundle
from seawall.adapters.runners.ray.link import CONNECT_TIMEOUT, RayLink, wait_ref
from seawall.adapters.runners.ray.local import LocalWorktree
from seawall.adapters.runners.ray.options import Placement, parse_memory, runner_arguments
from seawall.adapters.runners.ray.orphans import stop_remote_orphans
from seawall.adapters.runners.ray.outcome import Settled, StopState, remote_result, stopped_before
from seawall.adapters.runners.ray.scope import pack_scope
from seawall.adapters.runners.ray.wire import Job, decode_event, encode_spec
from seawall.codec import JsonView
from seawall.errors import ConfigurationError, RunnerError, SeawallError
from seawall.model import RunnerSpec
from seawall.runner import (
    AgentRequest,
    AgentResult,
    AgentRunner,
    EmitFn,
    Emitter,
    build_runner,
)

__all__ = ["RayRunner", "parse_memory"]


class RayRunner(AgentRunner):
    """Runs the wrapped runner for each agent as a Ray task. Plan table::

        [runners.remote]
        kind = "ray"
        argv = ["claude-wrapper"]          # argv, model and env go to the wrapped runner
        options = { inner = "command", "inner.output" = "stream-json",
                    address = "ray://head:10001", num_cpus = "2", memory = "4GiB",
                    runtime_env = '{"py_modules": ["dist/seawall.whl"]}', stop_grace = "10" }

    ``inner`` is a ``RunnerSpec`` (rebuilt on the worker by its kind) or a picklable
    factory returning an ``AgentRunner``. ``address=None`` connects to the Ray already
    initialised in this process, or starts a local one (``init_options`` go to
    ``ray.init``); ``"auto"`` or ``"ray://host:10001"`` joins a cluster. ``scratch_dir``
    is where workers make their temporary clones (a path on the workers; default: their
    temporary directory). ``connect_timeout`` bounds ``ray.init`` joining a cluster
    (seconds, default 60): a cluster that cannot be reached in time, or at all, is a
    ``RunnerError`` naming the address, so the session halts with exit 8. ``poll`` is how
    long one wait for the worker's messages lasts.
    The placement options (``num_cpus`` to ``runtime_env``) are kept as ``placement``.
    """

    starts_processes: ClassVar[bool] = True  # on the workers, under the same sandbox

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
        runtime_env: JsonView | None = None,
        init_options: JsonView | None = None,
        stop_grace: float = 10.0,
        checkpoint_every: float = 30.0,
        scratch_dir: str | None = None,
        poll: float = 0.5,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        if isinstance(inner, RunnerSpec):
            if inner.kind == "ray":
                raise ConfigurationError("the ray runner cannot wrap another ray runner")
        elif not callable(inner):
            raise ConfigurationError(
                "the ray runner wraps a RunnerSpec or a factory returning an AgentRunner, "
                f"not {inner!r}"
            )
        self.placement = Placement(
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            memory=memory,
            resources=dict(resources or {}),
            labels=dict(labels or {}),
            prefer_labels=dict(prefer_labels or {}),
            strategy=strategy,
            queue_timeout=queue_timeout,
            runtime_env=dict(runtime_env) if runtime_env is not None else None,
        )
        if stop_grace <= 0 or poll <= 0 or checkpoint_every < 0 or connect_timeout <= 0:
            raise ConfigurationError(
                "the ray runner's stop_grace, poll and connect_timeout must be positive"
            )
        self.inner = inner
        self.address = address
        self.stop_grace = stop_grace
        self.checkpoint_every = checkpoint_every
        self.scratch_dir = scratch_dir
        self.poll = poll
        self.link = RayLink(
            address,
            init_options or {},
            self.placement.job_env(),
            connect_timeout=connect_timeout,
        )

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        """Build from ``[runners.NAME]``: ``options.inner`` is the wrapped runner's kind,
        ``inner.KEY`` options are its options; ``argv``, ``model`` and ``env`` are its."""
        inner, arguments = runner_arguments(spec)
        try:
            return cls(inner, **arguments)
        except ConfigurationError as exc:
            raise ConfigurationError(f"runner {spec.name!r}: {exc}") from None

    @property
    def provider(self) -> str:
        """The wrapped runner's provider ("" for a factory, known only on the worker)."""
        if not isinstance(self.inner, RunnerSpec):
            return ""
        try:
            return build_runner(self.inner).provider
        except SeawallError:
            return ""

    @property
    def continues_conversations(self) -> bool:
        """The wrapped runner's (False for a factory): the worker's CLI continues the
        conversation when its state is on that node; elsewhere it finds none, and the
        agent starts afresh (``seawall.session.continuation``)."""
        if not isinstance(self.inner, RunnerSpec):
            return False
        try:
            return build_runner(self.inner).continues_conversations
        except SeawallError:
            return False

    @property
    def barrier(self) -> str:
        if not isinstance(self.inner, RunnerSpec):
            return "the wrapped runner's, on the worker (the sandbox when it starts processes)"
        try:
            inner = build_runner(self.inner).barrier
        except SeawallError:
            inner = f"the {self.inner.kind} runner's"
        return f"on the worker: {inner}; the OS sandbox where the worker's kernel has Landlock"

    def close(self) -> None:
        """Shut down the local Ray this runner started, if it started one."""
        self.link.close()

    async def stop_remote_orphans(self, session: str, task_id: str) -> list[str]:
        """Stop the task's agents a dead coordinator left on the cluster's nodes (see
        ``seawall.adapters.runners.ray.orphans``)."""
        return await stop_remote_orphans(self.link, self.placement, session, task_id)

    # -- one run ---------------------------------------------------------------------

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the wrapped runner for ``request`` on Ray; see the module docstring."""
        started = anyio.current_time()
        emitter = Emitter(emit)
        if request.stop.reason is not None:
            return stopped_before(request)
        local = await anyio.to_thread.run_sync(LocalWorktree.open, request)
        ray = await self.link.connect()
        base = await self.link.base_bundles(ray, local)
        extra = None
        if local.ref_value is not None:  # an earlier dispatch's checkpoints stay reachable
            extra = await anyio.to_thread.run_sync(
                lambda: bundle(local.worktree, [local.ref], known=[local.head])
            )
        job = self._job(request, local)
        run_id = secrets.token_hex(8)
        try:
            options = {**self.placement.task_options(), "name": _task_name(job)}
            task = self.link.remote.options(**options).remote(
                job, base, extra, self.link.hub, run_id
            )
        except (ValueError, TypeError) as exc:  # Ray refuses the options: nothing started
            raise RunnerError(
                f"task {request.task_id!r}: Ray refused the agent's task options: {exc}"
            ) from exc
        stop = StopState(started=anyio.Event())
        settled = Settled()
        try:
            await self._supervise(ray, request, task, run_id, local, emitter, stop, settled)
        finally:
            with anyio.CancelScope(shield=True):
                if not settled.done:  # outer cancellation: end the remote agent, then go on
                    await self._end(ray, task, run_id, "the coordinator was cancelled")
                with contextlib.suppress(ray.exceptions.RayError):
                    self.link.hub.drop.remote(run_id)
        return await remote_result(ray, request, local, emitter, stop, settled, started)

    def _job(self, request: AgentRequest, local: LocalWorktree) -> Job:
        spec = self.inner if isinstance(self.inner, RunnerSpec) else None
        return Job(
            task_id=request.task_id,
            prompt=request.prompt,
            session=request.session or "session",
            wave=request.wave,
            max_turns=request.max_turns,
            model=request.model,
            conversation=request.conversation,
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
            hub_name=self.link.hub_name,
            scope=pack_scope(request),
        )

    async def _supervise(
        self,
        ray: Any,
        request: AgentRequest,
        task: Any,
        run_id: str,
        local: LocalWorktree,
        emitter: Emitter,
        stop: StopState,
        settled: Settled,
    ) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump, ray, run_id, local, emitter, stop)
            watch = anyio.CancelScope()
            group.start_soon(self._watch, ray, request, task, run_id, stop, watch)
            try:
                settled.outcome = await wait_ref(ray, task)
            except ray.exceptions.RayError as exc:
                settled.error = exc
            settled.done = True
            watch.cancel()
            with contextlib.suppress(ray.exceptions.RayError):
                self.link.hub.close.remote(run_id)

    async def _watch(
        self,
        ray: Any,
        request: AgentRequest,
        task: Any,
        run_id: str,
        stop: StopState,
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
                    with anyio.move_on_after(self.placement.queue_timeout or float("inf")):
                        await stop.started.wait()
                    if not stop.started.is_set():
                        stop.kind = "unplaced"
                        stop.reason = (
                            f"no Ray node took the agent within {self.placement.queue_timeout:g} s "
                            f"(it asks for {self.placement.asks()})"
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

    async def _signal_stop(self, ray: Any, run_id: str, reason: str) -> None:
        """Raise the run's stop flag on the hub, on a new hub if this one is lost."""
        hub = self.link.hub
        try:
            await wait_ref(ray, hub.stop.remote(run_id, reason))
        except ray.exceptions.RayError:
            hub = await self.link.live_hub(ray, hub)
            with contextlib.suppress(ray.exceptions.RayError):
                await wait_ref(ray, hub.stop.remote(run_id, reason))

    async def _pump(
        self, ray: Any, run_id: str, local: LocalWorktree, emitter: Emitter, stop: StopState
    ) -> None:
        """Hand the worker's messages on, in order, until the run is closed. A lost hub
        is replaced and polled again (the worker starts its messages over there, and the
        stop flag is raised again if it was); the task's own result still brings the
        agent's final state."""
        hub = self.link.hub
        while True:
            try:
                messages, closed = await wait_ref(ray, hub.take.remote(run_id, self.poll))
            except ray.exceptions.RayError:
                hub = await self.link.live_hub(ray, hub)
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
                await wait_ref(ray, task)
            return
        ray.cancel(task, force=True)


def _task_name(job: Job) -> str:
    """The agent's Ray task name, as ``ray list tasks`` shows it."""
    return f"seawall:{job.session}:{job.task_id}:w{job.wave}"
