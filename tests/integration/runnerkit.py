"""What the tests of agent runners and other async parts share.

``anyio_backend`` runs ``pytest.mark.anyio`` tests on asyncio; ``workspace`` is an empty
folder for an agent to work in; ``same_dir`` compares two paths as directories. Import
the fixtures into a test module (and name them in its ``__all__``) to use them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["anyio_backend", "same_dir", "workspace"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def same_dir(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are the same directory (links and ``..`` resolved)."""
    return a.resolve() == b.resolve()
