"""``seawall watch``: a running (or finished) session, live, from any terminal."""

from __future__ import annotations

import argparse
import sys

from seawall.cli.session import where_options

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    watch = subparsers.add_parser(
        "watch",
        help="a live view of a running session, from any terminal",
        description="Show a session live, read from its files: one row per agent (state, "
        "elapsed time, turns, tool calls, tokens, cost, last tool, trips and warnings, "
        "merge), its waves and its spend against its budgets. Keys: q quit, up/down "
        "select, t follow the agent's transcript, s stop the agent, K stop the session. "
        "It ends when the session does; without a terminal it prints the session once.",
    )
    where_options(watch)
    watch.add_argument(
        "--once", action="store_true", help="print the session once and exit, without keys"
    )
    watch.add_argument(
        "--json",
        action="store_true",
        help="print the session once as a JSON document (seawall.watch/1) and exit",
    )
    watch.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from rich.console import Console

    from seawall.cli.session import session_store
    from seawall.watch.rows import SessionReader
    from seawall.watch.screen import Keys, WatchScreen, render_view

    reader = SessionReader(session_store(args.repo, args.session))
    if args.json:
        from seawall.codec import encode_text
        from seawall.watch.document import watch_document

        print(encode_text(watch_document(reader.read())))
        return 0
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if args.once or not terminal:  # a log or a pipe: wide enough that no cell is cut
        Console(width=None if sys.stdout.isatty() else 200).print(
            render_view(reader.read(), selected=None)
        )
        return 0
    console = Console()
    WatchScreen(reader, console=console, keys=Keys(sys.stdin)).run()
    return 0
