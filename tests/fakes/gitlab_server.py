"""A GitLab REST v4 fake for the endpoints the GitLab tracker uses.

Serves ``/api/v4/projects/<id or url-encoded path>/...`` with the real response shapes
(issues, notes, labels), offset pagination with ``X-Page``/``X-Next-Page``/``X-Total``
headers and a ``Link`` header whose absolute URLs are built from the request's
``Host`` (python-gitlab warns when they differ from its configured URL), and
``PRIVATE-TOKEN`` authentication.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from seawall.testing.http import Answer, FakeServer, FakeService, Fault, Request, paginate

__all__ = ["GitLabService", "gitlab_server", "too_many_requests"]

PREFIX = "/api/v4"
_PROJECT = r"/projects/(?P<project>[^/]+)"
_ROUTES = [
    ("GET", "project", rf"{_PROJECT}"),
    ("GET", "issues", rf"{_PROJECT}/issues"),
    ("POST", "issues", rf"{_PROJECT}/issues"),
    ("GET", "issue", rf"{_PROJECT}/issues/(?P<iid>\d+)"),
    ("PUT", "issue", rf"{_PROJECT}/issues/(?P<iid>\d+)"),
    ("GET", "notes", rf"{_PROJECT}/issues/(?P<iid>\d+)/notes"),
    ("POST", "notes", rf"{_PROJECT}/issues/(?P<iid>\d+)/notes"),
    ("GET", "labels", rf"{_PROJECT}/labels"),
    ("POST", "labels", rf"{_PROJECT}/labels"),
    ("GET", "label", rf"{_PROJECT}/labels/(?P<name>[^/]+)"),
    ("DELETE", "label", rf"{_PROJECT}/labels/(?P<name>[^/]+)"),
    ("GET", "merge_requests", rf"{_PROJECT}/merge_requests"),
    ("POST", "merge_requests", rf"{_PROJECT}/merge_requests"),
]
_STAMP = "2026-11-30T00:00:00.000Z"
_PROJECT_ID = 42


def too_many_requests(retry_after: int = 1) -> Fault:
    """GitLab's rate limit: 429 with ``Retry-After`` and ``RateLimit-*`` headers."""
    return Fault(
        status=429,
        body={"message": "Retry later"},
        headers={
            "Retry-After": str(retry_after),
            "RateLimit-Limit": "600",
            "RateLimit-Remaining": "0",
            "RateLimit-Name": "throttle_authenticated_api",
        },
    )


def _now() -> str:
    """Now as GitLab writes a time (UTC, to the millisecond)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class GitLabService(FakeService):
    """One project's issues, labels, notes and merge requests, served as GitLab REST v4."""

    operations: ClassVar[Mapping[str, tuple[str, str]]] = {
        "list_issues": ("GET", "issues"),
        "create_issue": ("POST", "issues"),
        "comment": ("POST", "notes"),
        "close_issue": ("PUT", "issue"),
        "create_label": ("POST", "labels"),
        "read_label": ("GET", "label"),
        "delete_label": ("DELETE", "label"),
        "list_labels": ("GET", "labels"),
        "open_pull_request": ("POST", "merge_requests"),
    }

    def __init__(self, *, token: str = "glpat-test", project: str = "group/demo") -> None:
        super().__init__()
        self.token = token
        self.project = project
        self.issues: dict[int, dict[str, Any]] = {}  # iid -> stored fields
        self.labels: dict[str, str] = {}  # name -> color
        self.descriptions: dict[str, str | None] = {}  # label name -> description
        self.notes: dict[int, list[str]] = {}
        self.merge_requests: dict[int, dict[str, Any]] = {}  # iid -> fields

    def add_issue(self, title: str, body: str, labels: list[str], state: str = "opened") -> int:
        with self.lock:
            for name in labels:
                self.labels.setdefault(name, "#ededed")  # GitLab creates unknown labels
            iid = len(self.issues) + 1
            self.issues[iid] = {
                "title": title,
                "description": body,
                "labels": labels,
                "state": state,
                "updated": _now(),
            }
            return iid

    # -- FakeService ----------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        if not path.startswith(PREFIX):
            return None
        rest = path[len(PREFIX) :].rstrip("/")
        for verb, name, pattern in _ROUTES:
            match = re.fullmatch(pattern, rest)
            if match and verb == method:
                return name, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def authorized(self, headers: Mapping[str, str]) -> Answer | None:
        if headers.get("private-token") == self.token:
            return None
        return Answer(status=401, body={"message": "401 Unauthorized"})

    def answer(self, request: Request) -> Answer:
        with self.lock:
            if request.params["project"] not in (self.project, str(_PROJECT_ID)):
                return Answer(status=404, body={"message": "404 Project Not Found"})
            serve: Callable[[Request], Answer] = getattr(
                self, f"_{request.method.lower()}_{request.route}"
            )
            return serve(request)

    # -- routes ---------------------------------------------------------------------

    def _get_project(self, request: Request) -> Answer:
        return Answer(
            status=200,
            body={
                "id": _PROJECT_ID,
                "path_with_namespace": self.project,
                "name": self.project.rsplit("/", 1)[-1],
                "web_url": f"http://{request.host}/{self.project}",
                "open_issues_count": sum(i["state"] == "opened" for i in self.issues.values()),
            },
        )

    def _get_issues(self, request: Request) -> Answer:
        state = request.arg("state", "all")
        wanted = [name for name in (request.arg("labels") or "").split(",") if name]
        after = request.arg("updated_after") or ""  # ISO 8601: updated on or after it
        items = [
            self._issue(request, iid)
            for iid in sorted(self.issues, reverse=True)
            if (state == "all" or self.issues[iid]["state"] == state)
            and all(name in self.issues[iid]["labels"] for name in wanted)
            and (not after or _stamp(self.issues[iid]["updated"]) >= _stamp(after))
        ]
        return self._page(request, items, f"/projects/{_PROJECT_ID}/issues")

    def _post_issues(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("title"):
            return Answer(status=400, body={"message": {"title": ["can't be blank"]}})
        raw = body.get("labels") or ""
        labels = [n for n in (raw.split(",") if isinstance(raw, str) else raw) if n]
        iid = self.add_issue(str(body["title"]), str(body.get("description") or ""), labels)
        return Answer(status=201, body=self._issue(request, iid))

    def _get_issue(self, request: Request) -> Answer:
        iid = int(request.params["iid"])
        if iid not in self.issues:
            return Answer(status=404, body={"message": "404 Not found"})
        return Answer(status=200, body=self._issue(request, iid))

    def _put_issue(self, request: Request) -> Answer:
        iid = int(request.params["iid"])
        if iid not in self.issues:
            return Answer(status=404, body={"message": "404 Not found"})
        body = request.body if isinstance(request.body, dict) else {}
        event = body.get("state_event")
        if event in ("close", "reopen"):
            self.issues[iid]["state"] = "closed" if event == "close" else "opened"
            self.issues[iid]["updated"] = _now()
        return Answer(status=200, body=self._issue(request, iid))

    def _get_label(self, request: Request) -> Answer:
        name = request.params["name"]
        if name not in self.labels:
            return Answer(status=404, body={"message": "404 Label Not Found"})
        return Answer(status=200, body=self._label(name))

    def _delete_label(self, request: Request) -> Answer:
        name = request.params["name"]
        if name not in self.labels:
            return Answer(status=404, body={"message": "404 Label Not Found"})
        del self.labels[name]
        self.descriptions.pop(name, None)
        for issue in self.issues.values():  # GitLab takes a deleted label off its issues
            issue["labels"] = [label for label in issue["labels"] if label != name]
        return Answer(status=204)

    def _get_merge_requests(self, request: Request) -> Answer:
        state = request.arg("state", "all")
        source, target = request.arg("source_branch"), request.arg("target_branch")
        items = [
            self._merge_request(request, iid)
            for iid, mr in sorted(self.merge_requests.items())
            if (state == "all" or mr["state"] == state)
            and (source is None or mr["source_branch"] == source)
            and (target is None or mr["target_branch"] == target)
        ]
        return self._page(request, items, f"/projects/{_PROJECT_ID}/merge_requests")

    def _post_merge_requests(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        source, target = str(body.get("source_branch", "")), str(body.get("target_branch", ""))
        if any(
            mr["source_branch"] == source and mr["target_branch"] == target
            for mr in self.merge_requests.values()
            if mr["state"] == "opened"
        ):
            return Answer(
                status=409,
                body={
                    "message": [
                        "Another open merge request already exists for this source branch: !1"
                    ]
                },
            )
        iid = len(self.merge_requests) + 1
        self.merge_requests[iid] = {
            "source_branch": source,
            "target_branch": target,
            "title": str(body.get("title", "")),
            "description": str(body.get("description") or ""),
            "state": "opened",
        }
        return Answer(status=201, body=self._merge_request(request, iid))

    def _merge_request(self, request: Request, iid: int) -> dict[str, Any]:
        stored = self.merge_requests[iid]
        return {
            "id": 8000 + iid,
            "iid": iid,
            "project_id": _PROJECT_ID,
            "title": stored["title"],
            "description": stored["description"],
            "state": stored["state"],
            "created_at": _STAMP,
            "updated_at": _STAMP,
            "target_branch": stored["target_branch"],
            "source_branch": stored["source_branch"],
            "author": self._author(),
            "source_project_id": _PROJECT_ID,
            "target_project_id": _PROJECT_ID,
            "draft": False,
            "merge_status": "can_be_merged",
            "sha": "0" * 40,
            "web_url": f"http://{request.host}/{self.project}/-/merge_requests/{iid}",
            "references": {"short": f"!{iid}", "full": f"{self.project}!{iid}"},
        }

    def _get_notes(self, request: Request) -> Answer:
        iid = int(request.params["iid"])
        items = [self._note(iid, i, text) for i, text in enumerate(self.notes.get(iid, []))]
        return self._page(request, items, f"/projects/{_PROJECT_ID}/issues/{iid}/notes")

    def _post_notes(self, request: Request) -> Answer:
        iid = int(request.params["iid"])
        if iid not in self.issues:
            return Answer(status=404, body={"message": "404 Not found"})
        text = str((request.body or {}).get("body", ""))
        self.notes.setdefault(iid, []).append(text)
        return Answer(status=201, body=self._note(iid, len(self.notes[iid]) - 1, text))

    def _get_labels(self, request: Request) -> Answer:
        items = [self._label(name) for name in self.labels]
        return self._page(request, items, f"/projects/{_PROJECT_ID}/labels")

    def _post_labels(self, request: Request) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        name = str(body.get("name", ""))
        if name in self.labels:
            return Answer(status=409, body={"message": "Label already exists"})
        self.labels[name] = str(body.get("color", "#ededed"))
        self.descriptions[name] = body.get("description")
        return Answer(status=201, body=self._label(name))

    # -- shapes ---------------------------------------------------------------------

    def _page(self, request: Request, items: list[dict[str, Any]], path: str) -> Answer:
        page = paginate(request, items, f"http://{request.host}{PREFIX}{path}", default=20)
        headers = {
            "Link": page.link(always=True),
            "X-Page": str(page.number),
            "X-Per-Page": str(page.size),
            "X-Next-Page": str(page.number + 1) if page.number < page.last else "",
            "X-Prev-Page": str(page.number - 1) if page.number > 1 else "",
            "X-Total": str(page.total),
            "X-Total-Pages": str(page.last),
        }
        return Answer(status=200, body=page.items, headers=headers)

    def _author(self) -> dict[str, Any]:
        return {
            "id": 1,
            "username": "seawall-bot",
            "name": "seawall bot",
            "state": "active",
            "locked": False,
            "avatar_url": None,
            "web_url": "http://gitlab.invalid/seawall-bot",
        }

    def _issue(self, request: Request, iid: int) -> dict[str, Any]:
        stored = self.issues[iid]
        api = f"http://{request.host}{PREFIX}/projects/{_PROJECT_ID}"
        return {
            "id": 5000 + iid,
            "iid": iid,
            "project_id": _PROJECT_ID,
            "title": stored["title"],
            "description": stored["description"],
            "state": stored["state"],
            "created_at": _STAMP,
            "updated_at": stored["updated"],
            "closed_at": None if stored["state"] == "opened" else stored["updated"],
            "closed_by": None,
            "labels": list(stored["labels"]),
            "milestone": None,
            "assignees": [],
            "author": self._author(),
            "type": "ISSUE",
            "assignee": None,
            "user_notes_count": len(self.notes.get(iid, [])),
            "merge_requests_count": 0,
            "upvotes": 0,
            "downvotes": 0,
            "due_date": None,
            "confidential": False,
            "discussion_locked": None,
            "issue_type": "issue",
            "web_url": f"http://{request.host}/{self.project}/-/issues/{iid}",
            "time_stats": {
                "time_estimate": 0,
                "total_time_spent": 0,
                "human_time_estimate": None,
                "human_total_time_spent": None,
            },
            "task_completion_status": {"count": 0, "completed_count": 0},
            "has_tasks": False,
            "_links": {
                "self": f"{api}/issues/{iid}",
                "notes": f"{api}/issues/{iid}/notes",
                "award_emoji": f"{api}/issues/{iid}/award_emoji",
                "project": api,
                "closed_as_duplicate_of": None,
            },
            "references": {
                "short": f"#{iid}",
                "relative": f"#{iid}",
                "full": f"{self.project}#{iid}",
            },
            "severity": "UNKNOWN",
            "moved_to_id": None,
            "service_desk_reply_to": None,
        }

    def _note(self, iid: int, index: int, text: str) -> dict[str, Any]:
        return {
            "id": iid * 1000 + index,
            "type": None,
            "body": text,
            "attachment": None,
            "author": self._author(),
            "created_at": _STAMP,
            "updated_at": _STAMP,
            "system": False,
            "noteable_id": 5000 + iid,
            "noteable_type": "Issue",
            "project_id": _PROJECT_ID,
            "resolvable": False,
            "confidential": False,
            "internal": False,
            "noteable_iid": iid,
        }

    def _label(self, name: str) -> dict[str, Any]:
        return {
            "id": 700 + list(self.labels).index(name),
            "name": name,
            "color": self.labels[name],
            "text_color": "#333333",
            "description": self.descriptions.get(name),
            "description_html": "",
            "open_issues_count": 0,
            "closed_issues_count": 0,
            "open_merge_requests_count": 0,
            "subscribed": False,
            "priority": None,
            "is_project_label": True,
        }


def quoted(project: str) -> str:
    """A project path as it appears in a URL."""
    return quote(project, safe="")


@contextmanager
def gitlab_server(**kwargs: Any) -> Iterator[FakeServer]:
    """Run a ``GitLabService`` on 127.0.0.1 for the duration of the block."""
    with FakeServer(GitLabService(**kwargs)) as server:
        yield server
