"""``seawall adapters check`` tells an optional extra that is not installed (exit 0 unless
the plan checked uses it) from a broken adapter (exit 1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from seawall.cli import main
from seawall.session.step_types import load_schema


def _without_pygithub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "github", None)  # `import github` fails, as uninstalled
    monkeypatch.delitem(sys.modules, "seawall.adapters.trackers.github", raising=False)


def test_a_missing_optional_extra_is_said_but_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without_pygithub(monkeypatch)
    assert main(["adapters", "check", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    jsonschema.validate(document, load_schema(document["schema"]))
    github = next(row for row in document["adapters"] if row["name"] == "github")
    assert github["ok"] is True and github["extra"] == "github"
    assert "pip install 'PyGithub" in github["detail"] and "'.[github]'" in github["detail"]
    assert document["ok"] is True
    assert main(["adapters", "check"]) == 0
    assert "off  tracker  github" in capsys.readouterr().out


def test_the_same_extra_fails_the_check_of_a_plan_that_uses_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _without_pygithub(monkeypatch)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "gh"\n[session.tracker]\nkind = "github"\nrepository = "o/r"\n'
        '[[task]]\nid = "a"\nprompt = "p"\n'
    )
    assert main(["adapters", "check", str(plan), "--repo", str(tmp_path), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    (row,) = document["adapters"]
    assert row["ok"] is False and "pip install 'PyGithub" in row["detail"]
    assert document["ok"] is False
