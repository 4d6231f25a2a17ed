"""What a carryover issue says: an excerpt of the final message, the error signature
(from the final text when none was recorded), the work's ref and the next commands."""

from __future__ import annotations

from seawall.carryover import Carryover, CarryoverKind, find_marker, render_body
from seawall.status_parsing import error_in_text


def _carry(
    *,
    final_text: str = "",
    error_signature: str = "",
    work_ref: str = "",
    work_commit: str = "",
    base: str = "",
    plan_path: str = "",
) -> Carryover:
    return Carryover(
        plan="p",
        task_id="report-csv",
        kind=CarryoverKind.FAILED,
        session="s-1",
        wave=2,
        final_text=final_text,
        error_signature=error_signature,
        work_ref=work_ref,
        work_commit=work_commit,
        base=base,
        plan_path=plan_path,
    )


def test_the_error_signature_comes_from_the_final_text_when_none_was_recorded() -> None:
    text = "The writer is missing.\nSTATUS: failed — ModuleNotFoundError: No module named 'csvkit'"
    body = render_body(_carry(final_text=text))
    assert "- **Error signature:** ModuleNotFoundError: No module named 'csvkit'" in body
    recorded = render_body(_carry(final_text=text, error_signature="ImportError: other"))
    assert "- **Error signature:** ImportError: other" in recorded
    assert "- **Error signature:** _none_" in render_body(_carry(final_text="all went fine"))


def test_the_final_message_is_quoted_from_its_end() -> None:
    text = "\n".join(f"line {n}" for n in range(40)) + "\nSTATUS: failed — gave up"
    body = render_body(_carry(final_text=text))
    excerpt = body.split("### Final message (excerpt)\n\n", 1)[1].split("\n\n", 1)[0]
    lines = excerpt.splitlines()
    assert lines[0] == "> …" and lines[-1] == "> STATUS: failed — gave up"
    assert "> line 39" in lines and "> line 5" not in lines
    assert len(lines) == 13
    assert "### Final message" not in render_body(_carry())


def test_next_names_the_work_and_the_commands() -> None:
    body = render_body(
        _carry(
            work_ref="refs/seawall/s-1/report-csv",
            work_commit="0123456789abcdef0123",
            base="fedcba9876543210",
            plan_path="plans/demo.toml",
        )
    )
    assert "`0123456789ab` on `refs/seawall/s-1/report-csv`" in body
    assert "`git diff fedcba987654 0123456789ab`" in body
    assert "`seawall resume --session s-1`" in body
    assert "`seawall run plans/demo.toml`" in body
    assert "none recorded" in render_body(_carry())
    assert find_marker(body) == _carry().fingerprint  # the marker still ends the body


def test_error_in_text_finds_named_errors_and_error_lines() -> None:
    assert error_in_text("x\nTraceback (most recent call last):\nKeyError: 'k'") == "KeyError: 'k'"
    assert error_in_text("it raised pkg.mod.FooError: bad") == "pkg.mod.FooError: bad"
    assert error_in_text("error: linker failed") == "error: linker failed"
    assert error_in_text("no problems here; ErrorProne is a tool") == ""
    assert len(error_in_text("ValueError: " + "x" * 500)) == 200
