"""The seawall pytest plugin: the conformance kits with pytest's assertion rewriting.

Installed with seawall under the ``pytest11`` entry point ``seawall``, so pytest loads
it before collecting: the kit modules are registered for assertion rewriting before
anything imports them, and a failing kit check shows the compared values next to the
message that names the adapter's bug. Nothing else is changed in the test run.
"""

from __future__ import annotations

import pytest

__all__ = ["KIT_MODULES"]

#: The kit modules whose assertions pytest rewrites.
KIT_MODULES = (
    "seawall.testing.trackers",
    "seawall.testing.tracker_faults",
    "seawall.testing.runners",
    "seawall.testing.runner_processes",
)

pytest.register_assert_rewrite(*KIT_MODULES)


def pytest_report_header() -> str:
    return "seawall kits: assertion rewriting on for " + ", ".join(KIT_MODULES)
