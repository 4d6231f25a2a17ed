"""docs/architecture.md's map is the code's: every import between parts is one the map
allows, every part is in the map, no module imports another's private module, and no
import circle exists, counting every import statement (inside functions and under
``TYPE_CHECKING`` too: a circle a deferred import hides is still one to follow).

A *part* is a subpackage of ``seawall`` (``seawall.session``), a top-level module
(``seawall.events``), or one of the adapters' packages (``seawall.adapters.runners``,
``seawall.adapters.runners.ray``, ``seawall.adapters.trackers``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

from tests.unit.test_module_layout import ROOT, installed_modules

MAP = ROOT / "docs" / "architecture.md"


def part_of(module: str, modules: dict[str, Path]) -> str:
    """The part ``module`` belongs to."""
    parts = module.split(".")
    if parts[:2] == ["seawall", "adapters"]:
        depth = 3
        while depth < len(parts) and ".".join(parts[: depth + 1]) in modules:
            if modules[".".join(parts[: depth + 1])].name != "__init__.py":
                break
            depth += 1
        return ".".join(parts[:depth])
    return ".".join(parts[:2])


def all_imports(modules: dict[str, Path]) -> Iterator[tuple[str, str, int]]:
    """(importer, imported, line) for every import statement between ``modules``."""
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        yield name, alias.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in modules:
                        yield name, target, node.lineno
                    elif base in modules:
                        yield name, base, node.lineno


def read_map(text: str) -> dict[str, set[str]]:
    """Part → the parts it may import, from the map's table."""
    allowed: dict[str, set[str]] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"`seawall[\w.]*`", cells[0]):
            continue
        names = re.findall(r"`([\w.]+)`", cells[2])
        allowed[cells[0].strip("`")] = {f"seawall.{name}" for name in names}
    return allowed


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return installed_modules()


def test_every_import_between_parts_is_on_the_map(modules: dict[str, Path]) -> None:
    allowed = read_map(MAP.read_text(encoding="utf-8"))
    parts = {part_of(name, modules) for name in modules}
    assert parts - allowed.keys() == set(), "parts missing from docs/architecture.md"
    assert allowed.keys() - parts == set(), "docs/architecture.md names parts that do not exist"
    off_map = sorted(
        f"{modules[importer].relative_to(ROOT)}:{line}: {importer} imports {imported}"
        for importer, imported, line in all_imports(modules)
        if (a := part_of(importer, modules)) != (b := part_of(imported, modules))
        and b not in allowed[a]
    )
    assert not off_map, "imports docs/architecture.md does not allow:\n" + "\n".join(off_map)


def test_every_allowed_import_is_used(modules: dict[str, Path]) -> None:
    """The map says what is, not what once was."""
    allowed = read_map(MAP.read_text(encoding="utf-8"))
    used: dict[str, set[str]] = {part: set() for part in allowed}
    for importer, imported, _ in all_imports(modules):
        a, b = part_of(importer, modules), part_of(imported, modules)
        if a != b:
            used[a].add(b)
    stale = {part: sorted(allowed[part] - used[part]) for part in allowed}
    assert not {part: names for part, names in stale.items() if names}


def test_the_map_is_read_and_a_stray_import_is_named(tmp_path: Path) -> None:
    table = (
        "| part | holds | may import |\n| --- | --- | --- |\n"
        "| `seawall.a` | a | `b` `c.d` |\n| `seawall.b` | b | |\n"
    )
    assert read_map(table) == {"seawall.a": {"seawall.b", "seawall.c.d"}, "seawall.b": set()}
    package = tmp_path / "seawall"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f() -> None:\n    from seawall import b\n")
    (package / "b.py").write_text("")
    found = {
        (a, b)
        for a, b, _ in all_imports(
            {
                "seawall": package / "__init__.py",
                "seawall.a": package / "a.py",
                "seawall.b": package / "b.py",
            }
        )
    }
    assert found == {("seawall.a", "seawall.b")}  # an import inside a function counts


def test_no_private_module_is_imported_from_outside_its_package(
    modules: dict[str, Path],
) -> None:
    found = []
    for importer, imported, line in all_imports(modules):
        names = imported.split(".")
        private = [i for i, n in enumerate(names) if n.startswith("_") and not n.startswith("__")]
        if not private:
            continue
        owner = ".".join(names[: private[0]])
        if importer != owner and not importer.startswith(owner + "."):
            found.append(f"{modules[importer].relative_to(ROOT)}:{line}: {imported}")
    assert not found, "private modules imported from outside their package:\n" + "\n".join(found)


def test_no_import_circle_even_through_deferred_imports(modules: dict[str, Path]) -> None:
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_edges_from((a, b) for a, b, _ in all_imports(modules) if a != b)
    circles = sorted(
        " -> ".join(sorted(c)) for c in nx.strongly_connected_components(graph) if len(c) > 1
    )
    assert not circles, "import circles:\n" + "\n".join(circles)
