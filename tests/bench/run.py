"""Run every benchmark and print figure, baseline and ratio.

Usage: python -m tests.bench.run [NAME ...]

Each ``tests/bench/bench_*.py`` module exposes ``run() -> list[BenchResult]``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(
        info.name for info in pkgutil.iter_modules([str(here)]) if info.name.startswith("bench_")
    )
    if argv:
        names = [name for name in names if any(arg in name for arg in argv)]
    for name in names:
        module = importlib.import_module(f"tests.bench.{name}")
        print(f"== {name}", flush=True)
        for result in module.run():
            print("  " + result.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
