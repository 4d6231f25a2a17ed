"""Transport failures of the HTTP trackers (both SDKs use ``requests``), as TrackerErrors.

Imported only by the GitHub and GitLab adapters, after their SDK (and so ``requests``)
imported.
"""

from __future__ import annotations

import requests

from seawall.errors import TrackerError
from seawall.tracker import TrackerRateLimitError, TrackerUnavailableError

__all__ = ["status_error", "transport_error"]


def status_error(
    status: int | None,
    message: str,
    *,
    limited: bool,
    retry_after: float | None,
    tracker: str,
    operation: str,
) -> TrackerError:
    """An HTTP error answer as a TrackerError: a rate limit (with the wait it asked for),
    a transient 5xx, or a refusal (a 401 hints at the token)."""
    if limited:
        hint = f"; retry after {retry_after:.0f}s" if retry_after is not None else ""
        return TrackerRateLimitError(
            f"rate limited ({message}){hint}",
            tracker=tracker,
            operation=operation,
            status=status,
            retry_after=retry_after,
        )
    if status is not None and status >= 500:
        return TrackerUnavailableError(message, tracker=tracker, operation=operation, status=status)
    if status == 401:
        message += " (check the token)"
    return TrackerError(message, tracker=tracker, operation=operation, status=status)


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
