"""Claims held by the host, for one filing attempt at a time, with a lease.

A claim names its holder (a token of one filing attempt) and when it expires. On
GitHub and GitLab a claim on ``key`` is a chain of labels ``claim:<key>:1``,
``claim:<key>:2``, ... whose descriptions read ``seawall claim <holder> until <UTC
time>``: creating a label is the one atomic write both hosts offer (the first create
wins; a second is refused, 422 on GitHub, 409 on GitLab), and a label cannot be
changed conditionally, so a claim moves on to a new label instead of being rewritten.

Taking a claim walks the chain from its first label: a label that does not exist is
created, and then the claim is the caller's; one that exists is read, and another
holder's unexpired claim ends the walk (the caller waits); an expired one, or the
caller's own (asking again renews it), is passed over to the next label. A create
whose answer was lost is found again by the walk, as the caller's own.

Releasing deletes the labels the last walk passed and the one it created, from the
first up. It is the holder's to do while its claim is valid, so nobody holds a later
label; each delete is sent once (a retried delete could remove a claim taken since).
A label left behind (a failed delete, a holder that died) has expired by the time
anyone else needs it; the next holder's walk passes it, and its release deletes it.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from seawall.errors import TrackerError

__all__ = [
    "CLAIM_TTL",
    "LabelClaims",
    "claim_label",
    "describe_claim",
    "new_holder",
    "read_claim",
]

#: How long ``claim(key)`` (the port's call, without a lease of its own) holds a claim.
CLAIM_TTL = 90.0
#: How many labels a walk may pass before it gives up (each was an expired claim).
_MAX_LINKS = 64
#: How often a refused label may turn out missing before the refusal is not a race.
_VANISHED = 3
_DESCRIPTION = re.compile(r"^seawall claim (?P<holder>\S+) until (?P<until>\S+)$")


def claim_label(key: str, link: int) -> str:
    return f"claim:{key}:{link}"


def new_holder() -> str:
    return uuid.uuid4().hex


def describe_claim(holder: str, until: float) -> str:
    """The text a claim is stored as: its holder and its expiry (UTC, to the ms)."""
    stamp = datetime.fromtimestamp(until, UTC).isoformat(timespec="milliseconds")
    return f"seawall claim {holder} until {stamp.replace('+00:00', 'Z')}"


def read_claim(text: str) -> tuple[str, float] | None:
    """(holder, expiry as a Unix time) of a stored claim; None when it is not one."""
    match = _DESCRIPTION.match(text.strip())
    if match is None:
        return None
    try:
        until = datetime.fromisoformat(match["until"].replace("Z", "+00:00"))
    except ValueError:
        return None
    return match["holder"], until.timestamp()


@dataclass(slots=True, kw_only=True)
class LabelClaims:
    """Claims as chains of labels, over one host's three label requests.

    ``create(name, description)`` creates a label, refused with ``taken_status`` when
    it exists; ``read(name)`` returns its description; ``delete(name)`` deletes it. A
    missing label is a ``TrackerError`` with status 404 from ``read`` and ``delete``.
    ``tracker`` names the host in errors; ``clock`` is the wall clock (claims are
    compared across machines). A description that is not a claim's counts as expired.
    """

    create: Callable[[str, str], object]
    read: Callable[[str], str]
    delete: Callable[[str], object]
    taken_status: int
    tracker: str
    clock: Callable[[], float] = time.time
    _walked: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, key: str, *, holder: str, ttl: float) -> float:
        """0.0 when ``holder`` now holds the claim ``key`` for ``ttl`` seconds; else
        the seconds another holder's claim stays valid."""
        link, vanished = 1, 0
        while link <= _MAX_LINKS:
            name = claim_label(key, link)
            try:
                self.create(name, describe_claim(holder, self.clock() + ttl))
            except TrackerError as exc:
                if exc.status != self.taken_status:
                    raise  # transient: the caller asks again, and the walk finds it
            else:
                with self._lock:
                    self._walked[(key, holder)] = link
                return 0.0
            found = self._read(name)
            if found is None:  # deleted since it was refused: create it again
                vanished += 1
                if vanished > _VANISHED:
                    raise TrackerError(
                        f"the host refuses to create label {name} but has no such label",
                        tracker=self.tracker,
                        operation="claim",
                    )
                continue
            claim = read_claim(found)
            left = claim[1] - self.clock() if claim is not None else 0.0
            if claim is not None and claim[0] != holder and left > 0:
                return left
            link += 1  # expired, or ours: renewed on the next label
        raise TrackerError(
            f"the claim on {key} found no free label among {_MAX_LINKS}",
            tracker=self.tracker,
            operation="claim",
        )

    def release(self, key: str, *, holder: str) -> None:
        """Delete the labels ``holder``'s last walk passed and created, each once."""
        with self._lock:
            last = self._walked.pop((key, holder), 0)
        failed: TrackerError | None = None
        for link in range(1, last + 1):
            try:
                self.delete(claim_label(key, link))
            except TrackerError as exc:
                if exc.status != 404 and failed is None:
                    failed = exc  # the others are deleted all the same
        if failed is not None:
            raise failed

    def _read(self, name: str) -> str | None:
        try:
            return self.read(name)
        except TrackerError as exc:
            if exc.status == 404:
                return None
            raise
