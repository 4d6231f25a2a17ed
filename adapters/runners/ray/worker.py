"""The remote half of the ray runner: what one Ray task does on a worker.

Duties of :func:`run_remote`:

1. Clone the coordinator's bundles into a temporary repository and check out the
   agent's branch at the tip it had on the coordinator.
2. Rebuild the wrapped runner (from its spec, or a picklable factory) and run it there,
   with the workspace, transcript and prompt file inside the temporary directory.
3. Send every event to the hub as it happens; after each successful edit (and every
   ``checkpoint_every`` seconds when files changed) take a shadow checkpoint
   (``Checkpointer``, TREE mode) and send it as a bundle *before* the edit's result,
   so the coordinator's copy holds the edit when it sees the event.
4. Obey the hub's stop flag (the wrapped runner ends its agent and returns). The agent's
   supervisor watches this worker process and ends the agent when the worker dies
   outright (SIGKILL, the OOM killer): nothing is left running unseen on the worker.
5. At the end take a last checkpoint (a ``wip`` one when the stop was not clean) and
   return the final state, a bundle of everything since the agent's start and the
   transcript files. A failure to set up is returned as ``setup_error`` (the agent never
   started).

The hub is a convenience for live events, never a dependency of the agent: a worker
whose hub is lost keeps its agent running, looks for the hub's successor under the same
name, and starts its messages over there (numbered from 0, with a whole checkpoint
first); the task's own result carries the final state whole whatever the hub saw.
"""

from __future__ import annotations

import contextlib
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from seawall.adapters.runners.ray.git import bundle, commit_tree, init_clone
from seawall.adapters.runners.ray.scope import WorkerScope, unpack_scope
from seawall.adapters.runners.ray.wire import (
    CheckpointNote,
    Job,
    WorkerOutcome,
    decode_spec,
    encode_event,
    relocate,
)
from seawall.codec import JsonObject
from seawall.errors import RunnerError, SeawallError
from seawall.events import Event, ToolCall, ToolResult, edited_paths
from seawall.git.checkpoints import Checkpointer, CheckpointMode
from seawall.runner import AgentRequest, AgentResult, AgentRunner, build_runner
from seawall.sandbox.launch import agents_end_with_this_process

__all__ = ["STOP_POLL", "run_remote"]

STOP_POLL = 1.0
"""Seconds one long poll of the hub's stop flag waits."""

HUB_RETRY = 0.5
"""Seconds between looks for a lost hub's successor."""

_MAX_TRANSCRIPT = 64 * 1024 * 1024


def run_remote(
    job: Job, base_chain: list[Any], extra_bundle: bytes | None, hub: Any, run_id: str
) -> WorkerOutcome:
    """Run one agent on this worker; see the module docstring. ``base_chain`` is the
    object refs of the history bundles, oldest first (each builds on the one before)."""
    import ray

    bundles: list[bytes] = list(ray.get(base_chain))
    if extra_bundle is not None:
        bundles.append(extra_bundle)
    if job.scratch_dir:
        Path(job.scratch_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="seawall-ray-", dir=job.scratch_dir) as scratch:
        root = Path(scratch) / "repo"
        try:
            init_clone(
                root,
                bundles,
                gitdir=Path(scratch) / "git",
                branch=job.branch,
                head=job.head,
                checkpoint_ref=job.checkpoint_ref,
                checkpoint=job.checkpoint,
                identity=job.identity,
            )
            workspace = root / job.subdir if job.subdir else root
            workspace.mkdir(parents=True, exist_ok=True)
            scope = unpack_scope(
                job.scope,
                task_id=job.task_id,
                local_root=job.local_root,
                clone=root,
                workspace=workspace,
                state_root=Path(scratch) / "state",
            )
            inner = _inner(job)
        except (SeawallError, OSError) as exc:
            return WorkerOutcome(setup_error=f"{type(exc).__name__}: {exc}")
        remote = _Remote(job, root, Path(scratch) / "agent", hub, run_id, Path(scratch) / "git")
        with agents_end_with_this_process():  # a worker killed outright takes its agent
            return anyio.run(remote.run, inner, workspace, scope)


def _inner(job: Job) -> AgentRunner:
    if job.inner is not None:
        return build_runner(decode_spec(job.inner))
    factory: Callable[[], AgentRunner] = job.factory
    runner = factory()
    if not isinstance(runner, AgentRunner):
        raise RunnerError(f"the ray runner's factory returned {runner!r}, not an AgentRunner")
    return runner


class _Remote:
    """One agent run on the worker: events out, stop in, checkpoints as bundles."""

    def __init__(
        self, job: Job, root: Path, scratch: Path, hub: Any, run_id: str, gitdir: Path
    ) -> None:
        self.job = job
        self.root = root
        # git is read in the clone's git directory itself, never found through
        # ``root/.git``: that file is in the agent's work tree, which it may rewrite
        self.gitdir = gitdir
        self.scratch = scratch
        self.hub = hub
        self.run_id = run_id
        self.checkpointer = Checkpointer(
            root,
            session_id=job.session,
            task_id=job.task_id,
            base=job.head,
            mode=CheckpointMode.TREE,
            dispatch=f"w{job.wave}",  # the session's name for a dispatch (seawall.session)
        )
        self.known: set[str] = {job.head, *([job.checkpoint] if job.checkpoint else [])}
        self.sent_tree = commit_tree(root, job.head)
        self.pending: dict[str, tuple[str, ...]] = {}
        self.sent = 0
        self.puts: list[Any] = []  # hub calls not yet known to be done
        self.base_known = frozenset(self.known)  # what the coordinator had before the start
        self.roots = tuple(dict.fromkeys((str(root.resolve()), str(root))))
        self.lock = anyio.Lock()  # one checkpoint at a time: each bundle builds on the last

    def put(self, kind: str, payload: Any) -> None:
        """Send one numbered message to the hub (the hub restores their order)."""
        self.puts.append(self.hub.put.remote(self.run_id, self.sent, (kind, payload)))
        self.sent += 1
        if len(self.puts) >= 256:  # forget the calls that are done
            import ray

            _done, self.puts = ray.wait(self.puts, num_returns=len(self.puts), timeout=0)

    def started(self) -> None:
        """Tell the coordinator the agent starts now, here (its time limit starts now)."""
        import os

        import ray

        node = ray.get_runtime_context().get_node_id()
        self.put("started", {"node": node, "pid": os.getpid()})

    async def run(self, inner: AgentRunner, workspace: Path, scope: WorkerScope) -> WorkerOutcome:
        """Run the agent in ``workspace`` under ``scope``'s sandbox and manifest."""
        self.started()
        self.scratch.mkdir(parents=True, exist_ok=True)
        transcript = self.scratch / self.job.transcript_name if self.job.transcript_name else None
        request = AgentRequest(
            task_id=self.job.task_id,
            prompt=self.job.prompt,
            workspace=workspace,
            session=self.job.session,
            wave=self.job.wave,
            max_turns=self.job.max_turns,
            env=self.job.env,
            transcript_path=transcript,
            sandbox=scope.sandbox,
            manifest=scope.manifest,
            manifest_sha256=scope.manifest_sha256,
            model=self.job.model,
            conversation=self.job.conversation,
        )
        result: AgentResult | None = None
        crash = runner_error = ""
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch_stop, request)
            if self.job.checkpoint_every > 0:
                group.start_soon(self._every, self.job.checkpoint_every)
            try:
                result = await inner.run(request, self._emit)
            except RunnerError as exc:
                runner_error = str(exc)
            except Exception:  # noqa: BLE001 - a wrapped runner that breaks is the agent's outcome
                crash = traceback.format_exc()[-8000:]
            group.cancel_scope.cancel()
        async with self.lock:
            await self.checkpointer.acheckpoint()
            if result is None or result.interrupted:
                reason = (result.stop_reason if result else "") or runner_error or "crashed"
                await self.checkpointer.awip(reason)
            # the final state travels whole: the hub may have lost earlier notes
            self.known = set(self.base_known)
            final = await anyio.to_thread.run_sync(self._note)
        if self.puts:  # every message is in the hub before the task ends, if it is there
            import ray

            with contextlib.suppress(ray.exceptions.RayError):
                await anyio.to_thread.run_sync(ray.get, self.puts)
        return WorkerOutcome(
            result=None if result is None else _result_dict(result),
            final=final,
            transcripts=_transcripts(self.scratch, self.roots, self.job.local_root),
            runner_error=runner_error,
            crash=crash,
        )

    async def _emit(self, event: Event) -> None:
        if type(event) is ToolCall:
            paths = edited_paths(event)
            if paths:
                self.pending[event.call_id] = paths
        elif type(event) is ToolResult:
            paths = self.pending.pop(event.call_id, ())
            if paths and not event.is_error:
                await self._checkpoint()
        self.put("event", relocate(encode_event(event), self.roots, self.job.local_root))

    async def _checkpoint(self) -> None:
        async with self.lock:
            if await self.checkpointer.acheckpoint() is not None:
                self.put("checkpoint", await anyio.to_thread.run_sync(self._note))

    async def _every(self, seconds: float) -> None:
        while True:
            await anyio.sleep(seconds)
            await self._checkpoint()

    async def _watch_stop(self, request: AgentRequest) -> None:
        import ray

        while True:
            try:
                reason = await anyio.to_thread.run_sync(
                    ray.get,
                    self.hub.wait_stop.remote(self.run_id, STOP_POLL),
                    abandon_on_cancel=True,
                )
            except ray.exceptions.RayError:
                await self._find_hub()
                continue
            if reason is not None:
                request.stop.stop(str(reason))
                return

    async def _find_hub(self) -> None:
        """The lost hub's successor, once the coordinator made it; messages start over."""
        import ray

        while True:
            await anyio.sleep(HUB_RETRY)
            try:
                hub: Any = await anyio.to_thread.run_sync(ray.get_actor, self.job.hub_name)
                await anyio.to_thread.run_sync(ray.get, hub.ping.remote())
            except (ValueError, ray.exceptions.RayError):
                continue  # not made yet (a name that is not there is a ValueError)
            async with self.lock:
                self.hub, self.sent, self.puts = hub, 0, []
                self.known = set(self.base_known)
                self.started()
                self.put("checkpoint", await anyio.to_thread.run_sync(self._note))
            return

    def _note(self) -> CheckpointNote:
        """The agent's state now, with a bundle of the commits not yet sent."""
        branch_tip = str(self._head())
        checkpoint = self.checkpointer.tip
        refs = [f"refs/heads/{self.job.branch}"]
        if checkpoint is not None:
            refs.append(self.checkpointer.ref)
        data = bundle(self.gitdir, refs, known=self.known)
        self.known.update(c for c in (branch_tip, checkpoint) if c)
        tree = commit_tree(self.gitdir, checkpoint) if checkpoint else self.sent_tree
        return CheckpointNote(branch_tip=branch_tip, checkpoint=checkpoint, tree=tree, bundle=data)

    def _head(self) -> str:
        from seawall.git.repo import run_git

        done = run_git(["rev-parse", f"refs/heads/{self.job.branch}"], cwd=self.gitdir)
        return done.stdout.strip()


def _result_dict(result: AgentResult) -> JsonObject:
    data = asdict(result)
    data.pop("transcript_path", None)
    return data


def _transcripts(folder: Path, roots: tuple[str, ...], local_root: str) -> dict[str, bytes]:
    """The files the wrapped runner kept next to its transcript (transcript, prompt),
    with this worker's clone paths rewritten to the coordinator's worktree, as in events."""
    files: dict[str, bytes] = {}
    if not folder.is_dir():
        return files
    olds = [root.encode() for root in sorted(roots, key=len, reverse=True)]
    new = local_root.encode()
    for path in sorted(folder.iterdir()):
        if path.is_file():
            with path.open("rb") as handle:
                data = handle.read(_MAX_TRANSCRIPT)
            for old in olds:
                data = data.replace(old, new)
            files[path.name] = data
    return files
