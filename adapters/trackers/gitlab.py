"""The GitLab tracker, through python-gitlab (``pip install '.[gitlab]'`` in a seawall
checkout).

Settings: the project path ``group/project`` (or its numeric id); the token from
``GITLAB_TOKEN`` (or another variable named by ``token_env``) or an explicit argument;
``url`` for a self-hosted GitLab (default ``https://gitlab.com``).

python-gitlab's own retries are off: ``retry_transient_errors=False`` on the client,
and ``obey_rate_limit=False`` on every call, because by default it sleeps and retries
any 429, POST included. The carryover filer retries with backoff and lists again before
retrying a create. The project is lazy, so no request is spent fetching it.
"""

from __future__ import annotations

import functools
import os
import threading
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
    import gitlab
    import requests
except ImportError as exc:
    raise MissingExtraError(
        package="python-gitlab", extra="gitlab", purpose="The GitLab tracker"
    ) from exc

from seawall.adapters.trackers._claims import CLAIM_TTL, LabelClaims, new_holder
from seawall.adapters.trackers._transport import status_error, transport_error

__all__ = ["DEFAULT_URL", "GitLabTracker"]

DEFAULT_URL = "https://gitlab.com"
_T = TypeVar("_T")
#: ``[session.tracker.options]`` the GitLab tracker accepts
_OPTIONS: dict[str, type | tuple[type, ...]] = {
    "timeout": float,
    "per_page": int,
    "label_color": str,
}
_NO_SDK_RETRY: JsonObject = {"obey_rate_limit": False, "retry_transient_errors": False}


class GitLabTracker(IssueTracker):
    """Issues and merge requests of one GitLab project."""

    name = "gitlab"
    capabilities = frozenset(Capability)

    def __init__(
        self,
        project: str,
        *,
        token: str | None = None,
        url: str | None = None,
        token_env: str = "GITLAB_TOKEN",
        timeout: float = 15.0,
        per_page: int = 100,
        label_color: str = "#d93f0b",
    ) -> None:
        if not project.strip():
            raise ConfigurationError("the GitLab tracker needs a project path 'group/project'")
        secret = token or os.environ.get(token_env)
        if not secret:
            raise ConfigurationError(
                f"the GitLab tracker needs a token: set {token_env} or pass token="
            )
        self.project = project
        self.url = (url or DEFAULT_URL).rstrip("/")
        self._label_color = label_color
        self._labels: set[str] | None = None
        self._holder = new_holder()  # of claims taken through claim(key)
        self._last = threading.local()  # headers of the last answer, for Retry-After
        session = requests.Session()
        session.hooks["response"].append(self._remember)
        self._client = gitlab.Gitlab(
            self.url,
            private_token=secret,
            timeout=timeout,
            per_page=per_page,
            retry_transient_errors=False,
            session=session,
        )
        self._project = self._client.projects.get(project, lazy=True)
        self._claims = LabelClaims(
            create=self._create_claim_label,
            read=self._read_claim_label,
            delete=lambda name: self._call(
                "release claim", lambda: self._project.labels.delete(name, **_NO_SDK_RETRY)
            ),
            taken_status=409,
            tracker=self.name,
        )

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> GitLabTracker:
        """``config.repository`` is the project path; ``config.url`` a self-hosted URL;
        ``config.options`` may set timeout, per_page and label_color."""
        if not config.repository:
            raise ConfigurationError("the GitLab tracker needs repository = 'group/project'")
        options: JsonObject = dict(tracker_options(config, _OPTIONS))
        return cls(
            config.repository,
            url=config.url,
            token_env=config.token_env or "GITLAB_TOKEN",
            **options,  # checked against _OPTIONS
        )

    def list_issues(self, label: str) -> list[Issue]:
        def read() -> list[Issue]:
            found = self._project.issues.list(
                labels=[label], state="opened", iterator=True, **_NO_SDK_RETRY
            )
            return [_issue(item) for item in found]

        return self._call("list issues", read)

    def issues_changed_since(self, label: str, since: datetime) -> list[Issue] | None:
        def read() -> list[Issue]:
            found = self._project.issues.list(
                labels=[label],
                updated_after=since.isoformat(),
                iterator=True,
                **_NO_SDK_RETRY,
            )
            return [_issue(item) for item in found]

        return self._call("list changed issues", read)

    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        data = {"title": title, "description": body, "labels": list(labels)}
        return self._call(
            "create issue", lambda: _issue(self._project.issues.create(data, **_NO_SDK_RETRY))
        )

    def comment(self, number: int, body: str) -> None:
        def post() -> None:
            issue = self._project.issues.get(number, lazy=True)
            issue.notes.create({"body": body}, **_NO_SDK_RETRY)

        self._call("comment", post)

    def close_issue(self, number: int) -> None:
        def put() -> None:
            issue = self._project.issues.get(number, lazy=True)
            issue.state_event = "close"
            issue.save(**_NO_SDK_RETRY)

        self._call("close issue", put)

    def claim(self, key: str) -> bool:
        """Take the claim ``key`` for this client for ``CLAIM_TTL`` seconds."""
        return self.take_claim(key, holder=self._holder, ttl=CLAIM_TTL) <= 0

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float:
        """A claim is a chain of labels ``claim:<key>:<n>`` (see ``_claims``): creating
        a label is atomic (a second create is 409)."""
        return self._claims.take(key, holder=holder, ttl=ttl)

    def release_claim(self, key: str, *, holder: str) -> None:
        self._claims.release(key, holder=holder)

    def find_pull_request(self, *, head: str, base: str) -> PullRequest | None:
        def read() -> PullRequest | None:
            found = self._project.mergerequests.list(
                state="opened",
                source_branch=head,
                target_branch=base,
                iterator=True,
                **_NO_SDK_RETRY,
            )
            for item in found:
                return _merge_request(item)
            return None

        return self._call("find merge request", read)

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        data = {"source_branch": head, "target_branch": base, "title": title, "description": body}
        return self._call(
            "open merge request",
            lambda: _merge_request(self._project.mergerequests.create(data, **_NO_SDK_RETRY)),
        )

    def ensure_labels(self, labels: Sequence[str]) -> None:
        if self._labels is None:
            self._labels = self._call(
                "list labels",
                lambda: {
                    label.name
                    for label in self._project.labels.list(iterator=True, **_NO_SDK_RETRY)
                },
            )
        for label in labels:
            if label not in self._labels:
                self._call("create label", functools.partial(self._create_label, label))
                self._labels.add(label)

    def close(self) -> None:
        self._client.session.close()

    def _create_label(self, label: str) -> None:
        try:
            self._project.labels.create(
                {"name": label, "color": self._label_color}, **_NO_SDK_RETRY
            )
        except gitlab.exceptions.GitlabCreateError as exc:
            if exc.response_code != 409:
                raise  # 409: created meanwhile, which is what we want

    def _create_claim_label(self, name: str, text: str) -> None:
        self._call(
            "claim",
            lambda: self._project.labels.create(
                {"name": name, "color": "#ededed", "description": text}, **_NO_SDK_RETRY
            ),
        )

    def _read_claim_label(self, name: str) -> str:
        label = self._call("claim", lambda: self._project.labels.get(name, **_NO_SDK_RETRY))
        return str(getattr(label, "description", "") or "")

    def _remember(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self._last.headers = {k.lower(): v for k, v in response.headers.items()}

    def _call(self, operation: str, action: Callable[[], _T]) -> _T:
        """Run one SDK action; SDK and transport errors become ``TrackerError``."""
        self._last.headers = {}
        try:
            return action()
        except gitlab.exceptions.GitlabError as exc:
            headers: Mapping[str, str] = getattr(self._last, "headers", {})
            raise _http_error(exc, headers, self.name, operation) from exc
        except requests.RequestException as exc:
            raise transport_error(
                exc, tracker=self.name, operation=operation, url=self.url
            ) from exc

    def __repr__(self) -> str:
        return f"GitLabTracker({self.project!r}, url={self.url!r})"


def _issue(item: Any) -> Issue:
    state = str(item.state)
    return Issue(
        number=int(item.iid),
        title=str(item.title),
        body=str(item.description or ""),
        labels=tuple(str(label) for label in item.labels),
        url=str(item.web_url),
        state="open" if state == "opened" else state,
    )


def _merge_request(item: Any) -> PullRequest:
    state = str(item.state)
    return PullRequest(
        number=int(item.iid),
        url=str(item.web_url),
        head=str(item.source_branch),
        base=str(item.target_branch),
        title=str(item.title),
        state="open" if state == "opened" else state,
    )


def _http_error(exc: Any, headers: Mapping[str, str], tracker: str, operation: str) -> TrackerError:
    status = exc.response_code
    detail = exc.error_message if isinstance(exc.error_message, str) else str(exc.error_message)
    message = f"HTTP {status}: {detail}" if status is not None else str(detail)
    limited = status == 429
    wait = _retry_after(headers) if limited else None
    return status_error(
        status, message, limited=limited, retry_after=wait, tracker=tracker, operation=operation
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    try:
        if "retry-after" in headers:
            return float(headers["retry-after"])
        if "ratelimit-reset" in headers:
            return max(0.0, float(headers["ratelimit-reset"]) - time.time())
    except ValueError:
        return None
    return None
