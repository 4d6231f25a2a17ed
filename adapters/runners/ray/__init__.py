"""The ``ray`` runner: any other runner, with each agent run as a task on a Ray cluster.

Where each part lives: ``runner`` (the ``RayRunner`` itself: one ``run()`` per agent),
``link`` (the connection, the hub actor, the history bundles), ``hub`` (per-run
mailboxes and stop flags), ``worker`` (what runs on the cluster's node), ``wire`` (the
plain values that travel), ``git`` (bundles out and back), ``local`` (the agent's
workspace on the coordinator's machine), ``scope`` (the scope and sandbox re-rooted to
the worker's clone), ``options`` (placement and runtime environment), ``outcome`` (how
a remote run ends) and ``orphans`` (remote agents a dead coordinator left running).
Ray itself is imported only when a runner first connects (the ``ray`` extra).
"""

from seawall.adapters.runners.ray.runner import RayRunner, parse_memory

__all__ = ["RayRunner", "parse_memory"]
