"""Every install line in README, docs, examples and error messages works as written on a
fresh machine: seawall is not on the package index, so no line asks the index for it
(``pip install 'seawall[mcp]'`` fails with "No matching distribution"). A line that
installs seawall from its checkout is run, offline, against a wheel built from the
checkout (the extra it names must exist); a line that installs an extra's packages
must name them as the extra pins them.

In the slow lane each line is also installed for real, dependencies resolved from the
package index (the only network these tests use), into a fresh virtual environment,
with the checkout as the wheel built from it; then what it installed is imported and
run. pip's cache is kept in ``.cache/pip-install-lines`` so a second run downloads
nothing."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from seawall.errors import MissingExtraError, install_hint
from tests.integration.test_wheel import wheel  # noqa: F401 - the built wheel, a fixture

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "examples").rglob("README.md")),
    *sorted((ROOT / "coordinator").rglob("*.py")),
    *sorted((ROOT / "adapters").rglob("*.py")),
]
_LINE = re.compile(r"pip install ((?:-\S+\s+)*)([^`\n#)]+?)(?=\s*(?:#|`|\)|\n|$|&&|\"))")
EXTRAS: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]
NOT_SEAWALLS = {"atheris", "pytest"}  # a fuzzer and a test runner: on the index


def _lines() -> list[tuple[str, str]]:
    found = []
    for path in SOURCES:
        for match in _LINE.finditer(path.read_text(encoding="utf-8")):
            target = re.split(r"\s+(?:in|from|on|to|for)\s", match.group(2))[0].strip()
            if len(target) > 1 and target.endswith("."):  # the end of a sentence
                target = target[:-1]
            if "{" not in target:  # a template of a message: `_hints` renders those
                found.append((f"{path.relative_to(ROOT)}", target))
    return found


LINES = _lines()


def _hints() -> list[str]:
    """The install lines error messages give: one per extra."""
    return [install_hint(extra, extra) for extra in EXTRAS if extra != "dev"]


def test_no_install_line_asks_the_index_for_seawall() -> None:
    assert len(LINES) >= 8, LINES  # the lines of README, docs and the examples are read
    for where, target in LINES + [("message", h) for h in _hints()]:
        words = shlex.split(target.split("Install it with: pip install")[-1].split("(")[0])
        assert not any(re.match(r"seawall(\[|$|[<>=])", w) for w in words), (where, target)


def test_the_missing_extra_message_names_what_the_extra_pins() -> None:
    error = MissingExtraError(package="mcp", extra="mcp", purpose="the MCP server")
    wanted = " ".join(f"'{r}'" for r in EXTRAS["mcp"])
    pinned = [req.replace(" ", "") for req in EXTRAS["mcp"]]
    assert error.hint is not None and "pip install '.[mcp]'" in error.hint
    written = re.findall(r"'([^']+)'", error.hint.split("(or")[0])
    assert sorted(_normal(w) for w in written) == sorted(_normal(p) for p in pinned), wanted


def _normal(requirement: str) -> str:
    from packaging.requirements import Requirement

    parsed = Requirement(requirement)
    return f"{parsed.name.lower()}{sorted(str(s) for s in parsed.specifier)}"


@pytest.mark.parametrize("line", sorted({t for _, t in LINES}))
def test_each_install_line_runs_offline_against_the_local_wheel(
    line: str,
    wheel: Path,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    words = shlex.split(line)
    targets = [w for w in words if not w.startswith("-")]
    for target in targets:
        if target in NOT_SEAWALLS:
            continue
        checkout = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
        if checkout is not None:  # seawall from its checkout: the wheel built from it
            extras = [e for e in (checkout.group(1) or "").split(",") if e]
            assert all(e in EXTRAS for e in extras), (line, extras)
            spec = f"seawall{'[' + ','.join(extras) + ']' if extras else ''} @ {wheel.as_uri()}"
            done = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                 "--target", str(tmp_path / "t"), spec],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "does not provide the extra" not in done.stderr, done.stderr
            assert (tmp_path / "t" / "seawall" / "__init__.py").is_file()
        elif target.startswith(("./", "/")):  # a local project of the repository
            assert (ROOT / target).is_dir() or Path(target).is_absolute(), line
        else:  # an extra's package from the index, as the extra pins it
            pinned = {_normal(r) for extra in EXTRAS.values() for r in extra}
            assert _normal(target) in pinned, (line, target)


PLACEHOLDERS = {"/path/to/seawall"}  # a path the reader substitutes (docs/ray.md)
# the README's test command installs this line as written before any test runs (and CI
# runs that command): installing it again here would prove nothing more
PROVEN_BY_THE_TEST_COMMAND = {"'.[dev]'"}
EXTRA_MODULES = {  # what each extra makes importable, imported once it is installed
    "mcp": ["seawall.lead.mcp"],
    "github": ["seawall.adapters.trackers.github"],
    "gitlab": ["seawall.adapters.trackers.gitlab"],
    "ray": ["seawall.adapters.runners.ray"],
    "dev": ["seawall.lead.mcp", "seawall.adapters.trackers.github", "pytest", "jsonschema"],
}
INDEX_MODULES = {"pytest": "pytest", "atheris": "atheris"}
IMPORT_EACH = "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)"


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    return subprocess.run(
        [str(python), "-m", "pip", "install", *args],  # pip's own cache: warm after setup
        capture_output=True, text=True, check=False, env=env, timeout=1800,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "line", sorted({t for _, t in LINES} - PLACEHOLDERS - PROVEN_BY_THE_TEST_COMMAND)
)
def test_each_install_line_installs_with_its_dependencies_into_a_fresh_venv(
    line: str,
    wheel: Path,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    words = shlex.split(line)
    flags = [w for w in words if w.startswith("-") and w != "-e"]  # a wheel, not editable
    specs: list[str] = []
    modules: list[str] = []
    for target in (w for w in words if not w.startswith("-")):
        checkout = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
        if checkout is not None:
            extras = [e for e in (checkout.group(1) or "").split(",") if e]
            specs.append(
                f"seawall{'[' + ','.join(extras) + ']' if extras else ''} @ {wheel.as_uri()}"
            )
            modules += ["seawall", *(m for e in extras for m in EXTRA_MODULES[e])]
        elif target.startswith("./"):  # a project of the checkout that needs seawall first
            first = _pip(python, wheel.as_uri())
            assert first.returncode == 0, first.stderr
            specs.append(str(ROOT / target))
        else:
            specs.append(target)
            modules.append(INDEX_MODULES.get(target, target))
    done = _pip(python, *flags, *specs)
    assert done.returncode == 0, f"pip install {line}\n{done.stdout}\n{done.stderr}"
    if modules:
        imported = subprocess.run(
            [str(python), "-c", IMPORT_EACH, *modules],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert imported.returncode == 0, imported.stderr
    if any(s.startswith("seawall") or s.startswith(str(ROOT)) for s in specs):
        listed = subprocess.run(
            [str(venv / "bin" / "seawall"), "adapters", "list"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert listed.returncode == 0 and "local" in listed.stdout, listed.stderr
        if "seawall-gitea" in line:
            assert "gitea" in listed.stdout, listed.stdout
