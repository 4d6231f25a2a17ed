"""Claude Code's sandbox in a lead's settings: merged into the user's, never dropping a
key, idempotent; and the prerequisites, named with the package that brings each."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from seawall.errors import ConfigurationError
from seawall.hooks.install import install_hooks
from seawall.hooks.lead_sandbox import (
    ensure_sandbox,
    install_sandbox,
    lead_boundary,
    turn_sandbox_off,
)
from seawall.sandbox.claude_code import Prerequisites, check_prerequisites

USER = {
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "1"},
    "model": "opus",
    "sandbox": {
        "enabled": False,
        "allowUnsandboxedCommands": True,
        "autoAllowBashIfSandboxed": False,
        "excludedCommands": ["docker:*"],
        "network": {"allowedDomains": ["pypi.org", "files.pythonhosted.org"]},
        "filesystem": {"allowWrite": ["/opt/cache"], "denyRead": ["~/.aws"]},
    },
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    return Path(os.path.realpath(root))


def _settings(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".claude" / "settings.json").read_text())
    return data


def _write(repo: Path, settings: object) -> None:
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))


def test_the_users_keys_are_kept_and_seawalls_added(repo: Path) -> None:
    _write(repo, USER)
    assert install_sandbox(repo).changed
    got = _settings(repo)
    assert {k: got[k] for k in ("permissions", "env", "model")} == {
        k: USER[k] for k in ("permissions", "env", "model")
    }
    sandbox = got["sandbox"]
    assert sandbox["enabled"] is True and sandbox["failIfUnavailable"] is True
    assert sandbox["allowUnsandboxedCommands"] is False  # the user's true would let it out
    assert sandbox["autoAllowBashIfSandboxed"] is False
    assert sandbox["network"] == USER["sandbox"]["network"]  # type: ignore[index]
    assert sandbox["excludedCommands"] == ["docker:*", "seawall:*"]
    files = sandbox["filesystem"]
    assert files["denyRead"] == ["~/.aws"]
    worktrees = str(repo.parent / ".proj.seawall-worktrees")
    assert files["allowWrite"] == ["/opt/cache", str(repo), worktrees]
    assert files["denyWrite"] == [
        str(repo / ".git"),
        str(repo / ".seawall"),
        str(repo / ".claude" / "settings.json"),
        str(repo / ".claude" / "settings.local.json"),
    ]
    assert (repo / ".seawall").is_dir()  # a folder to mount read-only, not an empty file


def test_installing_again_changes_nothing(repo: Path) -> None:
    _write(repo, USER)
    install_sandbox(repo)
    install_hooks(repo, command="/bin/seawall")
    before = (repo / ".claude" / "settings.json").read_bytes()
    assert not install_sandbox(repo).changed
    assert not install_hooks(repo, command="/bin/seawall").changed
    assert (repo / ".claude" / "settings.json").read_bytes() == before
    assert ensure_sandbox(repo, prerequisites=_fail_if_asked) == ""


def test_hooks_and_sandbox_share_the_file_in_either_order(repo: Path) -> None:
    install_hooks(repo, command="/bin/seawall")
    install_sandbox(repo)
    both = _settings(repo)
    assert set(both) == {"hooks", "sandbox"}
    _write(repo, {})
    install_sandbox(repo)
    install_hooks(repo, command="/bin/seawall")
    assert _settings(repo) == both


@pytest.mark.parametrize(
    "broken",
    [
        {"sandbox": ["enabled"]},
        {"sandbox": {"filesystem": "rw"}},
        {"sandbox": {"filesystem": {"allowWrite": "/tmp"}}},
        {"sandbox": {"excludedCommands": "seawall"}},
    ],
)
def test_a_part_of_the_wrong_type_is_refused_never_overwritten(
    repo: Path, broken: dict[str, Any]
) -> None:
    _write(repo, broken)
    before = (repo / ".claude" / "settings.json").read_bytes()
    with pytest.raises(ConfigurationError, match="fix it by hand"):
        install_sandbox(repo)
    assert (repo / ".claude" / "settings.json").read_bytes() == before
    # seawall next goes on, and says why it wrote nothing
    note = ensure_sandbox(repo, prerequisites=Prerequisites)
    assert "not written" in note and "fix it by hand" in note
    assert (repo / ".claude" / "settings.json").read_bytes() == before


def test_next_adds_the_plans_worktree_folder(repo: Path, tmp_path: Path) -> None:
    install_sandbox(repo)
    elsewhere = tmp_path / "trees"
    note = ensure_sandbox(repo, worktree_root=str(elsewhere), prerequisites=Prerequisites)
    assert "written to" in note
    allowed = _settings(repo)["sandbox"]["filesystem"]["allowWrite"]
    assert allowed[-1] == str(elsewhere) and str(repo) in allowed
    assert ensure_sandbox(repo, worktree_root=str(elsewhere), prerequisites=_fail_if_asked) == ""


def test_next_leaves_a_sandbox_the_user_turned_off(repo: Path) -> None:
    _write(repo, {"model": "opus"})
    assert turn_sandbox_off(repo).changed
    assert _settings(repo) == {"model": "opus", "sandbox": {"enabled": False}}
    assert ensure_sandbox(repo, prerequisites=_fail_if_asked) == ""
    assert not turn_sandbox_off(repo).changed
    assert lead_boundary(repo, prerequisites=Prerequisites).sandbox_off


def test_next_writes_nothing_where_the_sandbox_cannot_run(repo: Path) -> None:
    def missing() -> Prerequisites:
        return check_prerequisites(platform="linux", which=_which(absent={"bwrap"}))

    note = ensure_sandbox(repo, prerequisites=missing)
    assert "no OS sandbox" in note and "apt-get install -y bubblewrap" in note
    assert not (repo / ".claude" / "settings.json").exists()


def test_the_boundary_report_names_every_layer(repo: Path) -> None:
    boundary = lead_boundary(repo, prerequisites=Prerequisites)
    assert not boundary.complete() and "no sandbox settings" in boundary.gaps
    install_hooks(repo, command="/bin/seawall")
    assert not lead_boundary(repo, prerequisites=Prerequisites).complete()
    install_sandbox(repo)
    boundary = lead_boundary(repo, prerequisites=Prerequisites)
    assert boundary.complete()
    text = "\n".join(boundary.lines())
    assert "seawall's hooks: all installed" in text
    assert f"writable: {repo}, " in text and f"{repo}/.seawall" in text
    assert "network: closed" in text
    assert "per-task scopes: seawall's PreToolUse hook and the post-wave check" in text
    settings = _settings(repo)
    settings["sandbox"]["allowUnsandboxedCommands"] = True
    _write(repo, settings)
    boundary = lead_boundary(repo, prerequisites=Prerequisites)
    assert boundary.gaps == ("allowUnsandboxedCommands is not false",)
    gone = lead_boundary(repo, prerequisites=lambda: Prerequisites(problems=("no bwrap",)))
    assert not gone.complete(hooks=False) and "prerequisites: no bwrap" in gone.lines()


def _which(*, absent: set[str], present: Sequence[str] = ("apt-get",)) -> Any:
    def which(program: str) -> str | None:
        if program in absent:
            return None
        if program in ("bwrap", "socat", *present):
            return f"/usr/bin/{program}"
        return None

    return which


def _fail_if_asked() -> Prerequisites:
    raise AssertionError("the prerequisites were checked with nothing to write")


@pytest.mark.parametrize(
    ("absent", "present", "expected"),
    [
        (
            {"bwrap"},
            ("apt-get",),
            "needs bubblewrap, which is not installed: apt-get install -y bubblewrap",
        ),
        ({"socat"}, ("dnf",), "needs socat, which is not installed: dnf install -y socat"),
        (
            {"bwrap", "socat"},
            ("apk",),
            "needs bubblewrap and socat, which are not installed: apk add bubblewrap socat",
        ),
        ({"bwrap", "socat"}, (), "install the packages bubblewrap and socat"),
    ],
)
def test_a_missing_program_is_named_with_its_package(
    absent: set[str], present: Sequence[str], expected: str
) -> None:
    found = check_prerequisites(platform="linux", which=_which(absent=absent, present=present))
    assert not found.ok
    assert expected in found.problems[0]


def test_bubblewrap_that_cannot_make_namespaces_is_a_problem() -> None:
    seen: list[Sequence[str]] = []

    def probe(argv: Sequence[str]) -> str:
        seen.append(argv)
        return "bwrap: setting up uid map: Permission denied"

    found = check_prerequisites(platform="linux", which=_which(absent=set()), probe=probe)
    assert seen and seen[0][0] == "/usr/bin/bwrap" and "--unshare-net" in seen[0]
    assert not found.ok
    assert "bubblewrap cannot make its sandbox here (bwrap: setting up uid map" in found.problems[0]
    assert "user namespaces" in found.problems[0]


def test_other_platforms() -> None:
    assert check_prerequisites(platform="darwin", which=_which(absent={"bwrap", "socat"})).ok
    windows = check_prerequisites(platform="win32")
    assert not windows.ok and "WSL2" in windows.problems[0]


@pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("socat") is None,
    reason="bubblewrap and socat are not installed here (.ci/run installs them)",
)
def test_this_machine_runs_the_sandbox() -> None:
    found = check_prerequisites()
    assert found.ok, found.problems
