"""What travels to a Ray worker: the sandbox and the manifest re-rooted, the job's code.

Plain functions of the ray runner's modules, without Ray: the manifest the session
wrote is checked against its digest before it leaves and again on arrival, and is
written on the worker with the agent's workspace and state root moved to the clone;
local ``py_modules`` go to ``ray.init``, the rest of ``runtime_env`` to each task.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from seawall.adapters.runners.ray.options import Placement, job_runtime_env
from seawall.adapters.runners.ray.scope import PackedScope, pack_scope, unpack_scope
from seawall.errors import RunnerError
from seawall.model import Enforcement, Isolation, Task, Wave
from seawall.runner import AgentRequest
from seawall.sandbox.policy import workspace_policy
from seawall.scope.manifest import (
    build_manifest,
    load_manifest,
    manifest_digest,
    write_manifest,
)


def _request(tmp_path: Path) -> AgentRequest:
    repo = tmp_path / "repo"
    worktree = tmp_path / "worktrees" / "a"
    (repo / "src").mkdir(parents=True)
    worktree.mkdir(parents=True)
    wave = Wave(
        number=1,
        tasks=(Task(id="a", prompt="p", scope=("src/a.py",)), Task(id="b", prompt="p")),
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.STRICT,
        max_turns=10,
    )
    manifest = build_manifest(
        session="s1", wave=wave, repo=repo, workspaces={"a": worktree, "b": tmp_path / "b"}
    )
    path = write_manifest(manifest)
    return AgentRequest(
        task_id="a",
        prompt="p",
        workspace=worktree,
        session="s1",
        wave=1,
        sandbox=workspace_policy(worktree).with_paths([tmp_path / "cache"]),
        manifest=path,
        manifest_sha256=manifest_digest(path),
    )


def test_the_manifest_and_sandbox_are_re_rooted_to_the_clone(tmp_path: Path) -> None:
    request = _request(tmp_path)
    (tmp_path / "cache").mkdir()
    packed = pack_scope(request)
    assert packed.manifest is not None
    clone = tmp_path / "worker" / "repo"
    clone.mkdir(parents=True)
    scope = unpack_scope(
        packed,
        task_id="a",
        local_root=str(request.workspace.resolve()),
        clone=clone,
        workspace=clone,
        state_root=tmp_path / "worker" / "state",
    )
    assert scope.sandbox is not None
    assert scope.sandbox.writable == (clone, tmp_path / "cache")
    assert scope.manifest == tmp_path / "worker/state/.seawall/s1/wave-1/scope.json"
    copy = load_manifest(scope.manifest, session="s1", digest=scope.manifest_sha256)
    assert copy.repo == str(tmp_path / "worker" / "state")
    mine = copy.agent("a")
    assert mine is not None and mine.workspace == str(clone) and mine.paths == ("src/a.py",)
    other = copy.agent("b")
    assert other is not None and other.workspace == str((tmp_path / "b").resolve())
    assert copy.enforcement is Enforcement.STRICT


def test_a_sandbox_path_the_worker_lacks_is_not_granted(tmp_path: Path) -> None:
    request = _request(tmp_path)  # tmp_path/"cache" does not exist here
    clone = tmp_path / "clone"
    clone.mkdir()
    scope = unpack_scope(
        pack_scope(request),
        task_id="a",
        local_root=str(request.workspace.resolve()),
        clone=clone,
        workspace=clone,
        state_root=tmp_path / "state",
    )
    assert scope.sandbox is not None and scope.sandbox.writable == (clone,)


def test_a_manifest_changed_after_seawall_wrote_it_is_not_sent(tmp_path: Path) -> None:
    request = _request(tmp_path)
    assert request.manifest is not None
    text = request.manifest.read_text().replace("src/a.py", "**")
    request.manifest.write_text(text)
    with pytest.raises(RunnerError, match="changed after seawall wrote it"):
        pack_scope(request)


def test_a_manifest_changed_on_its_way_is_refused_on_the_worker(tmp_path: Path) -> None:
    packed = pack_scope(_request(tmp_path))
    assert packed.manifest is not None
    forged = PackedScope(
        sandbox=packed.sandbox,
        manifest=packed.manifest.replace(b"src/a.py", b"**"),
        manifest_sha256=packed.manifest_sha256,
    )
    with pytest.raises(RunnerError, match="changed on its way"):
        unpack_scope(
            forged,
            task_id="a",
            local_root=str(tmp_path),
            clone=tmp_path,
            workspace=tmp_path,
            state_root=tmp_path / "state",
        )
    assert hashlib.sha256(forged.manifest or b"").hexdigest() != packed.manifest_sha256


def test_local_py_modules_go_to_the_job_and_the_rest_to_each_task(tmp_path: Path) -> None:
    wheel = "dist/seawall-0.1.0-py3-none-any.whl"
    env = {"py_modules": [wheel, "s3://bucket/m.zip"], "pip": ["rich"], "env_vars": {"A": "1"}}
    job, task = job_runtime_env(env)
    assert job == {"py_modules": [str(Path(wheel).absolute())]}
    assert task == {"py_modules": ["s3://bucket/m.zip"], "pip": ["rich"], "env_vars": {"A": "1"}}
    job, task = job_runtime_env({"working_dir": ".", "pip": ["x"]})
    assert job == {"working_dir": str(Path(".").absolute())} and task == {"pip": ["x"]}
    placement = Placement(runtime_env={"py_modules": [wheel]})
    assert "runtime_env" not in placement.task_options()  # the task inherits the job's
    assert placement.job_env() == {"py_modules": [str(Path(wheel).absolute())]}
    assert job_runtime_env(None) == ({}, None)
