"""Opening the session a lead agent works in: a new one from a plan, or the newest one."""

from __future__ import annotations

from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.plan import load_plan
from seawall.report.progress import make_progress
from seawall.session.engine import Session
from seawall.state.store import latest_session

__all__ = ["open_for_lead"]


def open_for_lead(
    repo: Path, *, plan: Path | None = None, session_id: str | None = None
) -> Session:
    """The session to step: from ``plan`` when no unfinished session exists, else reopened.
    Without a plan and with every session finished, the newest one is reopened, so a lead
    that asks again after "done" is answered "done" again.

    A plan given while an unfinished session of the repository exists continues that
    session (a lead that repeats its first command must not start a second session); a
    different plan file is an error that names both. Once the newest session is done,
    asking again (without a plan, or with the same unchanged plan file) reopens it, so
    the answer is "done" again rather than an error or a second session.
    """
    root = Path(repo).resolve()
    existing = session_id or latest_session(root, unfinished=True) or _finished(root, plan)
    if existing is not None:
        session = Session.open(root, existing, progress=make_progress())
        if plan is not None:
            recorded = session.state.plan_path if session.state else ""
            if recorded and Path(recorded).resolve() != plan.resolve():
                raise ConfigurationError(
                    f"{plan}: session {existing} of {root} is still unfinished with plan "
                    f"{recorded}; finish it (or `seawall kill --session {existing}`) first"
                )
        return session
    if plan is None:
        finished = latest_session(root)
        if finished is not None:  # asked again after "done": the same answer again
            return Session.open(root, finished, progress=make_progress())
        raise ConfigurationError(f"no seawall session in {root}: give the plan file to start one")
    if not plan.is_file():
        raise ConfigurationError(f"{plan}: no such plan file")
    return Session(load_plan(plan), repo=root, progress=make_progress())


def _finished(root: Path, plan: Path | None) -> str | None:
    """The newest session when it is done and ``plan`` (if given) is the one it ran,
    unchanged since: the session a repeated ``seawall next`` answers "done" for."""
    from seawall.state.ledger import SessionPhase
    from seawall.state.store import StateStore

    newest = latest_session(root)
    if newest is None:
        return None
    state = StateStore(root, newest).load()
    if state.phase is not SessionPhase.DONE:
        return None
    if plan is None:
        return newest
    if not state.plan_path or Path(state.plan_path).resolve() != plan.resolve():
        return None
    try:
        same = plan.read_text(encoding="utf-8") == state.plan_text
    except OSError:
        return None
    return newest if same else None
