"""The plan's adapters, built before anything runs: its tracker, runners and publisher.

``seawall plan``, ``seawall run`` and ``seawall wave prepare`` call ``build_adapters``
before wave 1, so a misspelled ``kind``, a third-party package that does not import,
a class with an abstract method left out or a constructor that raises stops the
command with a ``PlanError`` naming the plan file, the field, the entry point and its
package, and no agent ever starts. The built instances are then the session's own.
(Whether each runner's program can start is the session's preflight, in
``seawall.session.preflight``.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from seawall.errors import ConfigurationError, MissingExtraError, PlanError
from seawall.model import Plan, RunnerSpec, TrackerConfig
from seawall.registry import RUNNER_GROUP, TRACKER_GROUP, available, build

if TYPE_CHECKING:
    from seawall.runner import AgentRunner
    from seawall.tracker import IssueTracker

__all__ = ["Adapters", "build_adapters", "checked_adapters", "runner_names", "with_tracker_kind"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Adapters:
    """The constructed tracker and runners (by runner name) of one plan."""

    tracker: IssueTracker
    runners: Mapping[str, AgentRunner]
    runner: AgentRunner | None = None  # the override for every task (``--runner``)

    def close(self) -> None:
        self.tracker.close()


def runner_names(plan: Plan) -> tuple[str, ...]:
    """The runner names the plan's tasks use, in first-use order."""
    names = [task.agent or plan.session.agent for task in plan.tasks]
    return tuple(dict.fromkeys(names))


def build_adapters(
    plan: Plan,
    *,
    root: Path,
    runner: str | None = None,
    tracker: TrackerConfig | None = None,
) -> Adapters:
    """Construct the plan's tracker and every runner its tasks use (or ``runner`` alone).

    ``tracker`` overrides the plan's ``[session.tracker]``. Raises ``PlanError`` naming
    the field whose adapter cannot be loaded or built.
    """
    config = tracker or plan.session.tracker
    built_tracker = _tracker(plan, config, root)
    try:
        _publisher(plan, built_tracker)
        if runner:
            only = _runner(plan, runner, field="--runner")
            return Adapters(tracker=built_tracker, runners=MappingProxyType({}), runner=only)
        runners = {
            name: _runner(plan, name, field=_field(plan, name)) for name in runner_names(plan)
        }
    except BaseException:
        built_tracker.close()
        raise
    return Adapters(tracker=built_tracker, runners=MappingProxyType(runners))


@contextlib.contextmanager
def checked_adapters(
    plan: Plan, *, root: Path, runner: str | None = None, tracker: TrackerConfig | None = None
) -> Iterator[Adapters]:
    """``build_adapters`` as a context manager that closes the tracker afterwards."""
    adapters = build_adapters(plan, root=root, runner=runner, tracker=tracker)
    try:
        yield adapters
    finally:
        adapters.close()


def _tracker(plan: Plan, config: TrackerConfig, root: Path) -> IssueTracker:
    from seawall.tracker import IssueTracker

    try:
        built = build(TRACKER_GROUP, config.kind, lambda cls: cls.from_config(config, root=root))
    except MissingExtraError as exc:
        raise _plan_error(plan, "session.tracker.kind", exc) from exc
    except ConfigurationError as exc:
        raise _plan_error(plan, "session.tracker.kind", exc) from exc
    assert isinstance(built, IssueTracker)  # build checked the class
    return built


def _publisher(plan: Plan, host: IssueTracker) -> None:
    from seawall.publishing.pull_request import check_publisher
    from seawall.publishing.webhook import check_notify

    try:
        check_publisher(host, plan.session.publish)
    except ConfigurationError as exc:
        raise PlanError(str(exc), path=plan.path or "<plan>", field="session.publish") from exc
    try:
        check_notify(plan.session.notify)
    except ConfigurationError as exc:
        raise PlanError(str(exc), path=plan.path or "<plan>", field="session.notify") from exc


def _runner(plan: Plan, name: str, *, field: str) -> AgentRunner:
    from seawall.runner import AgentRunner

    spec = plan.runners.get(name)
    if spec is None and name not in available(RUNNER_GROUP):
        # a name typed on the command line: suggested from every runner that can be
        # chosen, the plan's [runners] as well as the built-in and registered ones
        from seawall.plan.loader import _unknown_runner

        raise PlanError(
            _unknown_runner(name, plan.runners), path=plan.path or "<plan>", field=field
        )
    spec = spec or RunnerSpec(name=name, kind=name)
    try:
        built = build(RUNNER_GROUP, spec.kind, lambda cls: cls.from_spec(spec))
    except ConfigurationError as exc:
        raise _plan_error(plan, field, exc, runner=name) from exc
    assert isinstance(built, AgentRunner)  # build checked the class
    return built


def _field(plan: Plan, name: str) -> str:
    if name in plan.runners:
        return f"runners.{name}.kind"
    if name == plan.session.agent:
        return "session.agent"
    return "agent"


def _plan_error(
    plan: Plan, field: str, exc: ConfigurationError, *, runner: str | None = None
) -> PlanError:
    task = None
    if field == "agent":
        task = next((t.id for t in plan.tasks if t.agent == runner), None)
    from seawall.plan.loader import with_line

    what = f"runner {runner!r}: " if runner and not str(exc).startswith("runner") else ""
    error = PlanError(
        f"{what}{exc}", path=plan.path or "<plan>", task=task, field=field, hint=exc.hint
    )
    return with_line(error, plan.source) if plan.source and field != "--runner" else error


def with_tracker_kind(config: TrackerConfig, kind: str | None) -> TrackerConfig:
    """``config`` with its kind replaced (the ``--tracker`` option), when one is given."""
    return replace(config, kind=kind) if kind else config
