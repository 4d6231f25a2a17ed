"""``seawall plan`` and ``seawall prompt``: what a plan will do, before anything runs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.cli.documents import AdapterSources
    from seawall.model import Plan

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    plan = subparsers.add_parser(
        "plan",
        help="show the waves a plan file makes",
        description="Validate a plan file and show its waves: tasks, isolation, enforcement, "
        "max turns, and why each was chosen.",
    )
    plan.add_argument("plan", help="the plan file (TOML)")
    plan.add_argument("--json", action="store_true", help="print JSON instead of text")
    plan.set_defaults(handler=_plan)

    prompt = subparsers.add_parser(
        "prompt",
        help="print the exact prompt an agent would get",
        description="Print the exact prompt the agent of TASK_ID would get in its wave.",
    )
    prompt.add_argument("plan", help="the plan file (TOML)")
    prompt.add_argument("task_id", help="the task's id")
    prompt.add_argument("--json", action="store_true", help="print JSON (errors too)")
    prompt.set_defaults(handler=_prompt)


def _plan(args: argparse.Namespace) -> int:
    from seawall.plan import load_plan
    from seawall.session.phases.planning import wave_barriers, waves_of_a_run

    plan = load_plan(args.plan)
    waves = waves_of_a_run(plan)  # chosen as the session chooses them
    adapters = _adapters(plan)
    barriers = {wave.number: wave_barriers(plan, wave) for wave, _ in waves}
    if args.json:
        from seawall.cli.documents import PlanDocument, PlannedWave, ScopeCheck
        from seawall.codec import encode_text

        document = PlanDocument(
            session=plan.session.name,
            session_type=plan.session.session_type,
            waves=tuple(
                PlannedWave(
                    number=wave.number,
                    tasks=wave.task_ids,
                    isolation=wave.isolation,
                    enforcement=wave.enforcement,
                    max_turns=wave.max_turns,
                    isolation_reason=wave.isolation_reason,
                    enforcement_reason=wave.enforcement_reason,
                    scope_check=ScopeCheck(
                        action=check.action,
                        overlaps=check.colliding,
                        later=tuple(t for w in check.waves[1:] for t in w.task_ids),
                    ),
                    barriers=barriers[wave.number],
                )
                for wave, check in waves
            ),
            adapters=adapters,
        )
        print(encode_text(document))
        return 0
    session = plan.session
    print(
        f"session {session.name} ({session.session_type}): {len(plan.tasks)} tasks "
        f"in {len(waves)} waves"
    )
    runners = ", ".join(f"{name} ({source})" for name, source in adapters.runners.items())
    print(f"tracker {adapters.tracker}; runners: {runners or 'none'}")
    for wave, check in waves:
        print(f"\nwave {wave.number}: {len(wave.tasks)} agent(s), max {wave.max_turns} turns")
        print(f"  isolation   {wave.isolation}: {wave.isolation_reason}")
        print(f"  enforcement {wave.enforcement}: {wave.enforcement_reason}")
        for line in check.lines():
            print(f"  {line}")
        for task in wave.tasks:
            scope = ", ".join(task.scope) or "(read-only)"
            turns = f", max {task.max_turns} turns" if task.max_turns else ""
            print(f"  - {task.id} [{task.kind}{turns}] scope: {scope}")
        for name, barrier in barriers[wave.number].items():
            print(f"  barrier ({name}): {barrier}")
    print("\nthe post-wave check of the whole change applies to every runner")
    return 0


def _adapters(plan: Plan) -> AdapterSources:
    """Build the plan's tracker and runners (a broken adapter fails here, naming the
    field and the entry point) and say where each comes from."""
    from pathlib import Path

    from seawall.cli.documents import AdapterSources
    from seawall.plan.adapters import checked_adapters, runner_names
    from seawall.registry import RUNNER_GROUP, TRACKER_GROUP, entry

    def source(group: str, kind: str) -> str:
        found = entry(group, kind)
        return f"{found.name}, {found.source}"

    with checked_adapters(plan, root=Path.cwd()):
        kinds = {
            name: (plan.runners[name].kind if name in plan.runners else name)
            for name in runner_names(plan)
        }
        return AdapterSources(
            tracker=source(TRACKER_GROUP, plan.session.tracker.kind),
            runners={name: source(RUNNER_GROUP, kind) for name, kind in kinds.items()},
        )


def _prompt(args: argparse.Namespace) -> int:
    from seawall.plan import load_plan, plan_waves
    from seawall.prompting import render_agent_prompt

    plan = load_plan(args.plan)
    for wave in plan_waves(plan):
        for task in wave.tasks:
            if task.id == args.task_id:
                max_turns = task.max_turns or wave.max_turns
                text = render_agent_prompt(
                    task,
                    max_turns=max_turns,
                    scope=task.scope,
                    session=plan.session.name,
                    wave=wave.number,
                )
                if args.json:
                    from seawall.cli.documents import PromptDocument
                    from seawall.codec import encode_text

                    document = PromptDocument(
                        task=task.id,
                        wave=wave.number,
                        max_turns=max_turns,
                        scope=tuple(task.scope),
                        prompt=text,
                    )
                    print(encode_text(document, ascii_only=False))
                else:
                    print(text)
                return 0
    import difflib

    from seawall.errors import ConfigurationError

    ids = [task.id for task in plan.tasks]
    close = difflib.get_close_matches(args.task_id, ids, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigurationError(
        f"{args.task_id!r} is not a task of {args.plan}; {hint}tasks: {', '.join(ids)}"
    )
