"""A GitHub REST v3 fake for the endpoints the GitHub tracker uses.

Serves ``/api/v3/...`` (the GitHub Enterprise layout, which PyGithub accepts as
``base_url``) with the real response shapes: issues, labels, comments and search,
``Link`` pagination with absolute URLs built from the request's ``Host``, rate-limit
headers on every answer, and token authentication (``Authorization: token ...``).

    with FakeServer(GitHubService(token="t")) as server:
        Github(base_url=server.origin + "/api/v3", ...)
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from seawall.testing.http import Answer, FakeServer, FakeService, Fault, Request, paginate

__all__ = ["GitHubService", "github_server", "rate_limited_403", "secondary_429"]

PREFIX = "/api/v3"
_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
_ROUTES = [
    ("GET", "repo", rf"{_REPO}"),
    ("GET", "issues", rf"{_REPO}/issues"),
    ("POST", "issues", rf"{_REPO}/issues"),
    ("GET", "issue", rf"{_REPO}/issues/(?P<number>\d+)"),
    ("PATCH", "issue", rf"{_REPO}/issues/(?P<number>\d+)"),
    ("GET", "comments", rf"{_REPO}/issues/(?P<number>\d+)/comments"),
    ("POST", "comments", rf"{_REPO}/issues/(?P<number>\d+)/comments"),
    ("GET", "labels", rf"{_REPO}/labels"),
    ("POST", "labels", rf"{_REPO}/labels"),
    ("GET", "label", rf"{_REPO}/labels/(?P<name>[^/]+)"),
    ("DELETE", "label", rf"{_REPO}/labels/(?P<name>[^/]+)"),
    ("GET", "pulls", rf"{_REPO}/pulls"),
    ("POST", "pulls", rf"{_REPO}/pulls"),
    ("GET", "search", r"/search/issues"),
]
_BY_ID = "/repositories/4242"
_STAMP = "2026-11-30T00:00:00Z"


def _now() -> str:
    """Now as GitHub writes a time (UTC, to the second)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def rate_limited_403() -> Fault:
    """GitHub's primary rate limit: 403, remaining 0, reset in an hour."""
    return Fault(
        status=403,
        body={
            "message": "API rate limit exceeded for user ID 1.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        },
        headers={
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(time.time()) + 3600),
            "X-RateLimit-Resource": "core",
        },
    )


def secondary_429(retry_after: int = 1) -> Fault:
    """GitHub's secondary rate limit answered as 429 with ``Retry-After``."""
    return Fault(
        status=429,
        body={
            "message": "You have exceeded a secondary rate limit. "
            "Please wait a few minutes before you try again."
        },
        headers={"Retry-After": str(retry_after)},
    )


class GitHubService(FakeService):
    """One repository's issues, labels, comments and pull requests, as GitHub REST v3."""

    operations: ClassVar[Mapping[str, tuple[str, str]]] = {
        "list_issues": ("GET", "issues"),
        "create_issue": ("POST", "issues"),
        "comment": ("POST", "comments"),
        "close_issue": ("PATCH", "issue"),
        "create_label": ("POST", "labels"),
        "read_label": ("GET", "label"),
        "delete_label": ("DELETE", "label"),
        "list_labels": ("GET", "labels"),
        "open_pull_request": ("POST", "pulls"),
    }

    def __init__(self, *, token: str = "gh-test-token", repository: str = "octo/demo") -> None:
        super().__init__()
        self.token = token
        self.repository = repository
        self.issues: dict[int, dict[str, Any]] = {}  # number -> stored fields
        self.labels: dict[str, dict[str, Any]] = {}
        self.comments: dict[int, list[str]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}  # number -> head, base, title, body

    # -- state helpers for tests ----------------------------------------------------

    def add_issue(
        self, title: str, body: str, labels: list[str], state: str = "open", updated: str = ""
    ) -> int:
        """A new issue, last updated now or at ``updated`` (GitHub's time format)."""
        with self.lock:
            for name in labels:
                self._label(name)
            number = len(self.issues) + 1
            self.issues[number] = {
                "title": title,
                "body": body,
                "labels": labels,
                "state": state,
                "updated": updated or _now(),
            }
            return number

    def open_issues(self) -> list[dict[str, Any]]:
        with self.lock:
            return [i for i in self.issues.values() if i["state"] == "open"]

    # -- FakeService ----------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        if not path.startswith(PREFIX):
            return None
        rest = path[len(PREFIX) :].rstrip("/")
        if rest.startswith(_BY_ID):  # pagination links name the repository by id
            rest = f"/repos/{self.repository}" + rest[len(_BY_ID) :]
        for verb, name, pattern in _ROUTES:
            match = re.fullmatch(pattern, rest)
            if match and verb == method:
                return name, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def authorized(self, headers: Mapping[str, str]) -> Answer | None:
        if headers.get("authorization") in (f"token {self.token}", f"Bearer {self.token}"):
            return None
        return Answer(
            status=401,
            body={
                "message": "Bad credentials",
                "documentation_url": "https://docs.github.com/rest",
            },
        )

    def common_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            "X-RateLimit-Reset": str(int(time.time()) + 3600),
            "X-RateLimit-Used": "1",
            "X-RateLimit-Resource": "core",
            "X-GitHub-Media-Type": "github.v3; format=json",
        }

    def answer(self, request: Request) -> Answer:
        with self.lock:
            if request.route != "search":
                full = f"{request.params['owner']}/{request.params['repo']}"
                if full != self.repository:
                    return Answer(status=404, body={"message": "Not Found"})
            serve: Callable[[Request], Answer] = getattr(
                self, f"_{request.method.lower()}_{request.route}"
            )
            return serve(request)

    # -- routes ---------------------------------------------------------------------

    def _get_repo(self, request: Request) -> Answer:
        owner, name = self.repository.split("/")
        api = self._api(request)
        return Answer(
            status=200,
            body={
                "id": 4242,
                "node_id": "R_kgDOdemo",
                "name": name,
                "full_name": self.repository,
                "private": False,
                "owner": self._user(request, owner),
                "html_url": f"http://{request.host}/{self.repository}",
                "url": f"{api}/repos/{self.repository}",
                "has_issues": True,
                "open_issues_count": len(self.open_issues()),
                "default_branch": "main",
            },
        )

    def _get_issues(self, request: Request) -> Answer:
        state = request.arg("state", "open")
        wanted = [name for name in (request.arg("labels") or "").split(",") if name]
        since = request.arg("since") or ""  # ISO 8601: updated at or after it
        numbers = sorted(self.issues, reverse=request.arg("direction", "desc") == "desc")
        items = [
            self._issue(request, n)
            for n in numbers
            if (state == "all" or self.issues[n]["state"] == state)
            and all(name in self.issues[n]["labels"] for name in wanted)
            and (not since or _stamp(self.issues[n]["updated"]) >= _stamp(since))
        ]
        return self._page(request, items, "/repositories/4242/issues")

    def _post_issues(self, request: Request) -> Answer:
        body = request.body or {}
        if not isinstance(body, dict) or not body.get("title"):
            return Answer(
                status=422,
                body={
                    "message": "Validation Failed",
                    "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}],
                },
            )
        labels = [str(name) for name in body.get("labels", [])]
        number = self.add_issue(str(body["title"]), str(body.get("body") or ""), labels)
        return Answer(status=201, body=self._issue(request, number), headers={"Location": ""})

    def _get_issue(self, request: Request) -> Answer:
        number = int(request.params["number"])
        if number not in self.issues:
            return Answer(status=404, body={"message": "Not Found"})
        return Answer(status=200, body=self._issue(request, number))

    def _patch_issue(self, request: Request) -> Answer:
        number = int(request.params["number"])
        if number not in self.issues:
            return Answer(status=404, body={"message": "Not Found"})
        body = request.body if isinstance(request.body, dict) else {}
        for key in ("state", "title", "body"):
            if key in body:
                self.issues[number][key] = str(body[key])
        self.issues[number]["updated"] = _now()
        return Answer(status=200, body=self._issue(request, number))

    def _get_label(self, request: Request) -> Answer:
        name = request.params["name"]
        if name not in self.labels:
            return Answer(status=404, body={"message": "Not Found"})
        return Answer(status=200, body=self._label_json(request, name))

    def _delete_label(self, request: Request) -> Answer:
        name = request.params["name"]
        if name not in self.labels:
            return Answer(status=404, body={"message": "Not Found"})
        del self.labels[name]
        for issue in self.issues.values():  # GitHub takes a deleted label off its issues
            issue["labels"] = [label for label in issue["labels"] if label != name]
        return Answer(status=204)

    def _get_pulls(self, request: Request) -> Answer:
        state, head, base = request.arg("state", "open"), request.arg("head"), request.arg("base")
        owner = self.repository.split("/")[0]
        items = [
            self._pull(request, n)
            for n, pull in sorted(self.pulls.items())
            if (state == "all" or pull["state"] == state)
            and (head is None or head in (pull["head"], f"{owner}:{pull['head']}"))
            and (base is None or base == pull["base"])
        ]
        return self._page(request, items, "/repositories/4242/pulls")

    def _post_pulls(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        head, base = str(body.get("head", "")), str(body.get("base", ""))
        if any(
            p["head"] == head and p["base"] == base and p["state"] == "open"
            for p in self.pulls.values()
        ):
            return Answer(
                status=422,
                body={
                    "message": "Validation Failed",
                    "errors": [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {head}.",
                        }
                    ],
                },
            )
        number = len(self.issues) + len(self.pulls) + 1
        self.pulls[number] = {
            "head": head,
            "base": base,
            "title": str(body.get("title", "")),
            "body": str(body.get("body") or ""),
            "state": "open",
        }
        return Answer(status=201, body=self._pull(request, number))

    def _pull(self, request: Request, number: int) -> dict[str, Any]:
        stored = self.pulls[number]
        api = f"{self._api(request)}/repos/{self.repository}"
        owner = self.repository.split("/")[0]

        def ref(branch: str) -> dict[str, Any]:
            return {"label": f"{owner}:{branch}", "ref": branch, "sha": "0" * 40}

        return {
            "url": f"{api}/pulls/{number}",
            "id": 200000 + number,
            "node_id": f"PR_{number}",
            "html_url": f"http://{request.host}/{self.repository}/pull/{number}",
            "number": number,
            "state": stored["state"],
            "locked": False,
            "title": stored["title"],
            "user": self._user(request),
            "body": stored["body"],
            "created_at": _STAMP,
            "updated_at": _STAMP,
            "closed_at": None,
            "merged_at": None,
            "draft": False,
            "head": ref(stored["head"]),
            "base": ref(stored["base"]),
            "author_association": "OWNER",
        }

    def _get_comments(self, request: Request) -> Answer:
        number = int(request.params["number"])
        items = [
            self._comment(request, number, i, text)
            for i, text in enumerate(self.comments.get(number, []))
        ]
        return self._page(request, items, f"/repositories/4242/issues/{number}/comments")

    def _post_comments(self, request: Request) -> Answer:
        number = int(request.params["number"])
        if number not in self.issues:
            return Answer(status=404, body={"message": "Not Found"})
        text = str((request.body or {}).get("body", ""))
        self.comments.setdefault(number, []).append(text)
        index = len(self.comments[number]) - 1
        return Answer(status=201, body=self._comment(request, number, index, text))

    def _get_labels(self, request: Request) -> Answer:
        items = [self._label_json(request, name) for name in self.labels]
        return self._page(request, items, "/repositories/4242/labels")

    def _post_labels(self, request: Request) -> Answer:
        name = str((request.body or {}).get("name", ""))
        if name in self.labels:
            return Answer(
                status=422,
                body={
                    "message": "Validation Failed",
                    "errors": [{"resource": "Label", "code": "already_exists", "field": "name"}],
                },
            )
        self._label(name, (request.body or {}).get("color", "ededed"))
        self.labels[name]["description"] = (request.body or {}).get("description")
        return Answer(status=201, body=self._label_json(request, name))

    def _get_search(self, request: Request) -> Answer:
        terms = [t for t in (request.arg("q") or "").split() if ":" not in t]
        labels = [
            t.split(":", 1)[1] for t in (request.arg("q") or "").split() if t.startswith("label:")
        ]
        items = [
            {**self._issue(request, n), "score": 1.0}
            for n in sorted(self.issues)
            if self.issues[n]["state"] == "open"
            and all(name in self.issues[n]["labels"] for name in labels)
            and all(term in self.issues[n]["body"] for term in terms)
        ]
        page = self._page(request, items, "/search/issues")
        page.body = {"total_count": len(items), "incomplete_results": False, "items": page.body}
        return page

    # -- shapes ---------------------------------------------------------------------

    def _api(self, request: Request) -> str:
        return f"http://{request.host}{PREFIX}"

    def _page(self, request: Request, items: list[dict[str, Any]], path: str) -> Answer:
        page = paginate(request, items, self._api(request) + path)
        link = page.link()
        return Answer(status=200, body=page.items, headers={"Link": link} if link else {})

    def _label(self, name: str, color: str = "ededed") -> None:
        if name not in self.labels:
            self.labels[name] = {"id": 9000 + len(self.labels), "color": color}

    def _label_json(self, request: Request, name: str) -> dict[str, Any]:
        stored = self.labels[name]
        return {
            "id": stored["id"],
            "node_id": f"LA_{stored['id']}",
            "url": f"{self._api(request)}/repos/{self.repository}/labels/{quote(name)}",
            "name": name,
            "color": stored["color"],
            "default": False,
            "description": stored.get("description"),
        }

    def _user(self, request: Request, login: str = "seawall-bot") -> dict[str, Any]:
        api = self._api(request)
        return {
            "login": login,
            "id": 1,
            "node_id": "U_1",
            "avatar_url": f"http://{request.host}/avatars/{login}",
            "gravatar_id": "",
            "url": f"{api}/users/{login}",
            "html_url": f"http://{request.host}/{login}",
            "type": "User",
            "site_admin": False,
        }

    def _issue(self, request: Request, number: int) -> dict[str, Any]:
        stored = self.issues[number]
        api = f"{self._api(request)}/repos/{self.repository}"
        return {
            "url": f"{api}/issues/{number}",
            "repository_url": api,
            "labels_url": f"{api}/issues/{number}/labels{{/name}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "events_url": f"{api}/issues/{number}/events",
            "html_url": f"http://{request.host}/{self.repository}/issues/{number}",
            "id": 100000 + number,
            "node_id": f"I_kwDO{number}",
            "number": number,
            "title": stored["title"],
            "user": self._user(request),
            "labels": [self._label_json(request, name) for name in stored["labels"]],
            "state": stored["state"],
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(self.comments.get(number, [])),
            "created_at": _STAMP,
            "updated_at": stored["updated"],
            "closed_at": None if stored["state"] == "open" else stored["updated"],
            "author_association": "OWNER",
            "active_lock_reason": None,
            "body": stored["body"],
            "closed_by": None,
            "timeline_url": f"{api}/issues/{number}/timeline",
            "performed_via_github_app": None,
            "state_reason": None,
        }

    def _comment(self, request: Request, number: int, index: int, text: str) -> dict[str, Any]:
        api = f"{self._api(request)}/repos/{self.repository}"
        cid = number * 1000 + index
        return {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"http://{request.host}/{self.repository}/issues/{number}#issuecomment-{cid}",
            "body": text,
            "user": self._user(request),
            "created_at": _STAMP,
            "updated_at": _STAMP,
            "issue_url": f"{api}/issues/{number}",
            "author_association": "OWNER",
            "performed_via_github_app": None,
        }


@contextmanager
def github_server(**kwargs: Any) -> Iterator[FakeServer]:
    """Run a ``GitHubService`` on 127.0.0.1 for the duration of the block."""
    with FakeServer(GitHubService(**kwargs)) as server:
        yield server
