"""The coordinator's link to Ray: the connection, the hub actor, the history bundles.

One ``RayLink`` per ``RayRunner``. ``connect`` initialises Ray (or joins the Ray of this
process) and makes the hub and the remote function of the current Ray job. The hub is
pinned to the coordinator's node (node affinity), so it is lost only with the
coordinator's own node; ``live_hub`` health-checks it after a failed call and re-creates
it under the same name. ``base_bundles`` keeps, per repository, a chain of history
bundles in the object store: the first with the history up to the first wave's base,
each later one with only the commits since, shared by every agent of a wave.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import secrets
import threading
from collections import OrderedDict
from typing import Any

import anyio
import anyio.to_thread

from seawall.adapters.runners.ray.git import bundle
from seawall.adapters.runners.ray.hub import Hub
from seawall.adapters.runners.ray.local import LocalWorktree
from seawall.codec import JsonObject, JsonView
from seawall.errors import ConfigurationError, MissingExtraError, RunnerError, SeawallError
from seawall.git.repo import common_dir, open_repository

__all__ = [
    "CONNECT_TIMEOUT",
    "HUB_CHECK",
    "PROBE_WAIT",
    "RayLink",
    "import_ray",
    "reachable",
    "wait_ref",
]

HUB_CHECK = 5.0  # seconds a health check of the hub may take before it counts as lost
CONNECT_TIMEOUT = 60.0  # seconds ray.init may take to join a cluster (options.connect_timeout)
PROBE_WAIT = 10.0  # seconds a TCP connection to the cluster's address may take
_BASE_CACHE = 8  # repositories whose bundle chains stay in the object store
_JOIN = threading.Lock()  # one ray.init at a time, whichever runner's link asks


def import_ray() -> Any:
    """The ``ray`` module, or a ``MissingExtraError`` naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError(package="ray", extra="ray", purpose="the ray runner") from exc
    return ray


async def wait_ref(ray: Any, ref: Any) -> Any:
    """The value of a Ray object, awaited without blocking the event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): wait in a thread
        return await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
    return await asyncio.wrap_future(ref.future())


class RayLink:
    """Ray, the hub actor and the bundle chains of one runner (see the module docstring)."""

    def __init__(
        self,
        address: str | None,
        init_options: JsonView,
        job_env: JsonView | None = None,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.address = address
        self.connect_timeout = connect_timeout
        self._joining: concurrent.futures.Future[None] | None = None  # a ray.init running
        self.init_options = dict(init_options)
        self.job_env = dict(job_env or {})  # local py_modules / working_dir: at ray.init
        self.hub_name = f"seawall-hub-{secrets.token_hex(6)}"
        self.remote: Any = None
        self.bundled_bytes = 0  # bytes of history bundles put in the object store, in all
        self._lock: anyio.Lock | None = None
        self._started_ray = False
        self._hub: tuple[str, Any] | None = None
        self._bases: OrderedDict[tuple[str, str], list[tuple[str, Any]]] = OrderedDict()

    async def connect(self) -> Any:
        """Ray, initialised; the hub actor and the remote function of this Ray job."""
        ray = import_ray()
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if not ray.is_initialized():
                options = {"address": self.address, **self.init_options}
                if self.job_env:
                    options["runtime_env"] = {**self.job_env, **options.get("runtime_env", {})}
                await self._init(ray, options)
                self._started_ray = self.address is None
            elif self.job_env and not _job_ships_code(ray):
                raise ConfigurationError(
                    "the ray runner's runtime_env names local py_modules or a working_dir, "
                    "which Ray uploads only for a whole job, and Ray was initialised before "
                    "the runner without them: pass them to ray.init(runtime_env=...), or "
                    "let the runner initialise Ray"
                )
            job = str(ray.get_runtime_context().get_job_id())
            if self._hub is None or self._hub[0] != job:
                self._hub = (job, await self._new_hub(ray))
                self._bases.clear()
                from seawall.adapters.runners.ray.worker import run_remote

                self.remote = ray.remote(run_remote)
            return ray

    async def _init(self, ray: Any, options: JsonObject) -> None:
        """``ray.init``: a local Ray on the loop thread (Ray installs signal handlers
        there); a cluster off it, within ``connect_timeout`` seconds, after a TCP probe
        of its address. Any failure to reach the cluster is a ``RunnerError`` naming the
        address and the cause: the environment's failure, not an agent's."""
        address = self.address or os.environ.get("RAY_ADDRESS")
        if not address:
            ray.init(**options)
            return
        where = f"cannot reach the Ray cluster at {address}"
        await reachable(address)
        if self._joining is not None and not self._joining.done():
            raise RunnerError(
                f"{where}: no answer within {self.connect_timeout:g} s "
                "(options.connect_timeout) to an earlier attempt, which still waits"
            )
        joining: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._joining = joining

        def join() -> None:
            try:
                with _JOIN:  # another runner's link may have joined meanwhile
                    if not ray.is_initialized():
                        ray.init(**options)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting coordinator
                joining.set_exception(exc)
            else:
                joining.set_result(None)

        # a daemon thread: a cluster that never answers must not keep the process alive
        threading.Thread(target=join, name="seawall-ray-init", daemon=True).start()
        deadline = anyio.current_time() + self.connect_timeout
        while not joining.done():
            if anyio.current_time() >= deadline:
                raise RunnerError(
                    f"{where}: no answer within {self.connect_timeout:g} s "
                    "(options.connect_timeout)"
                )
            await anyio.sleep(0.05)
        try:
            joining.result()
        except SeawallError:
            raise
        except Exception as exc:  # ray.init fails in many ways; all mean "not reached"
            raise RunnerError(f"{where}: {type(exc).__name__}: {exc}") from exc

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
            num_cpus=0, max_concurrency=1000, name=self.hub_name, scheduling_strategy=here
        )
        for attempt in range(50):
            try:
                return actor.remote()
            except ValueError:  # the name is still held by the hub that was lost
                if attempt == 49:
                    raise
                await anyio.sleep(0.2)
        raise AssertionError("unreachable")  # pragma: no cover

    async def live_hub(self, ray: Any, lost: Any) -> Any:
        """The hub to use after ``lost`` failed a call: it again if a health check
        passes, else a new one (made once, shared by every run that noticed)."""
        assert self._lock is not None and self._hub is not None
        async with self._lock:
            job, current = self._hub
            if current is not lost:
                return current  # another run replaced it already
            try:
                with anyio.fail_after(HUB_CHECK):
                    await wait_ref(ray, current.ping.remote())
                return current
            except (TimeoutError, ray.exceptions.RayError):
                pass
            with contextlib.suppress(ray.exceptions.RayError, ValueError):
                ray.kill(current, no_restart=True)
            self._hub = (job, await self._new_hub(ray))
            return self._hub[1]

    @property
    def hub(self) -> Any:
        """The hub actor now (``connect`` made one)."""
        assert self._hub is not None
        return self._hub[1]

    def close(self) -> None:
        """Shut down the local Ray this link started, if it started one."""
        if self._started_ray:
            import_ray().shutdown()
            self._started_ray = False
        self._hub = None

    async def base_bundles(self, ray: Any, local: LocalWorktree) -> list[Any]:
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


def _job_ships_code(ray: Any) -> bool:
    """Whether the current Ray job was started with py_modules or a working_dir."""
    env = ray.get_runtime_context().runtime_env or {}
    return bool(env.get("py_modules") or env.get("working_dir"))


async def reachable(address: str | None) -> None:
    """A ``RunnerError`` at once when nothing listens at a cluster address (``ray.init``
    would retry for minutes); a local Ray or ``"auto"`` is not probed."""
    if not address or address == "auto" or address.startswith("local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # ray.init says what is wrong with it
    try:
        with anyio.fail_after(PROBE_WAIT):
            stream = await anyio.connect_tcp(host.strip("[]"), int(port))
    except (OSError, TimeoutError) as exc:
        raise RunnerError(
            f"cannot reach the Ray cluster at {address}: {type(exc).__name__}: {exc}"
        ) from exc
    await stream.aclose()
