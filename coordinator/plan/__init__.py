"""Plans: loading and validating plan files, and planning waves from the task graph."""

from seawall.plan.loader import load_plan, parse_plan
from seawall.plan.render import plan_source, render_plan
from seawall.plan.waves import plan_task_waves, plan_waves

__all__ = [
    "load_plan",
    "parse_plan",
    "plan_source",
    "plan_task_waves",
    "plan_waves",
    "render_plan",
]
