"""The post-wave check judges a symbolic link by where it points."""

from __future__ import annotations

from pathlib import Path

from seawall.model import Enforcement
from seawall.scope.verify import link_destination, verify_changes

ROOT = Path("/work/repo")
LINKS = {"src/alpha/up": "../../src", "src/alpha/loop": "../alpha"}


def test_a_link_text_is_read_from_the_link_directory_through_links_on_the_way() -> None:
    def dest(path: str, text: str) -> str | None:
        return link_destination(path, text, LINKS.get, workspace=ROOT)

    assert dest("src/alpha/a", "b.py") == "src/alpha/b.py"
    assert dest("src/alpha/a", "../other.py") == "src/other.py"
    assert dest("src/alpha/a", "up/x.py") == "src/x.py"  # through src/alpha/up -> src
    assert dest("src/alpha/a", "loop/../../x.py") == "x.py"
    assert dest("src/alpha/a", "../../../etc/passwd") is None  # above the workspace
    assert dest("src/alpha/a", "/etc/passwd") is None
    assert dest("src/alpha/a", "/work/repo/src/alpha/b.py") == "src/alpha/b.py"
    loops = {"src/alpha/a": "a"}.get
    assert link_destination("src/alpha/a", "a", loops, workspace=ROOT) is None  # never ends


def test_an_outward_link_is_out_of_scope_and_an_inward_one_is_not() -> None:
    links = {"src/alpha/in": "impl.py", "src/alpha/out": "../beta/x.py", "src/alpha/d": "."}
    verdict = verify_changes(
        "alpha",
        ["src/alpha/impl.py", *links],
        scope=["src/alpha/**"],
        enforcement=Enforcement.STRICT,
        workspace=ROOT,
        links=links,
    )
    assert verdict.out_of_scope == ("src/alpha/out",)
    assert verdict.excluded == ("src/alpha/out",)
    assert set(verdict.in_scope) == {"src/alpha/impl.py", "src/alpha/in", "src/alpha/d"}
