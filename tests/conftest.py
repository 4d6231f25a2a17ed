"""Suite-wide pytest settings.

``-n auto`` starts two workers per CPU (at most eight): most of the suite's time is
spent waiting on real processes (agent CLIs, git, model answers, a provider's reset),
not computing, so one worker per CPU leaves the machine half idle
(``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number outright).
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own reading of it
    return min(8, 2 * (os.cpu_count() or 1))
