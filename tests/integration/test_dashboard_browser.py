"""``seawall dashboard`` in a real headless Chromium while a scripted session runs: an
agent's row changes state without a reload, an agent is stopped from the page and the
ledger says by whom, the page fits 1,000 and 1,600 px, and every request it makes goes
to the dashboard itself.

``SEAWALL_WRITE_SCREENSHOTS=1`` also writes the picture the README shows,
``docs/images/dashboard.png``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from seawall.state.store import StateStore, latest_session
from tests.browser import Browser, chromium, open_browser
from tests.integration.sessionkit import make_repo
from tests.integration.test_watch import running, write_plan
from tests.waiting import wait_until

CHROMIUM = chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (CI installs it: apt-get install chromium)",
)
PICTURE = Path(__file__).resolve().parents[2] / "docs" / "images" / "dashboard.png"

ROWS = (
    "Object.fromEntries([...document.querySelectorAll('#agents tr.agent')]"
    ".map(tr => [tr.dataset.task, tr.dataset.state]))"
)
# the page is no wider than the window: what does not fit scrolls inside its table
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


@contextmanager
def dashboard(repo: Path, log_path: Path, *extra: str) -> Iterator[str]:
    """``seawall dashboard`` on a free port; its URL once it listens."""
    with (
        log_path.open("wb") as log,
        running(["dashboard", "--repo", str(repo), "--port", "0", *extra], cwd=repo, log=log) as p,
    ):

        def url() -> str | None:
            found = re.search(r"http://127\.0\.0\.1:\d+/", log_path.read_text())
            return found.group(0) if found else None

        yield wait_until(url, timeout=30, what="the dashboard to listen", process=p)


def rows(browser: Browser) -> dict[str, str]:
    found: dict[str, str] = browser.evaluate(ROWS)
    return found


def row_state(browser: Browser, task: str, wanted: str) -> dict[str, str] | None:
    found = rows(browser)
    return found if found.get(task) == wanted else None


def fits(browser: Browser, width: int) -> dict[str, Any]:
    """At ``width`` px: whether the page fits, and how wide the agents' table is."""
    browser.set_width(width)
    measured: dict[str, Any] = browser.evaluate(
        f"({{fits: {FITS}, width: document.documentElement.clientWidth, "
        "rows: document.querySelectorAll('#agents tr.agent').length})"
    )
    return measured


@needs_chromium
@pytest.mark.slow
def test_the_dashboard_follows_a_running_session_and_stops_an_agent(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(tmp_path, ["busy", "silent"])
    with (
        (tmp_path / "run.log").open("wb") as log,
        running(["run", str(plan), "--repo", str(repo)], cwd=repo, log=log) as run,
    ):
        session = wait_until(
            lambda: latest_session(repo), timeout=30, what="the session to start", process=run
        )
        store = StateStore(repo, session)
        with (
            dashboard(repo, tmp_path / "dashboard.log", "--allow-stop") as url,
            open_browser(CHROMIUM, tmp_path / "profile") as browser,
        ):
            browser.load(url)
            browser.evaluate("window.loadedOnce = true")
            wait_until(
                lambda: row_state(browser, "busy", "running"), timeout=30, what="busy running"
            )
            wait_until(
                lambda: row_state(browser, "silent", "running"), timeout=30, what="silent running"
            )
            wide = fits(browser, 1600)
            narrow = fits(browser, 1000)
            links = browser.evaluate(
                "[...document.querySelectorAll('#agents tr[data-task=busy] a')]"
                ".map(a => [a.textContent, a.getAttribute('href')])"
            )
            # the busy agent ends (its status comes with the wave's review, once the
            # silent one ends too): its row changes state in the same page
            ended = wait_until(
                lambda: row_state(browser, "busy", "finished"), timeout=60, what="busy finished"
            )
            assert ended["silent"] == "running"
            browser.set_width(1600)
            if os.environ.get("SEAWALL_WRITE_SCREENSHOTS") == "1":
                browser.screenshot(PICTURE)
            shot = browser.screenshot(tmp_path / "dashboard.png")
            assert browser.evaluate("window.loadedOnce") is True  # never reloaded
            # the silent agent sleeps for two minutes: stop it from its row
            browser.evaluate(
                "document.querySelector('#agents tr[data-task=silent] button.stop').click()"
            )
            said = wait_until(
                lambda: browser.evaluate("document.getElementById('message').textContent"),
                timeout=30,
                what="the page to say what it asked",
            )
            assert said == "asked the coordinator to stop W1 silent"
            assert run.wait(timeout=90) == 0, (tmp_path / "run.log").read_text()
            wait_until(
                lambda: browser.evaluate("document.body.dataset.phase") == "done",
                timeout=30,
                what="the page to show the session done",
            )
            final = rows(browser)
            report = browser.evaluate(
                "[...document.querySelectorAll('#session-links a')].map(a => a.textContent)"
            )
            # the finished report, served by the dashboard with the files it links to
            served = browser.evaluate(
                "(async () => { const page = await fetch([...document.querySelectorAll("
                "'#session-links a')].find(a => a.textContent === 'report').href); "
                "const html = await page.text(); const href = new URL("
                '/<tr class="agent"[^]*?<a href="([^"]+)"/.exec(html)[1], page.url); '
                "return [page.status, html.includes('data-phase=\"done\"'), "
                "(await fetch(href)).status]; })()"
            )
            diff = browser.evaluate(
                f"fetch({links[-1][1]!r}).then(r => r.text())" if links else "''"
            )
            requests = list(browser.requests)
            errors = list(browser.errors)
    assert errors == []
    assert final == {"busy": "done", "silent": "done"}
    assert wide["fits"] and narrow["fits"] and wide["rows"] == narrow["rows"] == 2
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [label for label, _ in links] == ["transcript", "diff"]
    assert "report" in report and "STATE.md" in report
    assert served == [200, True, 200]
    assert "src/busy.py" in diff
    # everything the page loaded came from the dashboard (the icon is an empty data: URL)
    assert requests and all(r.startswith(url) or r == "data:," for r in requests), requests
    silent = store.load().waves[0].agent("silent")
    assert silent.run is not None and silent.run.truncated
    assert silent.run.stop_reason == "stopped by the user (seawall dashboard)"
