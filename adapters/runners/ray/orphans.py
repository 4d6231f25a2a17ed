"""Remote agents a dead coordinator left running on a Ray cluster, found and stopped.

A coordinator killed outright does not always take its Ray tasks with it: a ``ray://``
client's job lives on for the client's reconnect grace period (30 s by default,
``RAY_CLIENT_RECONNECT_GRACE_PERIOD``), and a driver's death takes a moment to reach
every raylet. Its agents run on, unseen and spending, and a resume would start a second
copy. So, before a resume salvages and re-dispatches a task, ``stop_remote_orphans``
sends one small task to every live node (pinned there, asking for no CPU); each looks
on its machine for the processes of the session's agent for that task (every agent
carries ``SEAWALL_SESSION`` and ``SEAWALL_TASK_ID`` in its environment, on a worker as
locally) and stops their process groups, as the coordinator does for a local orphan.
The agent's supervisor, stopped, ends what the agent started outside its group; the
Ray worker that ran it then returns to nobody. Nothing remote writes into the
coordinator's copy once its hub is gone, so the mirrored checkpoints are the work to
salvage.
"""

from __future__ import annotations

import os
from typing import Any

import anyio

from seawall.adapters.runners.ray.link import PROBE_WAIT, RayLink, reachable, wait_ref
from seawall.adapters.runners.ray.options import Placement
from seawall.codec import JsonObject
from seawall.errors import RunnerError, SeawallError

__all__ = ["ORPHAN_WAIT", "PROBE_WAIT", "reap_here", "stop_remote_orphans"]

ORPHAN_WAIT = 60.0
"""Seconds the look on every node may take in all before the nodes that have not
answered are reported as unchecked."""


def reap_here(session: str, task_id: str) -> tuple[str, list[int]]:
    """On one node: stop the agents of ``task_id`` in ``session``; this node's id and
    the process groups that had a live member."""
    import ray

    from seawall.runtime.orphans import find_orphans, stop_orphans

    node = str(ray.get_runtime_context().get_node_id())
    groups = find_orphans(session, task_id)
    return node, sorted(stop_orphans(groups)) if groups else []


async def stop_remote_orphans(
    link: RayLink, placement: Placement, session: str, task_id: str
) -> list[str]:
    """Stop ``task_id``'s agents of ``session`` on every live node of ``link``'s
    cluster; a line per node where one was stopped. ``RunnerError`` when the cluster
    cannot be reached or a node does not answer within ``ORPHAN_WAIT`` seconds."""
    await reachable(link.address or os.environ.get("RAY_ADDRESS"))
    try:
        ray = await link.connect()
    except SeawallError:
        raise  # a plan that cannot work (a missing extra, bad options) is not a lost cluster
    except Exception as exc:  # ray.init fails in many ways; all mean "not reached"
        raise RunnerError(
            f"cannot reach the Ray cluster at {link.address or 'the local Ray'}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [node["NodeID"] for node in ray.nodes() if node.get("Alive")]
    reaper = ray.remote(reap_here)
    env = placement.task_options().get("runtime_env")
    extra: JsonObject = {"runtime_env": env} if env else {}
    refs = {
        node: reaper.options(
            num_cpus=0,
            max_retries=0,
            name=f"seawall-reap:{session}:{task_id}",
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
            **extra,
        ).remote(session, task_id)
        for node in nodes
    }
    answers: dict[str, list[int]] = {}
    failures: dict[str, str] = {}

    async def ask(node: str, ref: Any) -> None:
        try:
            _, groups = await wait_ref(ray, ref)
        except ray.exceptions.RayError as exc:
            failures[node] = f"{type(exc).__name__}: {str(exc)[:300]}"
        else:
            answers[node] = groups

    with anyio.move_on_after(ORPHAN_WAIT):
        async with anyio.create_task_group() as group:
            for node, ref in refs.items():
                group.start_soon(ask, node, ref)
    for node, ref in refs.items():
        if node not in answers and node not in failures:
            ray.cancel(ref, force=True)
            failures[node] = f"no answer within {ORPHAN_WAIT:g} s"
    stopped = [
        f"node {node[:12]}: stopped process groups {', '.join(map(str, groups))}"
        for node, groups in sorted(answers.items())
        if groups
    ]
    if failures:
        said = "; ".join(f"node {node[:12]}: {why}" for node, why in sorted(failures.items()))
        done = f"; on the others: {'; '.join(stopped) or 'none found'}" if answers else ""
        raise RunnerError(f"could not look for the agent on every Ray node ({said}){done}")
    return stopped
