"""A headless Chromium driven over the DevTools protocol on a pipe, with the standard library.

Chromium reads commands on fd 3 and writes replies and events on fd 4, each message one
JSON object ended by a NUL byte (``--remote-debugging-pipe``). This is enough to load a
page, collect its console errors and every URL it requests, set its width, read values
out of its DOM and take a screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Browser", "chromium", "open_browser"]

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Browser:
    process: subprocess.Popen[bytes]
    to_browser: int
    from_browser: int
    timeout: float = 30.0
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    _next_id: int = 0
    _buffer: bytes = b""
    _session: str | None = None

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _messages(self, deadline: float) -> Iterator[dict[str, Any]]:
        with selectors.DefaultSelector() as selector:
            selector.register(self.from_browser, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                while b"\0" in self._buffer:
                    raw, self._buffer = self._buffer.split(b"\0", 1)
                    message: dict[str, Any] = json.loads(raw)
                    self._note(message)
                    yield message
                if not selector.select(max(0.0, deadline - time.monotonic())):
                    break
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk
        raise TimeoutError("chromium did not answer in time")

    def _note(self, message: dict[str, Any]) -> None:
        """Collect what counts as a console error: errors logged, thrown or reported."""
        method, params = message.get("method"), message.get("params") or {}
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            self.errors.append(f"exception: {details.get('text')} {details.get('exception')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Network.requestWillBeSent":
            self.requests.append((params.get("request") or {}).get("url", ""))
        elif method == "Log.entryAdded" and (params.get("entry") or {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')}")

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command to the page (once attached) and return its result."""
        command = self._send(method, params, self._session)
        for message in self._messages(time.monotonic() + self.timeout):
            if message.get("id") == command:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result") or {}
                return result
        raise AssertionError("unreachable")  # _messages raises on its deadline

    def _wait_for(self, method: str) -> dict[str, Any]:
        for message in self._messages(time.monotonic() + self.timeout):
            if message.get("method") == method:
                params: dict[str, Any] = message.get("params") or {}
                return params
        raise AssertionError("unreachable")

    def load(self, url: str) -> None:
        """Open a page target, attach to it, and load ``url`` to its load event."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")
        self.evaluate("new Promise(done => requestAnimationFrame(() => done(true)))")

    def set_width(self, width: int, height: int = 900) -> None:
        """Lay the page out in a window ``width`` CSS pixels wide (after ``load``)."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.evaluate("new Promise(done => requestAnimationFrame(() => done(true)))")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(data["data"]))
        return path


@contextmanager
def open_browser(executable: str, profile: Path, *, timeout: float = 30.0) -> Iterator[Browser]:
    """A headless Chromium with its profile in ``profile``; stopped on exit."""
    commands_read, commands_write = os.pipe()
    replies_read, replies_write = os.pipe()

    def wire_pipes() -> None:  # in the child: fd 3 is its input, fd 4 its output
        # move both out of the way first: either may itself be fd 3 or 4
        high_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD, 10)
        high_write = fcntl.fcntl(replies_write, fcntl.F_DUPFD, 10)
        os.dup2(high_read, 3)
        os.dup2(high_write, 4)

    process = subprocess.Popen(
        [executable, *_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(3, 4),
        preexec_fn=wire_pipes,
    )
    os.close(commands_read)
    os.close(replies_write)
    browser = Browser(process, commands_write, replies_read, timeout=timeout)
    try:
        yield browser
    finally:
        try:
            browser.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            process.kill()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)
        os.close(commands_write)
        os.close(replies_read)
