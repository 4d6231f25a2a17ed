"""The shape of the code: no import cycle in ``coordinator/``, no module over 500 lines,
and the session engine's imports where a reader sees them, at the top of each module.

The import graph is read from the source (``ast``), not by importing: an edge is an
import statement run when the module loads (at module level, in a ``try`` or a plain
``if``); imports inside functions and under ``if TYPE_CHECKING:`` are not edges, since
they do not run at load time. ``from package import name`` is an edge to
``package.name`` when that is a module, else to ``package``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500


#: Each code folder of the checkout and the import name it installs under.
INSTALLED_AS = {
    "coordinator": "seawall",
    "adapters": "seawall.adapters",
    "prompts": "seawall.prompts",
}


def module_names(package: Path, name: str = "") -> dict[str, Path]:
    """Every module under ``package`` by dotted name (``package`` imported as ``name``,
    by default its folder's name)."""
    names: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = [name or package.name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def installed_modules() -> dict[str, Path]:
    """Every module of the three code folders by the name it is imported as."""
    names: dict[str, Path] = {}
    for folder, name in INSTALLED_AS.items():
        names.update(module_names(ROOT / folder, name))
    return names


def _load_time(body: Iterable[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _load_time(node.body)
            yield from _load_time(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _load_time(block)
            for handler in node.handlers:
                yield from _load_time(handler.body)


def import_graph(package: Path | None = None) -> nx.DiGraph[str]:
    """Module → module it imports at load time, within ``package`` (by default, within
    everything installed as ``seawall``)."""
    modules = module_names(package) if package else installed_modules()
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _load_time(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                graph.add_edges_from((name, a.name) for a in node.names if a.name in modules)
                continue
            base = node.module or ""
            if node.level:
                parent = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules:
                    graph.add_edge(name, target)
                elif base in modules:
                    graph.add_edge(name, base)
    return graph


def cycles(package: Path | None = None) -> list[str]:
    """Each import cycle of ``package``, as ``a -> b -> a`` from its first name."""
    found = []
    for cycle in nx.simple_cycles(import_graph(package)):
        start = cycle.index(min(cycle))
        ring = cycle[start:] + cycle[:start]
        found.append(" -> ".join([*ring, ring[0]]))
    return sorted(found)


def test_coordinator_has_no_import_cycle() -> None:
    found = cycles()
    assert not found, "import cycle(s) in seawall:\n" + "\n".join(found)


def test_a_cycle_is_found_and_named(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("from .. import c\n")
    (package / "c.py").write_text("import pkg.a\n")
    (package / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import late\n"
    )
    (package / "late.py").write_text(
        "import pkg.typed\n\ndef f() -> None:\n    from pkg import late  # noqa\n"
    )
    assert cycles(package) == ["pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"]


def local_imports(package: Path) -> list[str]:
    """``file:line`` of every import inside a function under ``package``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for node in ast.walk(function)
                if isinstance(node, ast.Import | ast.ImportFrom)
            ]
    return found


def test_the_session_engine_imports_at_module_level() -> None:
    found = local_imports(ROOT / "coordinator" / "session")
    assert not found, f"imports inside functions (move them to the module's top): {found}"


def _sizes() -> dict[str, int]:
    files = [*(ROOT / "coordinator").rglob("*.py"), *(ROOT / "adapters").rglob("*.py")]
    return {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in files
    }


def test_no_module_is_over_500_lines() -> None:
    over = {path: lines for path, lines in _sizes().items() if lines > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them): {over}"
