"""The dashboard's HTTP server: the standard library's threading server, local by default.

Routes (every one a GET but the stop):

- ``/``, ``/dashboard.js``, ``/dashboard.css``: the page, served from this package;
- ``/api/sessions``: every session (and the runner's queue), ``/api/sessions/<id>``:
  one session's rows, both JSON documents the page polls every second;
- ``/s/<id>/diff/<wave>/<task>``: the agent's change so far, as a patch;
- ``/s/<id>/<file>``: the session's STATE.md, report, diffs and transcripts;
- ``POST /api/sessions/<id>/stop`` (``{"wave": N, "task": "t"}`` for one agent, ``{}``
  for the session): only with stops allowed, and only with the page's token in the
  ``X-Seawall-Token`` header, which no other site's page can send.

A request whose ``Host`` is not the address the server is bound to is refused (a web
page elsewhere cannot reach the dashboard by a name of its own), and every response
forbids loading anything from anywhere else (``Content-Security-Policy``).
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any
from urllib.parse import unquote, urlsplit

from seawall.codec import encode
from seawall.dashboard.site import Dashboard, StopRefused
from seawall.errors import SeawallError

__all__ = ["DashboardServer", "is_loopback", "serve"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STATIC = {
    "/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
    "/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
}
_MAX_BODY = 4096


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DashboardServer(ThreadingHTTPServer):
    """One dashboard, served on ``host``:``port`` (port 0: a free one)."""

    daemon_threads = True

    def __init__(self, dashboard: Dashboard, host: str, port: int) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.dashboard = dashboard
        self.host = host
        self.token = secrets.token_urlsafe(24)
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.server_address[1]}/"

    def allows_host(self, header: str | None) -> bool:
        """Whether a request naming ``header`` as its host is for this server: any name
        on an address open to others, the loopback names on a local one."""
        if not is_loopback(self.host):
            return True
        if not header:
            return False
        name = urlsplit(f"//{header}").hostname or ""
        return is_loopback(name)


def serve(dashboard: Dashboard, *, host: str = "127.0.0.1", port: int = 0) -> DashboardServer:
    """A server for ``dashboard``, bound and listening; call ``serve_forever`` on it."""
    return DashboardServer(dashboard, host, port)


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "seawall-dashboard"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a page polling every second would fill the terminal."""

    def do_GET(self) -> None:
        if not self._host_allowed():
            return
        try:
            self._get(urlsplit(self.path).path)
        except SeawallError as exc:  # a ledger that cannot be read, a repository that is not
            self._text(HTTPStatus.INTERNAL_SERVER_ERROR, f"{exc}\n")

    def _get(self, path: str) -> None:
        dashboard = self.server.dashboard
        if path == "/":
            self._page()
        elif path in _STATIC:
            name, kind = _STATIC[path]
            self._send(HTTPStatus.OK, _asset(name), kind)
        elif path == "/api/sessions":
            self._json(HTTPStatus.OK, dashboard.listing())
        elif path.startswith("/api/sessions/"):
            document = dashboard.session(unquote(path.removeprefix("/api/sessions/")))
            if document is None:
                self._text(HTTPStatus.NOT_FOUND, "no such session\n")
            else:
                self._json(HTTPStatus.OK, document)
        elif path.startswith("/s/"):
            self._session_file([unquote(p) for p in path.removeprefix("/s/").split("/")])
        else:
            self._text(HTTPStatus.NOT_FOUND, "not found\n")

    def do_POST(self) -> None:
        if not self._host_allowed():
            return
        path = urlsplit(self.path).path
        if not (path.startswith("/api/sessions/") and path.endswith("/stop")):
            self._text(HTTPStatus.NOT_FOUND, "not found\n")
            return
        session = unquote(path.removeprefix("/api/sessions/").removesuffix("/stop"))
        if not secrets.compare_digest(self.headers.get("X-Seawall-Token", ""), self.server.token):
            self._text(HTTPStatus.FORBIDDEN, "a stop needs the dashboard page's token\n")
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            if length > _MAX_BODY:
                raise ValueError(f"the body is {length} bytes, more than {_MAX_BODY}")
            asked = json.loads(self.rfile.read(length) or b"{}")
            task, wave = _stop_target(asked)
            said = self.server.dashboard.stop(session, wave=wave, task=task)
        except StopRefused as exc:
            self._text(HTTPStatus.FORBIDDEN, f"{exc}\n")
            return
        except ValueError as exc:
            self._text(HTTPStatus.BAD_REQUEST, f"{exc}\n")
            return
        self._json(HTTPStatus.OK, {"said": said})

    def _host_allowed(self) -> bool:
        if self.server.allows_host(self.headers.get("Host")):
            return True
        self._text(HTTPStatus.MISDIRECTED_REQUEST, "this dashboard answers on its own address\n")
        return False

    def _page(self) -> None:
        page = _asset("page.html").decode("utf-8")
        dashboard = self.server.dashboard
        page = page.replace("{{token}}", self.server.token).replace(
            "{{runner}}", "yes" if dashboard.runner is not None else "no"
        )
        self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")

    def _session_file(self, parts: list[str]) -> None:
        dashboard = self.server.dashboard
        session, rest = parts[0], tuple(parts[1:])
        if len(rest) == 3 and rest[0] == "diff" and rest[1].isdigit():
            patch = dashboard.diff(session, int(rest[1]), rest[2])
            if patch is None:
                self._text(HTTPStatus.NOT_FOUND, "no change recorded for this agent yet\n")
            else:
                self._text(HTTPStatus.OK, patch or "(no change)\n")
            return
        path = dashboard.file(session, rest)
        if path is None:
            self._text(HTTPStatus.NOT_FOUND, "not found\n")
            return
        kind = "text/html; charset=utf-8" if path.suffix == ".html" else "text/plain; charset=utf-8"
        self._send(HTTPStatus.OK, path.read_bytes(), kind, page_csp=path.suffix != ".html")

    def _json(self, status: HTTPStatus, document: object) -> None:
        self._send(status, encode(document), "application/json")

    def _text(self, status: HTTPStatus, text: str) -> None:
        self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, kind: str, *, page_csp: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        # the report has no script at all, and its styles inline
        self.send_header("Content-Security-Policy", CSP if page_csp else REPORT_CSP)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _stop_target(asked: object) -> tuple[str | None, int | None]:
    """The agent a stop's body names (``task`` and ``wave``), or none: the session."""
    if not isinstance(asked, dict):
        raise ValueError("a stop's body is a JSON object")
    task, wave = asked.get("task"), asked.get("wave")
    if task is None and wave is None:
        return None, None
    if not isinstance(task, str) or not isinstance(wave, int) or isinstance(wave, bool):
        raise ValueError('a stop of one agent names it: {"wave": <number>, "task": "<id>"}')
    return task, wave


def _asset(name: str) -> bytes:
    return files("seawall.dashboard").joinpath(name).read_bytes()
