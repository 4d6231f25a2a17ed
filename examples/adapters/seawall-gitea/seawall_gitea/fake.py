"""A local fake of the Gitea REST API v1 for the endpoints the tracker uses.

Serves ``/api/v1/repos/<owner>/<repo>/...`` with Gitea's response shapes: issues (with
their labels as objects), comments, labels (a name may repeat, as on Gitea), ``page``/
``limit`` pagination with ``Link`` and ``X-Total-Count`` headers, 201 for every create
and edit, and ``Authorization: token ...`` authentication. Built on
``seawall.testing.http.FakeService``, so the tracker kit can inject faults by
operation.

    with FakeServer(GiteaService(token="t")) as server:
        GiteaTracker("owner/repo", url=server.origin, token="t")
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from seawall.testing.http import Answer, FakeService, Request, paginate

__all__ = ["GiteaService"]

_PREFIX = "/api/v1/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
_ROUTES = [
    ("GET", "issues", rf"{_PREFIX}/issues"),
    ("POST", "issues", rf"{_PREFIX}/issues"),
    ("PATCH", "issue", rf"{_PREFIX}/issues/(?P<index>\d+)"),
    ("GET", "comments", rf"{_PREFIX}/issues/(?P<index>\d+)/comments"),
    ("POST", "comments", rf"{_PREFIX}/issues/(?P<index>\d+)/comments"),
    ("GET", "labels", rf"{_PREFIX}/labels"),
    ("POST", "labels", rf"{_PREFIX}/labels"),
]
_STAMP = "2026-11-30T00:00:00Z"


class GiteaService(FakeService):
    """One repository's issues, comments and labels, served as Gitea's API v1."""

    operations: ClassVar[Mapping[str, tuple[str, str]]] = {
        "list_issues": ("GET", "issues"),
        "create_issue": ("POST", "issues"),
        "comment": ("POST", "comments"),
        "close_issue": ("PATCH", "issue"),
        "create_label": ("POST", "labels"),
        "list_labels": ("GET", "labels"),
    }

    def __init__(self, *, token: str = "gitea-token", repository: str = "forge/demo") -> None:
        super().__init__()
        self.token = token
        self.repository = repository
        self.issues: dict[int, dict[str, Any]] = {}  # index -> title, body, label ids, state
        self.labels: dict[int, dict[str, str]] = {}  # id -> name, color, description
        self.comments: dict[int, list[str]] = {}

    # -- for tests ------------------------------------------------------------------------

    def label_names(self, index: int) -> list[str]:
        with self.lock:
            return [self.labels[i]["name"] for i in self.issues[index]["labels"]]

    # -- FakeService ----------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        for verb, name, pattern in _ROUTES:
            match = re.fullmatch(pattern, path.rstrip("/"))
            if match and verb == method:
                return name, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def authorized(self, headers: Mapping[str, str]) -> Answer | None:
        if headers.get("authorization") == f"token {self.token}":
            return None
        return Answer(
            status=401,
            body={"message": "invalid username, password or token", "url": "/api/swagger"},
        )

    def answer(self, request: Request) -> Answer:
        with self.lock:
            if f"{request.params['owner']}/{request.params['repo']}" != self.repository:
                return Answer(status=404, body={"errors": None, "message": "not found"})
            serve: Callable[[Request], Answer] = getattr(
                self, f"_{request.method.lower()}_{request.route}"
            )
            return serve(request)

    # -- routes ---------------------------------------------------------------------------

    def _get_issues(self, request: Request) -> Answer:
        state = request.arg("state", "open")
        names = [n for n in (request.arg("labels") or "").split(",") if n]
        items = [
            self._issue(request, index)
            for index in sorted(self.issues, reverse=True)
            if (state == "all" or self.issues[index]["state"] == state)
            and all(
                any(self.labels[i]["name"] == name for i in self.issues[index]["labels"])
                for name in names
            )
        ]
        return self._page(request, items, "issues")

    def _post_issues(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("title"):
            return Answer(status=422, body={"message": "[Title]: Required", "url": ""})
        ids = [int(i) for i in body.get("labels") or []]
        if any(i not in self.labels for i in ids):
            return Answer(status=422, body={"message": "label does not exist", "url": ""})
        index = len(self.issues) + 1
        self.issues[index] = {
            "title": str(body["title"]),
            "body": str(body.get("body") or ""),
            "labels": ids,
            "state": "open",
        }
        return Answer(status=201, body=self._issue(request, index))

    def _patch_issue(self, request: Request) -> Answer:
        index = int(request.params["index"])
        if index not in self.issues:
            return Answer(status=404, body={"errors": None, "message": "issue does not exist"})
        body = request.body if isinstance(request.body, dict) else {}
        if body.get("state") in ("open", "closed"):
            self.issues[index]["state"] = body["state"]
        return Answer(status=201, body=self._issue(request, index))

    def _get_comments(self, request: Request) -> Answer:
        index = int(request.params["index"])
        return Answer(
            status=200, body=[self._comment(index, n, t) for n, t in enumerate(self._notes(index))]
        )

    def _post_comments(self, request: Request) -> Answer:
        index = int(request.params["index"])
        if index not in self.issues:
            return Answer(status=404, body={"errors": None, "message": "issue does not exist"})
        text = str((request.body or {}).get("body", ""))
        self.comments.setdefault(index, []).append(text)
        return Answer(status=201, body=self._comment(index, len(self.comments[index]) - 1, text))

    def _get_labels(self, request: Request) -> Answer:
        return self._page(request, [self._label(i) for i in sorted(self.labels)], "labels")

    def _post_labels(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        label_id = 100 + len(self.labels)
        self.labels[label_id] = {
            "name": str(body.get("name", "")),
            "color": str(body.get("color", "#ededed")).lstrip("#"),
            "description": str(body.get("description") or ""),
        }
        return Answer(status=201, body=self._label(label_id))

    # -- shapes ---------------------------------------------------------------------------

    def _notes(self, index: int) -> list[str]:
        return self.comments.get(index, [])

    def _page(self, request: Request, items: list[dict[str, Any]], what: str) -> Answer:
        base = f"http://{request.host}/api/v1/repos/{self.repository}/{what}"
        page = paginate(request, items, base, size="limit", maximum=50)
        headers = {"X-Total-Count": str(page.total)}
        if page.number < page.last or page.number > 1:
            headers["Link"] = page.link()
        return Answer(status=200, body=page.items, headers=headers)

    def _user(self) -> dict[str, Any]:
        return {
            "id": 1,
            "login": "seawall-bot",
            "full_name": "",
            "email": "seawall-bot@noreply.localhost",
            "avatar_url": "",
            "username": "seawall-bot",
        }

    def _label(self, label_id: int) -> dict[str, Any]:
        stored = self.labels[label_id]
        return {
            "id": label_id,
            "name": stored["name"],
            "exclusive": False,
            "is_archived": False,
            "color": stored["color"],
            "description": stored["description"],
            "url": f"/api/v1/repos/{self.repository}/labels/{label_id}",
        }

    def _issue(self, request: Request, index: int) -> dict[str, Any]:
        stored = self.issues[index]
        base = f"http://{request.host}"
        return {
            "id": 7000 + index,
            "url": f"{base}/api/v1/repos/{self.repository}/issues/{index}",
            "html_url": f"{base}/{self.repository}/issues/{index}",
            "number": index,
            "user": self._user(),
            "original_author": "",
            "original_author_id": 0,
            "title": stored["title"],
            "body": stored["body"],
            "ref": "",
            "assets": [],
            "labels": [self._label(i) for i in stored["labels"]],
            "milestone": None,
            "assignee": None,
            "assignees": None,
            "state": stored["state"],
            "is_locked": False,
            "comments": len(self._notes(index)),
            "created_at": _STAMP,
            "updated_at": _STAMP,
            "closed_at": None if stored["state"] == "open" else _STAMP,
            "due_date": None,
            "pull_request": None,
            "repository": {
                "id": 42,
                "name": self.repository.split("/")[1],
                "owner": self.repository.split("/")[0],
                "full_name": self.repository,
            },
            "pin_order": 0,
        }

    def _comment(self, index: int, n: int, text: str) -> dict[str, Any]:
        return {
            "id": index * 1000 + n,
            "html_url": f"/{self.repository}/issues/{index}#issuecomment-{index * 1000 + n}",
            "issue_url": f"/{self.repository}/issues/{index}",
            "user": self._user(),
            "body": text,
            "created_at": _STAMP,
            "updated_at": _STAMP,
        }
