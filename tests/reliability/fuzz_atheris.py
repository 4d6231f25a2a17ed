"""Coverage-guided fuzzing of seawall's readers with atheris (a long run, not in CI).

    pip install atheris
    python -m tests.reliability.fuzz_atheris TARGET -atheris_runs=1000000 [corpus_dir]

TARGET is one of ``transcripts``, ``plan``, ``hook``, ``status``, ``shell``. Each input
must give a result or one of the documented errors; anything else is a crash that
atheris reports (with the input that caused it saved as ``crash-*``).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable

import atheris

with atheris.instrument_imports():
    from seawall.errors import ConfigurationError
    from seawall.hooks.pre_tool_use import handle
    from seawall.hooks.protocol import HookInputError, read_payload
    from seawall.plan import parse_plan
    from seawall.shell import ShellParseError, simple_commands
    from seawall.status_parsing import parse_status
    from seawall.transcripts import TranscriptReader


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def transcripts(data: bytes) -> None:
    reader = TranscriptReader()
    for line in _text(data).splitlines():
        reader.feed(line)
    reader.finish()


def plan(data: bytes) -> None:
    with contextlib.suppress(ConfigurationError):
        parse_plan(_text(data), path="fuzz.toml")


def hook(data: bytes) -> None:
    try:
        payload = read_payload(io.StringIO(_text(data)))
    except (HookInputError, RecursionError):
        return  # the CLI answers both with exit 2 (fail closed)
    response = handle(payload, {})
    assert response.exit_code in (0, 2)
    if response.stdout:
        json.loads(response.stdout)


def status(data: bytes) -> None:
    parse_status(_text(data))


def shell(data: bytes) -> None:
    with contextlib.suppress(ShellParseError):
        simple_commands(_text(data))


TARGETS: dict[str, Callable[[bytes], None]] = {
    "transcripts": transcripts,
    "plan": plan,
    "hook": hook,
    "status": status,
    "shell": shell,
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        raise SystemExit(f"usage: fuzz_atheris.py {{{','.join(TARGETS)}}} [libFuzzer options]")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
