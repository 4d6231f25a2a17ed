"""``seawall dashboard``: the sessions of a repository on a local web page, live."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

__all__ = ["register"]

DEFAULT_PORT = 8787


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dashboard = subparsers.add_parser(
        "dashboard",
        help="the sessions of a repository on a local web page, live",
        description="Serve a web page showing the sessions of a repository (or of the "
        "unattended runner's queue) live: the rows and waves `seawall watch` shows, links "
        "to each agent's transcript and diff, the session's STATE.md and its report. "
        "Read-only unless --allow-stop; local (127.0.0.1) unless --host says otherwise. "
        "Everything the page loads is served by seawall itself.",
    )
    dashboard.add_argument(
        "--repo", type=Path, help="the repository (default: the runner's, else the current one)"
    )
    dashboard.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"the port to listen on (default: {DEFAULT_PORT}; 0: any free port)",
    )
    dashboard.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="the address to listen on (default: 127.0.0.1, this machine only); another "
        "address lets anyone who reaches it read the sessions",
    )
    dashboard.add_argument(
        "--allow-stop",
        action="store_true",
        help="let the page stop a running agent or session (as `seawall watch` does)",
    )
    dashboard.add_argument(
        "--runner",
        nargs="?",
        const="",
        metavar="DIR",
        help="also show the unattended runner's queue (default DIR: $SEAWALL_RUNNER_DIR, "
        "else ./.seawall/runner); the sessions are those of its repository",
    )
    dashboard.set_defaults(handler=_dashboard)


def _dashboard(args: argparse.Namespace) -> int:
    from seawall.dashboard.server import is_loopback, serve
    from seawall.dashboard.site import Dashboard, RunnerSource
    from seawall.errors import ConfigurationError

    runner = None
    repo = args.repo
    if args.runner is not None:
        from seawall.unattended.config import load_settings, resolve_runner_dir

        runner_dir = resolve_runner_dir(args.runner or None).resolve()
        runner = RunnerSource(dir=runner_dir, settings=load_settings(runner_dir))
        repo = repo or runner.settings.repo
    repo = Path(repo or Path.cwd()).expanduser().resolve()
    if not repo.is_dir():
        raise ConfigurationError(f"--repo {repo}: no such directory")
    try:
        server = serve(
            Dashboard(repo, runner=runner, allow_stop=args.allow_stop),
            host=args.host,
            port=args.port,
        )
    except OSError as exc:
        raise ConfigurationError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror}"
        ) from exc
    mode = "stops allowed" if args.allow_stop else "read-only"
    print(f"seawall dashboard: {server.url} ({mode}; Ctrl-C to stop)", flush=True)
    if not is_loopback(args.host):
        print(
            f"warning: listening on {args.host}: anyone who reaches it reads the sessions",
            file=sys.stderr,
            flush=True,
        )
    with server, contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it ends
        server.serve_forever()
    return 0
