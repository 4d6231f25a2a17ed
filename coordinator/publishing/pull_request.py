"""Publishing a session: push its branch, open one pull/merge request with its summary.

With ``[session.publish]`` a session that finishes pushes its target branch to the
remote (as ``branch``) and opens a pull request (GitHub) or merge request (GitLab)
into ``base`` on the session's tracker host, whose body is the session summary.

It is idempotent across a kill and a resume: a push of the same commit is a no-op, the
host is asked for an open request from ``branch`` into ``base`` before one is opened,
and a request whose answer was lost is looked for again over a settle window before
any retry, so a session never opens a second one. What was published is recorded in
``.seawall/<session>/publish.json``. A failure is a ``PublishResult`` with ``error``
set, never an exception: the session's work is already merged locally.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from seawall.carryover.retry import RetryPolicy, is_transient, retrying
from seawall.errors import ConfigurationError, GitError, TrackerError
from seawall.git.repo import run_git
from seawall.model import PublishConfig
from seawall.runtime.fault_injection import kill_point
from seawall.runtime.files import atomic_write_text
from seawall.tracker import Capability, IssueTracker, PullRequest, TrackerRateLimitError

__all__ = ["PublishResult", "check_publisher", "publish_session", "render_summary"]

RECORD = "publish.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishResult:
    """What publishing did: the commit pushed, the request found or opened, or an error."""

    branch: str
    base: str
    commit: str | None = None
    request: PullRequest | None = None
    created: bool = False
    error: str | None = None


def check_publisher(host: IssueTracker, config: PublishConfig | None) -> None:
    """Refuse before anything runs when publishing is asked of a host that cannot."""
    if config is None:
        return
    if Capability.PULL_REQUESTS not in host.capabilities:
        raise ConfigurationError(
            f"session.publish: the {host.name} tracker cannot open pull requests "
            f"(capabilities: {', '.join(sorted(host.capabilities))}); use a github or gitlab "
            "tracker, or remove [session.publish]"
        )


def publish_session(
    host: IssueTracker,
    config: PublishConfig,
    *,
    repo: Path,
    session_dir: Path,
    target_branch: str,
    title: str,
    summary: str,
    retry: RetryPolicy | None = None,
) -> PublishResult:
    """Push ``target_branch`` and find or open its request; never raises."""
    retry = retry or RetryPolicy()
    branch = config.branch or target_branch
    result = PublishResult(branch=branch, base=config.base)
    try:
        commit = run_git(["rev-parse", "--verify", f"refs/heads/{target_branch}"], cwd=repo)
        sha = commit.stdout.strip()
        run_git(["push", "--porcelain", config.remote, f"{sha}:refs/heads/{branch}"], cwd=repo)
        result = PublishResult(branch=branch, base=config.base, commit=sha)
        _record(session_dir, result)
        kill_point("after-push")
        request, created = _find_or_open(host, config, branch, title, summary, retry)
    except GitError as exc:
        return _failed(session_dir, result, f"push to {config.remote} failed: {exc}")
    except TrackerError as exc:
        return _failed(session_dir, result, str(exc))
    result = PublishResult(
        branch=branch, base=config.base, commit=result.commit, request=request, created=created
    )
    _record(session_dir, result)
    return result


def _find_or_open(
    host: IssueTracker,
    config: PublishConfig,
    branch: str,
    title: str,
    summary: str,
    retry: RetryPolicy,
) -> tuple[PullRequest, bool]:
    def find() -> PullRequest | None:
        return retrying(retry, lambda: host.find_pull_request(head=branch, base=config.base))

    existing = find()
    if existing is not None:
        return existing, False
    try:
        opened = host.open_pull_request(head=branch, base=config.base, title=title, body=summary)
    except TrackerError as exc:
        if not is_transient(exc) or isinstance(exc, TrackerRateLimitError):
            raise
        for wait in retry.waits(retry.base_delay):  # the answer was lost: was it opened?
            retry.sleep(wait)
            found = find()
            if found is not None:
                return found, True
        raise
    kill_point("after-pull-request")
    return opened, True


def _failed(session_dir: Path, result: PublishResult, error: str) -> PublishResult:
    failed = PublishResult(
        branch=result.branch, base=result.base, commit=result.commit, error=error
    )
    _record(session_dir, failed)
    return failed


def _record(session_dir: Path, result: PublishResult) -> None:
    payload = asdict(result)
    atomic_write_text(session_dir / RECORD, json.dumps(payload, indent=2) + "\n")


def render_summary(state: object) -> str:
    """The request body: what the session did, from its ledger (``SessionState``)."""
    from seawall.state.ledger import SessionState

    assert isinstance(state, SessionState)
    done = sorted(t.id for t in state.tasks.values() if t.status and t.status.is_success)
    left = sorted(
        (t.id, t.issue.number if t.issue else None)
        for t in state.tasks.values()
        if not (t.status and t.status.is_success)
    )
    lines = [
        f"seawall session `{state.session}` ({state.name}): {len(state.waves)} wave(s), "
        f"merged into `{state.target_branch}` from `{state.start_commit[:12]}`.",
        "",
        "### Done",
        "",
        *(f"- `{task}`" for task in done),
        *(["- _nothing_"] if not done else []),
    ]
    if left:
        lines += ["", "### Carried over", ""]
        lines += [f"- `{task}`" + (f" → #{number}" if number else "") for task, number in left]
    lines += ["", f"Cost: ${state.cost_usd:.2f}. Details: `.seawall/{state.session}/STATE.md`."]
    return "\n".join(lines) + "\n"
