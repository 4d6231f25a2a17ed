"""The built wheel adds exactly one import name, ``seawall``, and the ``seawall`` command.

The checkout keeps its three code folders (``coordinator/``, ``adapters/``, ``prompts/``);
the build maps them onto ``seawall``, ``seawall.adapters`` and ``seawall.prompts``. A
generic top-level name such as ``adapters`` would overwrite another distribution's
package of the same name in site-packages.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"coordinator": "seawall", "adapters": "seawall.adapters", "prompts": "seawall.prompts"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")  # the build writes build/ where it runs
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("seawall-*.whl")
    return built


def test_the_wheel_installs_only_the_seawall_name(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    dist_info = {t for t in top if t.endswith((".dist-info", ".data"))}
    assert top - dist_info == {"seawall"}
    assert any(n.endswith(".data/scripts/seawall") for n in names)
    assert "seawall/adapters/runners/command.py" in names
    assert "seawall/prompts/agent.txt" in names
    assert "seawall/lead/schemas/next.schema.json" in names
    assert "seawall/demo/plan.toml" in names
    assert "seawall/demo/seed/src/app/models.py" in names
    assert {"seawall/py.typed", "seawall/adapters/py.typed"} <= set(names)


def test_every_file_of_the_code_folders_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for folder, name in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts or path.name == "seawall":
                continue
            inside = "/".join([*name.split("."), *path.relative_to(ROOT / folder).parts])
            if inside not in names:
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"left out of the wheel: {missing}"


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("*.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            if "seed" in relative or "__pycache__" in relative:
                continue  # the demo's seed repository is data, not a package
            found.add(".".join([*name.split("."), *relative]))
    assert found == listed, (
        f"add to [tool.setuptools] packages: {sorted(found - listed)}; "
        f"remove: {sorted(listed - found)}"
    )
