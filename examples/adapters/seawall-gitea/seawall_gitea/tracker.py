"""A Gitea / Forgejo tracker for seawall, on the REST API v1 and the standard library.

Issues of one repository: listed by label over every page (``page``/``limit``, the next
page taken from the ``Link`` header), created with their labels attached by id (the
API takes label ids, not names), commented and closed. Gitea lets two labels share a
name, so a label cannot be a claim: this tracker offers issues only, and sessions on
one machine are serialised by seawall's repository lock.

The token is read from ``GITEA_TOKEN`` (or ``token_env``) on construction and sent as
``Authorization: token ...``; it never appears in a message or a repr.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from seawall.errors import ConfigurationError, TrackerError
from seawall.model import TrackerConfig
from seawall.tracker import (
    Issue,
    IssueTracker,
    TrackerRateLimitError,
    TrackerUnavailableError,
    tracker_options,
)

__all__ = ["GiteaTracker"]

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_OPTIONS: dict[str, type | tuple[type, ...]] = {"timeout": float, "limit": int}


class GiteaTracker(IssueTracker):
    """Issues of one Gitea or Forgejo repository (``owner/name`` on ``url``)."""

    name = "gitea"

    def __init__(
        self,
        repository: str,
        *,
        url: str,
        token: str | None = None,
        token_env: str = "GITEA_TOKEN",
        timeout: float = 15.0,
        limit: int = 50,
    ) -> None:
        owner, _, repo = repository.partition("/")
        if not owner or not repo or "/" in repo:
            raise ConfigurationError(f"Gitea repository must be 'owner/name', got {repository!r}")
        secret = token or os.environ.get(token_env)
        if not secret:
            raise ConfigurationError(f"the Gitea tracker needs a token: set {token_env}")
        self.repository = repository
        self.url = url.rstrip("/")
        self._api = f"{self.url}/api/v1/repos/{quote(owner)}/{quote(repo)}"
        self._token = secret
        self._timeout = timeout
        self._limit = limit
        self._labels: dict[str, int] | None = None  # name -> id

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> GiteaTracker:
        """``repository`` is ``owner/name``, ``url`` the server; options: timeout, limit."""
        if not config.repository or not config.url:
            raise ConfigurationError(
                "the Gitea tracker needs repository = 'owner/name' and url = the server"
            )
        options: dict[str, Any] = dict(tracker_options(config, _OPTIONS))
        return cls(
            config.repository,
            url=config.url,
            token_env=config.token_env or "GITEA_TOKEN",
            **options,
        )

    # -- the port -----------------------------------------------------------------------

    def list_issues(self, label: str) -> list[Issue]:
        query = {"state": "open", "type": "issues", "labels": label, "limit": self._limit}
        items = self._pages("list issues", f"{self._api}/issues?{urlencode(query)}")
        # the state filter is the server's; checked again so a closed issue never matches
        return [_issue(item) for item in items if item.get("state") == "open"]

    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        ids = self._label_ids(labels)
        payload = {"title": title, "body": body, "labels": ids}
        item = self._request("create issue", "POST", f"{self._api}/issues", payload)[0]
        return _issue(item)

    def comment(self, number: int, body: str) -> None:
        self._request("comment", "POST", f"{self._api}/issues/{number}/comments", {"body": body})

    def close_issue(self, number: int) -> None:
        self._request("close issue", "PATCH", f"{self._api}/issues/{number}", {"state": "closed"})

    def ensure_labels(self, labels: Sequence[str]) -> None:
        self._label_ids(labels)

    def __repr__(self) -> str:
        return f"GiteaTracker({self.repository!r}, url={self.url!r})"

    # -- internals ----------------------------------------------------------------------

    def _label_ids(self, labels: Sequence[str]) -> list[int]:
        """The ids of ``labels``, creating the missing ones (each once)."""
        if self._labels is None:
            listed = self._pages("list labels", f"{self._api}/labels?limit={self._limit}")
            self._labels = {str(item["name"]): int(item["id"]) for item in listed}
        for label in labels:
            if label not in self._labels:
                payload = {"name": label, "color": "#d93f0b", "description": "seawall"}
                item = self._request("create label", "POST", f"{self._api}/labels", payload)[0]
                self._labels[label] = int(item["id"])
        return [self._labels[label] for label in labels]

    def _pages(self, operation: str, url: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        next_url: str | None = url
        for _ in range(10_000):  # a bound far above any real repository
            if next_url is None:
                return items
            body, headers = self._request(operation, "GET", next_url, None)
            items.extend(body)
            match = _NEXT.search(headers.get("Link", ""))
            next_url = match.group(1) if match else None
        raise TrackerError("too many pages", tracker=self.name, operation=operation)

    def _request(
        self, operation: str, method: str, url: str, payload: Mapping[str, Any] | None
    ) -> tuple[Any, Message]:
        """One HTTP request, never retried; every failure becomes a ``TrackerError``."""
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"token {self._token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:
                raw = answer.read()
                return (json.loads(raw) if raw else None), answer.headers
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc, operation) from None
        except TimeoutError as exc:
            raise TrackerUnavailableError(
                "timed out; a write may have been applied", tracker=self.name, operation=operation
            ) from exc
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            raise TrackerUnavailableError(
                f"connection to {self.url} failed ({type(exc).__name__})",
                tracker=self.name,
                operation=operation,
            ) from exc
        except ValueError as exc:
            raise TrackerError(
                f"the answer is not JSON: {exc}", tracker=self.name, operation=operation
            ) from exc

    def _http_error(self, exc: urllib.error.HTTPError, operation: str) -> TrackerError:
        status = exc.code
        try:
            detail = str(json.loads(exc.read() or b"{}").get("message") or exc.reason)
        except (ValueError, AttributeError):
            detail = str(exc.reason)
        message = f"HTTP {status}: {detail}"
        if status == 429:
            wait = _retry_after(exc.headers)
            return TrackerRateLimitError(
                f"rate limited ({message})",
                tracker=self.name,
                operation=operation,
                status=status,
                retry_after=wait,
            )
        if status >= 500:
            return TrackerUnavailableError(
                message, tracker=self.name, operation=operation, status=status
            )
        if status == 401:
            message += " (check the token)"
        return TrackerError(message, tracker=self.name, operation=operation, status=status)


def _retry_after(headers: Message) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        reset = headers.get("X-RateLimit-Reset")
        return max(0.0, float(reset) - time.time()) if reset and reset.isdigit() else None
    try:
        return float(value)
    except ValueError:
        return None


def _issue(item: Mapping[str, Any]) -> Issue:
    return Issue(
        number=int(item["number"]),
        title=str(item.get("title") or ""),
        body=str(item.get("body") or ""),
        labels=tuple(str(label["name"]) for label in item.get("labels") or ()),
        url=str(item.get("html_url") or ""),
        state=str(item.get("state") or "open"),
    )
