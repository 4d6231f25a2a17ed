"""Plans: loading and validating plan files, and planning waves from the task graph."""

from coordinator.plan.loader import load_plan, parse_plan
from coordinator.plan.render import plan_source, render_plan
from coordinator.plan.waves import plan_task_waves, plan_waves

__all__ = [
    "load_plan",
    "parse_plan",
    "plan_source",
    "plan_task_waves",
    "plan_waves",
    "render_plan",
]
