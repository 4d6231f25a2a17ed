"""The carryover CLI against the GitHub and GitLab fakes, and the trackers' extras."""

from __future__ import annotations

import importlib
import json
import logging
import sys
from pathlib import Path

import pytest

from seawall.cli import main
from seawall.errors import ConfigurationError, MissingExtraError
from seawall.model import TrackerConfig
from seawall.tracker import open_tracker
from tests.fakes.github_server import GitHubService, github_server
from tests.fakes.gitlab_server import GitLabService, gitlab_server


def test_list_on_github_prints_fingerprints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t-secret")
    with github_server(token="t-secret") as server:
        assert isinstance(server.service, GitHubService)
        server.service.add_issue(
            "[Carryover] [FAILED] x",
            "b\n<!-- seawall:carryover 00112233445566aa -->",
            ["carryover"],
        )
        server.service.add_issue("plain", "no marker", ["carryover"])
        args = ["--tracker", "github", "--project", "octo/demo", "--url", server.origin + "/api/v3"]
        assert main(["carryover", "list", "--json", *args]) == 0
    rows = json.loads(capsys.readouterr().out)["issues"]
    assert [(r["number"], r["fingerprint"]) for r in rows] == [(1, "00112233445566aa"), (2, None)]
    assert rows[0]["labels"] == ["carryover"]


def test_list_errors_name_the_tracker_without_the_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", "wrong-secret")
    with gitlab_server(token="right") as server:
        assert isinstance(server.service, GitLabService)
        args = ["--tracker", "gitlab", "--project", "group/demo", "--url", server.origin]
        assert main(["carryover", "list", *args]) == 1
    err = capsys.readouterr().err
    assert "gitlab: list issues failed: HTTP 401" in err and "wrong-secret" not in err


def test_remote_trackers_need_a_repository(tmp_path: Path) -> None:
    for kind in ("github", "gitlab"):
        with pytest.raises(ConfigurationError, match="needs repository"):
            open_tracker(TrackerConfig(kind=kind), root=tmp_path)


@pytest.mark.parametrize(
    ("module", "sdk", "hint"),
    [
        ("seawall.adapters.trackers.github", "github", "pip install 'PyGithub>=2.3'"),
        ("seawall.adapters.trackers.gitlab", "gitlab", "pip install 'python-gitlab>=4.4'"),
    ],
)
def test_a_missing_sdk_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, module: str, sdk: str, hint: str
) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)  # makes `import sdk` fail
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError, match=hint.replace("[", r"\[").replace("]", r"\]")):
        importlib.import_module(module)
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_debug_logs_of_both_clients_never_show_the_token(caplog: pytest.LogCaptureFixture) -> None:
    from seawall.adapters.trackers.github import GitHubTracker
    from seawall.adapters.trackers.gitlab import GitLabTracker

    caplog.set_level(logging.DEBUG)
    with github_server(token="gh-secret-abc") as server:
        url = server.origin + "/api/v3"
        gh = GitHubTracker(
            "octo/demo", token="gh-secret-abc", base_url=url, request_interval=0, write_interval=0
        )
        with gh:
            gh.create_issue(title="t", body="b", labels=[])
            assert len(gh.list_issues("")) == 1
    with (
        gitlab_server(token="gl-secret-abc") as server,
        GitLabTracker("group/demo", token="gl-secret-abc", url=server.origin) as gl,
    ):
        gl.create_issue(title="t", body="b", labels=[])
        assert len(gl.list_issues("")) == 1
    assert "POST" in caplog.text or "issues" in caplog.text, "the clients did log at DEBUG"
    assert "gh-secret-abc" not in caplog.text and "gl-secret-abc" not in caplog.text
