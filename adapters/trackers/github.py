"""The GitHub tracker, through PyGithub (``pip install '.[github]'`` in a seawall
checkout).

Settings: the repository ``owner/name``; the token from ``GITHUB_TOKEN`` (or another
variable named by ``token_env``) or an explicit argument; ``base_url`` for GitHub
Enterprise (``https://ghe.example.com/api/v3``).

PyGithub's own retry (which retries POST on 5xx and so can duplicate an issue) is
turned off: the carryover filer retries with backoff and lists again before retrying a
create. Objects are lazy, so no request is spent fetching the repository, and only
attributes present in list answers are read (reading a missing one would fetch the
issue again).
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from seawall.codec import JsonObject
from seawall.errors import ConfigurationError, MissingExtraError, TrackerError
from seawall.model import TrackerConfig
from seawall.tracker import (
    Capability,
    Issue,
    IssueTracker,
    PullRequest,
    tracker_options,
)

try:
    import github
    import requests
except ImportError as exc:
    raise MissingExtraError(
        package="PyGithub", extra="github", purpose="The GitHub tracker"
    ) from exc

from seawall.adapters.trackers._claims import CLAIM_TTL, LabelClaims, new_holder
from seawall.adapters.trackers._transport import status_error, transport_error

__all__ = ["DEFAULT_BASE_URL", "GitHubTracker"]

DEFAULT_BASE_URL = "https://api.github.com"
_T = TypeVar("_T")
#: ``[session.tracker.options]`` the GitHub tracker accepts
_OPTIONS: dict[str, type | tuple[type, ...]] = {
    "timeout": float,
    "per_page": int,
    "request_interval": float,
    "write_interval": float,
    "label_color": str,
}


class GitHubTracker(IssueTracker):
    """Issues and pull requests of one GitHub repository."""

    name = "github"
    capabilities = frozenset(Capability)

    def __init__(
        self,
        repository: str,
        *,
        token: str | None = None,
        base_url: str | None = None,
        token_env: str = "GITHUB_TOKEN",
        timeout: float = 15,
        per_page: int = 100,
        request_interval: float = 0.25,
        write_interval: float = 1.0,
        label_color: str = "d93f0b",
    ) -> None:
        """``request_interval``/``write_interval`` space requests as GitHub asks for
        (PyGithub's throttle); tests against a local fake set them to 0."""
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise ConfigurationError(f"GitHub repository must be 'owner/name', got {repository!r}")
        secret = token or os.environ.get(token_env)
        if not secret:
            raise ConfigurationError(
                f"the GitHub tracker needs a token: set {token_env} or pass token="
            )
        self.repository = repository
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._label_color = label_color
        self._labels: set[str] | None = None
        self._holder = new_holder()  # of claims taken through claim(key)
        self._client = github.Github(
            auth=github.Auth.Token(secret),
            base_url=self.base_url,
            timeout=max(1, math.ceil(timeout)),  # PyGithub takes whole seconds
            per_page=per_page,
            retry=None,
            seconds_between_requests=request_interval or None,
            seconds_between_writes=write_interval or None,
            lazy=True,
        )
        self._repo = self._client.get_repo(repository)
        self._claims = LabelClaims(
            create=lambda name, text: self._call(
                "claim", lambda: self._repo.create_label(name, "ededed", description=text)
            ),
            read=lambda name: self._call(
                "claim", lambda: self._repo.get_label(name).description or ""
            ),
            delete=lambda name: self._call(
                "release claim", lambda: self._repo.get_label(name).delete()
            ),
            taken_status=422,  # already_exists
            tracker=self.name,
        )

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> GitHubTracker:
        """``config.repository`` is ``owner/name``; ``config.url`` the Enterprise API URL;
        ``config.options`` may set timeout, per_page, request_interval, write_interval and
        label_color."""
        if not config.repository:
            raise ConfigurationError("the GitHub tracker needs repository = 'owner/name'")
        options: JsonObject = dict(tracker_options(config, _OPTIONS))
        return cls(
            config.repository,
            base_url=config.url,
            token_env=config.token_env or "GITHUB_TOKEN",
            **options,  # checked against _OPTIONS
        )

    def list_issues(self, label: str) -> list[Issue]:
        def read() -> list[Issue]:
            found = self._repo.get_issues(state="open", labels=[label])
            return [_issue(item) for item in found if "/pull/" not in (item.html_url or "")]

        return self._call("list issues", read)

    def issues_changed_since(self, label: str, since: datetime) -> list[Issue] | None:
        def read() -> list[Issue]:
            found = self._repo.get_issues(state="all", labels=[label], since=since)
            return [_issue(item) for item in found if "/pull/" not in (item.html_url or "")]

        return self._call("list changed issues", read)

    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        return self._call(
            "create issue",
            lambda: _issue(self._repo.create_issue(title=title, body=body, labels=list(labels))),
        )

    def comment(self, number: int, body: str) -> None:
        self._call("comment", lambda: self._repo.get_issue(number).create_comment(body))

    def close_issue(self, number: int) -> None:
        self._call("close issue", lambda: self._repo.get_issue(number).edit(state="closed"))

    def claim(self, key: str) -> bool:
        """Take the claim ``key`` for this client for ``CLAIM_TTL`` seconds."""
        return self.take_claim(key, holder=self._holder, ttl=CLAIM_TTL) <= 0

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float:
        """A claim is a chain of labels ``claim:<key>:<n>`` (see ``_claims``): creating
        a label is atomic (a second create is 422 ``already_exists``)."""
        return self._claims.take(key, holder=holder, ttl=ttl)

    def release_claim(self, key: str, *, holder: str) -> None:
        self._claims.release(key, holder=holder)

    def find_pull_request(self, *, head: str, base: str) -> PullRequest | None:
        owner = self.repository.split("/")[0]

        def read() -> PullRequest | None:
            for pull in self._repo.get_pulls(state="open", head=f"{owner}:{head}", base=base):
                return _pull(pull)
            return None

        return self._call("find pull request", read)

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        return self._call(
            "open pull request",
            lambda: _pull(self._repo.create_pull(base=base, head=head, title=title, body=body)),
        )

    def ensure_labels(self, labels: Sequence[str]) -> None:
        if self._labels is None:
            self._labels = self._call(
                "list labels", lambda: {label.name for label in self._repo.get_labels()}
            )
        for label in labels:
            if label not in self._labels:
                self._call("create label", functools.partial(self._create_label, label))
                self._labels.add(label)

    def close(self) -> None:
        self._client.close()

    def _create_label(self, label: str) -> None:
        try:
            self._repo.create_label(label, self._label_color)
        except github.GithubException as exc:
            if exc.status != 422 or "already_exists" not in str(exc.data):
                raise  # 422 already_exists: created meanwhile, which is what we want

    def _call(self, operation: str, action: Callable[[], _T]) -> _T:
        """Run one SDK action; SDK and transport errors become ``TrackerError``."""
        try:
            return action()
        except github.GithubException as exc:
            raise _http_error(exc, self.name, operation) from exc
        except requests.RequestException as exc:
            raise transport_error(
                exc, tracker=self.name, operation=operation, url=self.base_url
            ) from exc

    def __repr__(self) -> str:
        return f"GitHubTracker({self.repository!r}, base_url={self.base_url!r})"


def _issue(item: Any) -> Issue:
    return Issue(
        number=int(item.number),
        title=str(item.title),
        body=str(item.body or ""),
        labels=tuple(str(label.name) for label in item.labels),
        url=str(item.html_url),
        state=str(item.state),
    )


def _pull(item: Any) -> PullRequest:
    return PullRequest(
        number=int(item.number),
        url=str(item.html_url),
        head=str(item.head.ref),
        base=str(item.base.ref),
        title=str(item.title),
        state=str(item.state),
    )


def _http_error(exc: Any, tracker: str, operation: str) -> TrackerError:
    status = int(exc.status)
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    data = exc.data if isinstance(exc.data, Mapping) else {}
    message = f"HTTP {status}: {data.get('message') or exc.message or 'no message'}"
    limited = status == 429 or (
        status == 403 and (headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers)
    )
    wait = _retry_after(headers) if limited else None
    return status_error(
        status, message, limited=limited, retry_after=wait, tracker=tracker, operation=operation
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    try:
        if "retry-after" in headers:
            return float(headers["retry-after"])
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            return max(0.0, float(headers["x-ratelimit-reset"]) - time.time())
    except ValueError:
        return None
    return None
