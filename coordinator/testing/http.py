"""Local HTTP fakes of issue hosts, for tests: the shared machinery of the GitHub, GitLab
and third-party fakes (public, so an adapter's own fake gets the same fault injection).

A fake is a standard-library ``ThreadingHTTPServer`` on 127.0.0.1 (an ephemeral port)
serving a ``FakeService``: a small in-memory model of the service that answers routes
with the service's real JSON shapes. Every request is logged; faults are injected per
(method, route) and used once each:

- ``Fault(status=502)``: answer 502 without applying the request;
- ``Fault(status=502, apply=True)``: apply the write, then answer 502 (a lost answer);
- ``Fault(drop=True, apply=True)``: apply, then close the connection without an answer;
- ``Fault(delay=2.0, apply=True)``: apply, then answer late (a client timeout);
- ``Fault(apply_after=2.0)``: hold the request, apply it late, then answer: a write the
  server applies after the client gave up waiting (delays are seconds, so tests scale
  them down rather than wait for real-world timeouts);
- any status with headers, e.g. 403 with rate-limit headers or 429 with Retry-After.

``paginate`` serves a listing a page at a time, with the page links hosts send.
``LocalServer`` is the plumbing under every local fake (a thread, an ephemeral port, a
context manager); ``read_body`` and ``send_json`` read and answer one request.

``operations`` maps the port's operation names (``create_issue``, ``list_issues``, ...)
to (method, route), so a conformance kit can inject faults and count requests by
operation without knowing the service's routes.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlencode, urlsplit

__all__ = [
    "Answer",
    "FakeServer",
    "FakeService",
    "Fault",
    "LocalServer",
    "LoggedRequest",
    "Page",
    "Request",
    "paginate",
    "read_body",
    "send_json",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One injected fault for one request (see the module docstring)."""

    status: int | None = None
    apply: bool = False
    drop: bool = False
    delay: float = 0.0
    apply_after: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass(slots=True, kw_only=True)
class LoggedRequest:
    """One request, logged on arrival; ``answered`` is filled in when it is answered."""

    method: str
    route: str | None
    path: str
    query: Mapping[str, list[str]]
    body: Any
    answered: int | None = None  # the status sent; None if dropped or not yet answered


@dataclass(slots=True, kw_only=True)
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    method: str
    route: str
    params: Mapping[str, str]
    query: Mapping[str, list[str]]
    body: Any
    host: str
    page_cap: int | None = None  # the host's own page-size cap (``FakeService.cap_pages``)

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One page of a paged listing (see ``paginate``): its items and where the others are."""

    items: list[Any]
    number: int  # 1-based
    size: int
    last: int
    total: int
    url: Callable[[int], str] = field(repr=False)  # the absolute URL of page N

    def link(self, *, always: bool = False) -> str:
        """The ``Link`` header: next and last before the last page, prev and first after
        the first (``always``: first and last on every page, as GitLab sends them)."""
        rels = []
        if self.number < self.last:
            rels.append(("next", self.number + 1))
        if self.number > 1:
            rels.append(("prev", self.number - 1))
        if always or self.number > 1:
            rels.append(("first", 1))
        if always or self.number < self.last:
            rels.append(("last", self.last))
        return ", ".join(f'<{self.url(number)}>; rel="{rel}"' for rel, number in rels)


def paginate(
    request: Request,
    items: list[Any],
    base: str,
    *,
    size: str = "per_page",
    default: int = 30,
    maximum: int = 100,
) -> Page:
    """The page of ``items`` the request's ``page`` and ``size`` parameters ask for.

    ``base`` is the listing's absolute URL; the page links keep the request's other
    query parameters. The page size is clamped to 1..``maximum``, as hosts clamp it, and
    to the service's cap when a test set one (a host serving fewer than the client asked).
    """
    if request.page_cap is not None:
        maximum = min(maximum, request.page_cap)
    per = max(1, min(maximum, int(request.arg(size, str(default)) or default)))
    number = max(1, int(request.arg("page", "1") or 1))
    params = {key: values[-1] for key, values in request.query.items() if key != "page"}

    def url(page: int) -> str:
        return f"{base}?{urlencode({**params, 'page': page})}"

    return Page(
        items=items[(number - 1) * per : number * per],
        number=number,
        size=per,
        last=max(1, -(-len(items) // per)),
        total=len(items),
        url=url,
    )


class FakeService:
    """Routes, state and faults of one fake service. Subclasses implement ``route``,
    ``authorized`` and ``answer``; every public method is thread-safe."""

    #: The port's operation names mapped to (method, route), for fault hooks.
    operations: ClassVar[Mapping[str, tuple[str, str]]] = {}

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[LoggedRequest] = []
        self._faults: dict[tuple[str, str], deque[Fault]] = {}
        self._page_cap: int | None = None

    # -- for tests ------------------------------------------------------------------

    def cap_pages(self, size: int | None) -> None:
        """Serve at most ``size`` items a page whatever the client asks (as Gitea caps
        its pages at 50); None lifts the cap."""
        with self.lock:
            self._page_cap = size

    def inject(self, method: str, route: str, fault: Fault, *, times: int = 1) -> None:
        """Use ``fault`` for the next ``times`` requests of ``method`` on ``route``."""
        with self.lock:
            self._faults.setdefault((method.upper(), route), deque()).extend([fault] * times)

    def count(self, method: str | None = None, route: str | None = None) -> int:
        """How many requests were logged, optionally of one method and route."""
        with self.lock:
            return sum(
                1
                for r in self.requests
                if (method is None or r.method == method.upper())
                and (route is None or r.route == route)
            )

    def reset_log(self) -> None:
        with self.lock:
            self.requests.clear()

    def inject_operation(self, operation: str, fault: Fault, *, times: int = 1) -> None:
        """``inject`` by the port's operation name (see ``operations``)."""
        method, route = self.operations[operation]
        self.inject(method, route, fault, times=times)

    def count_operation(self, operation: str) -> int:
        """``count`` by the port's operation name (see ``operations``)."""
        method, route = self.operations[operation]
        return self.count(method, route)

    # -- for subclasses -------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        raise NotImplementedError

    def authorized(self, headers: Mapping[str, str]) -> Answer | None:
        """None when the request may proceed, else the refusal. Header names are lower case."""
        raise NotImplementedError

    def answer(self, request: Request) -> Answer:
        raise NotImplementedError

    def common_headers(self) -> dict[str, str]:
        return {}

    # -- dispatch -------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        method = handler.command
        split = urlsplit(handler.path)
        query = parse_qs(split.query, keep_blank_values=True)
        body = read_body(handler)
        matched = self.route(method, split.path)
        route = matched[0] if matched else None
        logged = self._log(method, route, split.path, query, body)
        fault = self._take(method, route) if route else None
        headers = {k.lower(): v for k, v in handler.headers.items()}
        answer = self.authorized(headers) or (
            self._serve(method, matched, query, body, handler, fault)
            if matched
            else Answer(status=404, body={"message": "Not Found"})
        )
        if fault is not None and fault.drop:
            handler.close_connection = True
            return
        logged.answered = answer.status
        _send(handler, answer, self.common_headers())

    def _serve(
        self,
        method: str,
        matched: tuple[str, dict[str, str]],
        query: dict[str, list[str]],
        body: Any,
        handler: BaseHTTPRequestHandler,
        fault: Fault | None,
    ) -> Answer:
        route, params = matched
        request = Request(
            method=method,
            route=route,
            params=params,
            query=query,
            body=body,
            host=handler.headers.get("Host", "127.0.0.1"),
            page_cap=self._page_cap,
        )
        if fault is None:
            return self.answer(request)
        if fault.apply_after is not None:
            time.sleep(fault.apply_after)
            late = self.answer(request)
            return late if fault.status is None else _fault_answer(fault)
        applied = self.answer(request) if fault.apply or fault.status is None else None
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status is None:
            assert applied is not None
            return applied
        return _fault_answer(fault)

    def _take(self, method: str, route: str) -> Fault | None:
        with self.lock:
            queue = self._faults.get((method, route))
            return queue.popleft() if queue else None

    def _log(
        self,
        method: str,
        route: str | None,
        path: str,
        query: dict[str, list[str]],
        body: Any,
    ) -> LoggedRequest:
        logged = LoggedRequest(method=method, route=route, path=path, query=query, body=body)
        with self.lock:
            self.requests.append(logged)
        return logged


def _fault_answer(fault: Fault) -> Answer:
    assert fault.status is not None
    return Answer(
        status=fault.status,
        body=fault.body if fault.body is not None else {"message": _reason(fault.status)},
        headers=dict(fault.headers),
    )


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def read_body(handler: BaseHTTPRequestHandler) -> Any:
    """The request's body: parsed JSON, else text; None when it has none."""
    length = int(handler.headers.get("Content-Length") or 0)
    if not length:
        return None
    raw = handler.rfile.read(length)
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: Any,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Answer with ``body`` as JSON (no body for None); a client that hung up is ignored."""
    payload = b"" if body is None else json.dumps(body).encode("utf-8")
    try:
        handler.send_response(status)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a timeout test); nothing to answer to


def _send(handler: BaseHTTPRequestHandler, answer: Answer, common: Mapping[str, str]) -> None:
    send_json(handler, answer.status, answer.body, {**common, **answer.headers})


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def handle(self) -> None:
        if self.server.keep_alive:
            self.protocol_version = "HTTP/1.1"  # before the first request is read
        super().handle()

    def _dispatch(self) -> None:
        self.server.dispatch(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

    def log_message(self, format: str, *args: Any) -> None:
        return None  # the server's owner keeps its own request log


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, dispatch: Callable[[BaseHTTPRequestHandler], None], *, keep_alive: bool
    ) -> None:
        self.dispatch = dispatch
        self.keep_alive = keep_alive
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up mid-answer is expected in fault tests


class LocalServer:
    """An HTTP server on 127.0.0.1 (an ephemeral port) in a thread; a context manager.

    ``dispatch(handler)`` answers each request; ``keep_alive`` speaks HTTP/1.1 with
    persistent connections (as model APIs do), else HTTP/1.0.
    """

    def __init__(
        self, dispatch: Callable[[BaseHTTPRequestHandler], None], *, keep_alive: bool = False
    ) -> None:
        self._server = _Server(dispatch, keep_alive=keep_alive)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


class FakeServer(LocalServer):
    """Runs a ``FakeService`` on 127.0.0.1 in a thread; a context manager."""

    def __init__(self, service: FakeService) -> None:
        self.service = service
        super().__init__(service.handle)
