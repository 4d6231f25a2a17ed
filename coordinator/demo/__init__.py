"""``seawall demo``: an offline session of scripted agents on a throwaway repository.

It shows a parallel in-place wave, a worktree wave, a partial carried forward, a spiral
re-scoped, a failed task with its carryover issue, a merge conflict set aside as a fix
task the next wave runs, and ends with the session's HTML report. The local tracker's
issues live with the demo: in ``issues/`` next to the throwaway repository (which each
run recreates), so running the demo twice in the same folder finds its carryovers
instead of filing them again, and two demo folders never share a tracker.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template

from seawall.report.progress import Progress

__all__ = ["DemoResult", "default_issues_dir", "prepare_demo_repo", "run_demo"]

_REPO_NAME = "inventory"


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoResult:
    repo: Path
    session: str
    state_md: Path
    issues_dir: Path
    exit_code: int
    report: Path | None = None


def default_issues_dir(directory: Path) -> Path:
    """Where the demo in ``directory`` keeps its tracker: next to its repository."""
    return directory / "issues"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)


def prepare_demo_repo(repo: Path, issues_dir: Path) -> Path:
    """Create the throwaway repository at ``repo`` and return the demo plan's path."""
    data = files("seawall.demo")
    seed = Path(str(data.joinpath("seed")))
    shutil.copytree(seed, repo, dirs_exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "seawall demo")
    _git(repo, "config", "user.email", "demo@seawall.invalid")
    _git(repo, "config", "commit.gpgsign", "false")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "inventory service skeleton")
    template = Template(data.joinpath("plan.toml").read_text(encoding="utf-8"))
    plan_text = template.substitute(python=_quoted(sys.executable), issues=str(issues_dir))
    plan_path = repo.parent / "demo-plan.toml"
    plan_path.write_text(plan_text, encoding="utf-8")
    return plan_path


def _quoted(path: str) -> str:
    return path if " " not in path else f"'{path}'"


async def run_demo(
    *,
    directory: Path | None = None,
    issues_dir: Path | None = None,
    progress: Progress | None = None,
) -> DemoResult:
    """Run the demo session; ``directory`` keeps the repository (default: a temp dir)."""
    from seawall.adapters.runners.scripted import ScriptedRunner
    from seawall.plan import load_plan
    from seawall.session.engine import Session

    base = (directory or Path(tempfile.mkdtemp(prefix="seawall-demo-"))).resolve()
    issues_dir = (issues_dir or default_issues_dir(base)).resolve()
    issues_dir.mkdir(parents=True, exist_ok=True)
    repo = base / _REPO_NAME
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    plan_path = prepare_demo_repo(repo, issues_dir)
    plan = load_plan(plan_path)
    scripts = Path(str(files("seawall.demo").joinpath("scripts.toml")))
    runner = ScriptedRunner.from_file(scripts)
    session = Session(
        plan,
        repo=repo,
        runner=runner,
        progress=progress,
        plan_text=plan_path.read_text(encoding="utf-8"),
    )
    result = await session.run()
    return DemoResult(
        repo=repo,
        session=result.session,
        state_md=result.state_md,
        issues_dir=issues_dir,
        exit_code=result.exit_code,
        report=result.report,
    )
