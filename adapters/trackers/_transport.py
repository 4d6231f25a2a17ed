"""Transport failures of the HTTP trackers (both SDKs use ``requests``), as TrackerErrors.

Imported only by the GitHub and GitLab adapters, after their SDK (and so ``requests``)
imported.
"""

from __future__ import annotations

import requests

from coordinator.errors import TrackerError
from coordinator.tracker import TrackerUnavailableError

__all__ = ["transport_error"]


def transport_error(
    exc: requests.RequestException, *, tracker: str, operation: str, url: str
) -> TrackerError:
    """A timeout or dropped connection is transient (a write may have been applied)."""
    if isinstance(exc, requests.Timeout):
        return TrackerUnavailableError(
            "timed out; a write may have been applied", tracker=tracker, operation=operation
        )
    if isinstance(exc, requests.ConnectionError):
        return TrackerUnavailableError(
            f"connection to {url} failed ({type(exc).__name__})",
            tracker=tracker,
            operation=operation,
        )
    return TrackerError(
        f"request failed ({type(exc).__name__})", tracker=tracker, operation=operation
    )
