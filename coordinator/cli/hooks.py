"""``seawall hook ...`` (the Claude Code hook entry points) and ``seawall hooks install``.

The hook commands run on every tool call: this module imports nothing heavy, and each
handler imports its own module only when it runs (``seawall.hooks.entry``, which
says how a hook that fails answers). Inside an agent whose session serves its hooks,
this parser is never built: ``seawall.hooks.client`` answers.
"""

from __future__ import annotations

import argparse
import os
import sys

from seawall.hooks.wire import EVENTS, MAX_REQUEST


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hook`` and ``hooks`` to the command line."""
    hook = subparsers.add_parser(
        "hook",
        help="Claude Code hook entry point (reads the hook JSON on stdin)",
        description="Answer one Claude Code hook event: read the documented hook JSON on "
        "stdin, write the decision (JSON on stdout, or exit 2 with the reason on stderr).",
    )
    hook.add_argument("event", choices=sorted(EVENTS), help="the hook event to answer")
    hook.add_argument(
        "--session", default=None, help="the seawall session these hooks serve (a lead's settings)"
    )
    hook.set_defaults(handler=_run_hook)
    hooks = subparsers.add_parser(
        "hooks",
        help="manage seawall's Claude Code hooks",
        description="Install the hooks that enforce scope, commands and breakers inside the "
        "Claude Code agents a lead dispatches.",
    )
    actions = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    install = actions.add_parser(
        "install",
        help="prepare .claude/settings.json for a lead: seawall's hooks and Claude Code's sandbox",
        description="Add seawall's hook entries and Claude Code's sandbox settings (the OS "
        "layer of a lead and its subagents: writes only to the repository and the agents' "
        "worktrees, .git and .seawall read-only, no unsandboxed fallback) to the "
        "repository's .claude/settings.json, keeping every setting and hook already there. "
        "Exits 1 when this machine cannot run the sandbox, saying what to install.",
    )
    install.add_argument("--repo", default=".", help="the repository (default: the current one)")
    install.add_argument(
        "--command", default=None, help="the seawall executable the hooks run (default: found)"
    )
    install.add_argument("--session", default=None, help="name this session in the hook commands")
    install.add_argument(
        "--check",
        action="store_true",
        help="write nothing: report the boundary a lead started here will have "
        "(exit 1: incomplete)",
    )
    which = install.add_mutually_exclusive_group()
    which.add_argument(
        "--no-sandbox",
        action="store_true",
        help="hooks only; record sandbox.enabled false (a lead's subagents get no OS layer)",
    )
    which.add_argument(
        "--sandbox-only",
        action="store_true",
        help="the sandbox settings only (when the hooks come from the Claude Code plugin)",
    )
    install.add_argument("--json", action="store_true", help="print JSON (errors too)")
    install.set_defaults(handler=_install)


def _run_hook(args: argparse.Namespace) -> int:
    from seawall.hooks.entry import answer

    env: dict[str, str] = dict(os.environ)
    if args.session and not env.get("SEAWALL_SESSION"):
        env["SEAWALL_SESSION"] = args.session
    response = answer(args.event, sys.stdin.buffer.read(MAX_REQUEST), env)
    if response.stdout:
        sys.stdout.write(response.stdout)
        sys.stdout.flush()
    if response.stderr:
        print(response.stderr, file=sys.stderr)
    return response.exit_code


def _install(args: argparse.Namespace) -> int:
    from pathlib import Path

    from seawall.cli.documents import FileWritten, HooksInstalled
    from seawall.exitcodes import ExitCode
    from seawall.hooks.install import install_hooks
    from seawall.hooks.lead_sandbox import install_sandbox, lead_boundary, turn_sandbox_off

    repo = Path(args.repo)
    files: list[FileWritten] = []

    def say(text: str) -> None:
        if not args.json:
            print(text)

    def done(code: int, *, complete: bool, lines: list[str], problems: tuple[str, ...]) -> int:
        if args.json:
            from seawall.codec import encode_text

            document = HooksInstalled(
                files=tuple(files), complete=complete, lines=tuple(lines), problems=problems
            )
            print(encode_text(document, ascii_only=False))
        return code

    if args.check:
        boundary = lead_boundary(repo)
        hooks = not args.sandbox_only
        lines = boundary.lines(hooks=hooks)
        say("\n".join(lines))
        complete = boundary.complete(hooks=hooks)
        problems = tuple(boundary.prerequisites.problems)
        code = ExitCode.OK if complete else ExitCode.ERROR
        return done(code, complete=complete, lines=lines, problems=problems)
    if not args.sandbox_only:
        result = install_hooks(repo, command=args.command, session=args.session)
        state = "updated" if result.changed else "already up to date"
        what = f"{', '.join(result.events)} -> {result.command} hook ..."
        files.append(FileWritten(path=str(result.path), changed=result.changed, what=what))
        say(f"{result.path}: {state} ({what})")
    if args.no_sandbox:
        off = turn_sandbox_off(repo)
        what = "Claude Code's sandbox turned off (sandbox.enabled false)"
        files.append(FileWritten(path=str(off.path), changed=off.changed, what=what))
        say(f"{off.path}: {what}")
        return done(ExitCode.OK, complete=False, lines=[], problems=())
    sandbox = install_sandbox(repo)
    state = "updated" if sandbox.changed else "already up to date"
    what = "Claude Code's sandbox for the lead and its subagents"
    files.append(FileWritten(path=str(sandbox.path), changed=sandbox.changed, what=what))
    say(f"{sandbox.path}: {state} ({what})")
    boundary = lead_boundary(repo)
    problems = tuple(boundary.prerequisites.problems)
    lines = boundary.lines(hooks=not args.sandbox_only)
    complete = boundary.complete(hooks=not args.sandbox_only)
    if not boundary.prerequisites.ok:
        if not args.json:
            for problem in problems:
                print(f"seawall: {problem}", file=sys.stderr)
            print(
                "seawall: until then Claude Code refuses to start in this repository "
                "(sandbox.failIfUnavailable); `seawall hooks install --no-sandbox` runs it "
                "without",
                file=sys.stderr,
            )
        return done(ExitCode.ERROR, complete=complete, lines=lines, problems=problems)
    return done(ExitCode.OK, complete=complete, lines=lines, problems=problems)
