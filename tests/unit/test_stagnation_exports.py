"""The public namespaces of ``seawall.stagnation``/``breakers``/``tail`` do not drift."""

from __future__ import annotations

import types

import pytest

import seawall.breakers
import seawall.stagnation
import seawall.stagnation.transcript_tail


@pytest.mark.parametrize(
    "module", [seawall.breakers, seawall.stagnation, seawall.stagnation.transcript_tail], ids=str
)
def test_all_lists_exactly_the_public_names(module: types.ModuleType) -> None:
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", module.__name__).startswith(module.__name__)
    }
    assert set(module.__all__) >= public
    for name in module.__all__:
        assert hasattr(module, name), name
    assert list(module.__all__) == sorted(module.__all__, key=lambda n: (not n.isupper(), n))
