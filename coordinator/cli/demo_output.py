"""``seawall demo``: the offline demo session run, then what it left said: STATE.md, the
carryover issues it filed (or found open) and the report; with ``--json``, one
``seawall.demo/1`` document on stdout and the progress lines as JSON on stderr."""

from __future__ import annotations

import argparse
import shlex

__all__ = ["run_demo_command"]


def run_demo_command(args: argparse.Namespace) -> int:
    import anyio

    from seawall.adapters.trackers.local import LocalTracker
    from seawall.demo import DemoResult, run_demo
    from seawall.errors import ConfigurationError
    from seawall.report.progress import make_progress

    for option, given in (("--dir", args.dir), ("--issues", args.issues)):
        if given is not None and given.exists() and not given.is_dir():
            raise ConfigurationError(f"seawall demo {option} {given}: not a folder; give a folder")

    async def main() -> DemoResult:
        progress = make_progress(as_json=args.json)
        return await run_demo(directory=args.dir, issues_dir=args.issues, progress=progress)

    result = anyio.run(main)
    issues = LocalTracker(result.repo, issues_dir=result.issues_dir).list_issues("carryover")
    issues = sorted(issues, key=lambda item: item.number)
    again = f"seawall demo --dir {shlex.quote(str(result.repo.parent))}"
    code = 0 if result.exit_code in (0, 4) else result.exit_code
    if args.json:
        from seawall.cli.documents import DemoDocument, DemoIssue
        from seawall.codec import encode_text

        document = DemoDocument(
            repo=str(result.repo),
            session=result.session,
            session_exit_code=result.exit_code,
            state_md=str(result.state_md),
            report=None if result.report is None else str(result.report),
            issues_dir=str(result.issues_dir),
            issues=tuple(DemoIssue(number=i.number, title=i.title) for i in issues),
            again=again,
        )
        print(encode_text(document))
        return code
    print()
    print(result.state_md.read_text(encoding="utf-8"))
    print(f"demo repository: {result.repo}")
    print(f"carryover issues ({len(issues)}) in {result.issues_dir}:")
    for issue in issues:
        print(f"  #{issue.number}: {issue.title}")
    print(
        f"run `{again}` again: an open carryover is found, not filed twice; "
        "one whose task landed since is closed, so its next failure is a new issue"
    )
    if result.report is not None:
        print(f"report: {result.report}")
        print(f"  open it with: seawall report --open --repo {shlex.quote(str(result.repo))}")
    return code
