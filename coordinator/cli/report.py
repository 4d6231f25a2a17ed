"""``seawall report``: write a session's HTML report, and optionally open it."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = subparsers.add_parser(
        "report",
        help="write a session's HTML report (timeline, wave graph, totals)",
        description="Write one self-contained HTML page of a session: a timeline per wave of "
        "every agent (status, turns, tool calls, tokens, cost, trips and their evidence, "
        "merges, conflicts, checks, set-aside files), the wave graph, totals, and links to "
        "each agent's transcript and diff on disk. No network is needed to view it.",
    )
    report.add_argument("session", nargs="?", help="the session id (default: the newest)")
    report.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help="where to write the page (default: .seawall/<session>/report.html)",
    )
    report.add_argument("--open", action="store_true", help="open the page in a browser")
    report.add_argument(
        "--repo",
        type=Path,
        default=Path.cwd(),
        help="the repository (default: the current directory)",
    )
    report.add_argument("--json", action="store_true", help="print JSON")
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from seawall.cli.session import session_store
    from seawall.report import write_report

    store = session_store(args.repo, args.session)
    path = write_report(store, args.html)
    if args.json:
        from seawall.cli.documents import ReportWritten
        from seawall.codec import encode_text

        print(
            encode_text(ReportWritten(session=store.paths.session, report=str(path)), indent=None)
        )
    else:
        print(f"report: {path}")
    if args.open:
        import webbrowser

        webbrowser.open(path.as_uri())
    return 0
