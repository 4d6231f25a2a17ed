"""Claims held by the host, built on labels: creating a label is atomic on every host.

A claim on ``key`` is the label ``claim:<key>`` whose description holds the claimant's
nonce. The first create wins; a second is refused (422 on GitHub, 409 on GitLab). When a
create's answer was lost and the retry is refused, reading the label's description back
tells whether the earlier, lost create was ours.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from seawall.errors import TrackerError

__all__ = ["claim_by_label", "claim_label", "new_nonce"]


def claim_label(key: str) -> str:
    return f"claim:{key}"


def new_nonce() -> str:
    return f"seawall claim {uuid.uuid4().hex}"


def claim_by_label(
    key: str,
    nonce: str,
    *,
    create: Callable[[str, str], object],
    read: Callable[[str], str],
    taken_status: int,
) -> bool:
    """Take the claim ``key``: True when the label is ours (now or from a lost answer)."""
    name = claim_label(key)
    try:
        create(name, nonce)
        return True
    except TrackerError as exc:
        if exc.status != taken_status:
            raise  # a transient fault: the caller lists/claims again before deciding
    return read(name) == nonce
