"""``seawall restore``: put files a wave set aside back into the working tree."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``restore``."""
    parser = subparsers.add_parser(
        "restore",
        help="put back files an in-place wave set aside (never overwrites a present file)",
        description="Write back the files an in-place wave set aside on "
        "refs/seawall/<session>/unattributed-w<n> (changes no agent may own) from that ref. "
        "A file that exists is never overwritten: it is named and the command exits 1.",
    )
    parser.add_argument("--repo", default=".", help="the repository (default: current folder)")
    parser.add_argument("--session", help="the session (default: the latest)")
    parser.add_argument("--wave", type=int, help="only this wave (default: every wave)")
    parser.add_argument("--json", action="store_true", help="print JSON (errors too)")
    parser.set_defaults(handler=_restore)


def _restore(args: argparse.Namespace) -> int:
    from seawall.cli.documents import Restored, RestoredFile
    from seawall.errors import StateError
    from seawall.session.user_files import restore_set_aside
    from seawall.state.store import StateStore, latest_session

    repo = Path(args.repo).resolve()
    session = args.session or latest_session(repo)
    if session is None:
        raise StateError(f"no seawall session in {repo}/.seawall")
    state = StateStore(repo, session).load()
    waves = [
        w
        for w in state.waves
        if w.set_aside and w.set_aside.ref and (args.wave in (None, w.number))
    ]
    if args.wave is not None and not waves:
        raise StateError(
            f"wave {args.wave} of {session} set nothing aside; "
            f"`seawall status --session {session}` shows what each wave did"
        )
    left = 0
    files: list[RestoredFile] = []
    for wave in waves:
        assert wave.set_aside is not None
        restored, present = restore_set_aside(repo, wave.set_aside)
        ref = wave.set_aside.ref
        files += [RestoredFile(path=p, wave=wave.number, ref=ref, restored=True) for p in restored]
        files += [RestoredFile(path=p, wave=wave.number, ref=ref, restored=False) for p in present]
        left += len(present)
        if args.json:
            continue
        for path in restored:
            print(f"restored {path} (wave {wave.number}, from {wave.set_aside.ref})")
        for path in present:
            print(
                f"{path} exists; left as it is (the set-aside copy stays on "
                f"{wave.set_aside.ref}: `git show {wave.set_aside.ref}:{path}`)",
                file=sys.stderr,
            )
    if args.json:
        from seawall.codec import encode_text

        print(encode_text(Restored(session=session, files=tuple(files))))
    elif not waves:
        print(f"{session} set nothing aside")
    return 1 if left else 0
