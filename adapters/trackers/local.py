"""The local tracker, the embedded default: one Markdown file per issue in the repository.

Issue ``N`` lives in ``<repo>/.seawall/issues/N.md``: a front-matter header (number,
title, state, labels, created), a blank line, the body verbatim, then each comment
after a ``<!-- seawall:comment <time> -->`` line. Values in the header are JSON, which
is also valid YAML, so a person can read the file and tools can parse it. A person
closes an issue by editing ``state: open`` to ``state: closed``.

Every write happens under an exclusive lock (``.seawall/issues/.lock``) and replaces
the file atomically, so concurrent sessions never tear a file or reuse a number.

The directory also holds claims (``.seawall/issues/.claims/<key>``: the holder and
when the claim expires), taken and released under the same lock. Sessions that share
the directory, from one repository or from several clones pointed at it, are so
serialised by the directory itself, not only by a repository's lock file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from seawall.adapters.trackers._claims import CLAIM_TTL, describe_claim, new_holder, read_claim
from seawall.errors import StateError, TrackerError
from seawall.model import TrackerConfig
from seawall.runtime.files import atomic_write_text, file_lock
from seawall.tracker import Capability, Issue, IssueTracker

__all__ = ["LocalTracker"]

_COMMENT_LINE = re.compile(r"\n<!-- seawall:comment [0-9TZ:.\-]+ -->\n")
_FENCE = "---\n"
_SAFE_KEY = re.compile(r"[0-9A-Za-z_.-]{1,64}")


class LocalTracker(IssueTracker):
    """Issues as Markdown files under ``<root>/.seawall/issues/`` (or ``issues_dir``)."""

    name = "local"
    capabilities = frozenset({Capability.ISSUES, Capability.CLAIMS})

    def __init__(
        self,
        root: Path,
        *,
        issues_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` (wall time, shared by every session on the directory) dates claims."""
        self.directory = issues_dir if issues_dir is not None else root / ".seawall" / "issues"
        self._lock_path = self.directory / ".lock"
        self._clock = clock
        self._holder = new_holder()  # of claims taken through claim(key)

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> LocalTracker:
        """Issues under ``<root>/.seawall/issues``; ``config.url`` may name another directory."""
        return cls(root, issues_dir=Path(config.url) if config.url else None)

    def list_issues(self, label: str) -> list[Issue]:
        issues = [issue for issue in self._read_all("list issues") if issue.state == "open"]
        return [issue for issue in issues if label in issue.labels]

    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        with self._locked("create issue"):
            number = max((issue.number for issue in self._read_all("create issue")), default=0)
            issue = Issue(
                number=number + 1,
                title=" ".join(title.split()),
                body=body,
                labels=tuple(labels),
                url=self._path(number + 1).resolve().as_uri(),
            )
            self._write(issue, _header(issue, created=_now()) + body, "create issue")
            return issue

    def comment(self, number: int, body: str) -> None:
        with self._locked("comment"):
            path = self._path(number)
            text = self._read_text(path, "comment")
            if text is None:
                raise TrackerError(
                    f"issue #{number} does not exist ({path})",
                    tracker=self.name,
                    operation="comment",
                )
            text += f"\n<!-- seawall:comment {_now()} -->\n{body}"
            self._write_text(path, text, "comment")

    def close_issue(self, number: int) -> None:
        with self._locked("close issue"):
            path = self._path(number)
            text = self._read_text(path, "close issue")
            if text is None:
                raise TrackerError(
                    f"issue #{number} does not exist ({path})",
                    tracker=self.name,
                    operation="close issue",
                )
            header_end = text.find("\n" + _FENCE, len(_FENCE) - 1)
            header = re.sub(r"(?m)^state:.*$", "state: closed", text[:header_end], count=1)
            self._write_text(path, header + text[header_end:], "close issue")

    def ensure_labels(self, labels: Sequence[str]) -> None:
        """Labels need no registration in local files; this only validates them."""
        for label in labels:
            if not label.strip() or "\n" in label:
                raise TrackerError(
                    f"invalid label {label!r}", tracker=self.name, operation="ensure labels"
                )

    def claim(self, key: str) -> bool:
        """Take the claim ``key`` for this client for ``CLAIM_TTL`` seconds."""
        return self.take_claim(key, holder=self._holder, ttl=CLAIM_TTL) <= 0

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float:
        """Compare and set under the directory's lock: free, expired or ``holder``'s own
        claims become ``holder``'s for ``ttl`` seconds."""
        with self._locked("claim"):
            path = self._claim_path(key)
            held = self._held(path, "claim")
            left = held[1] - self._clock() if held is not None else 0.0
            if held is not None and held[0] != holder and left > 0:
                return left
            self._write_text(path, describe_claim(holder, self._clock() + ttl) + "\n", "claim")
            return 0.0

    def release_claim(self, key: str, *, holder: str) -> None:
        """Remove ``holder``'s claim ``key`` (or an expired one); another's stays."""
        with self._locked("release claim"):
            path = self._claim_path(key)
            held = self._held(path, "release claim")
            if held is not None and held[0] != holder and held[1] > self._clock():
                return
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise TrackerError(
                    f"cannot remove {path}: {exc.strerror}",
                    tracker=self.name,
                    operation="release claim",
                ) from exc

    # -- files ----------------------------------------------------------------------

    def _claim_path(self, key: str) -> Path:
        if _SAFE_KEY.fullmatch(key) is None:
            key = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.directory / ".claims" / key

    def _held(self, path: Path, operation: str) -> tuple[str, float] | None:
        text = self._read_text(path, operation)
        return read_claim(text) if text is not None else None

    def _path(self, number: int) -> Path:
        return self.directory / f"{number}.md"

    @contextlib.contextmanager
    def _locked(self, operation: str) -> Iterator[None]:
        """Hold the tracker's write lock; a lock failure is a ``TrackerError``."""
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(file_lock(self._lock_path, what="the local issue tracker"))
            except OSError as exc:
                raise TrackerError(
                    f"cannot lock {self._lock_path}: {exc.strerror}",
                    tracker=self.name,
                    operation=operation,
                ) from exc
            yield

    def _read_all(self, operation: str) -> list[Issue]:
        if not self.directory.is_dir():
            return []
        issues = []
        for path in sorted(self.directory.glob("*.md")):
            if not path.stem.isdigit():
                continue
            text = self._read_text(path, operation)
            if text is not None:
                issues.append(self._parse(path, text, operation))
        return issues

    def _read_text(self, path: Path, operation: str) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TrackerError(
                f"cannot read {path}: {exc.strerror}", tracker=self.name, operation=operation
            ) from exc

    def _parse(self, path: Path, text: str, operation: str) -> Issue:
        try:
            header, rest = _split_front_matter(text)
            body = _COMMENT_LINE.split(rest, maxsplit=1)[0]
            number = int(str(header.get("number", path.stem)))
            labels = header.get("labels", [])
            if not isinstance(labels, list):
                raise ValueError("labels must be a list")
        except ValueError as exc:
            raise TrackerError(
                f"{path} is not a seawall issue file: {exc}", tracker=self.name, operation=operation
            ) from exc
        return Issue(
            number=number,
            title=str(header.get("title", "")),
            body=body,
            labels=tuple(str(label) for label in labels),
            url=path.resolve().as_uri(),
            state=str(header.get("state", "open")).strip().lower(),
        )

    def _write(self, issue: Issue, text: str, operation: str) -> None:
        self._write_text(self._path(issue.number), text, operation)

    def _write_text(self, path: Path, text: str, operation: str) -> None:
        try:
            atomic_write_text(path, text)
        except (OSError, StateError) as exc:
            raise TrackerError(
                f"cannot write {path}: {exc}", tracker=self.name, operation=operation
            ) from exc

    def __repr__(self) -> str:
        return f"LocalTracker({str(self.directory)!r})"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _header(issue: Issue, *, created: str) -> str:
    lines = [
        f"number: {issue.number}",
        f"title: {json.dumps(issue.title, ensure_ascii=False)}",
        f"state: {issue.state}",
        f"labels: {json.dumps(list(issue.labels), ensure_ascii=False)}",
        f"created: {json.dumps(created)}",
    ]
    return _FENCE + "\n".join(lines) + "\n" + _FENCE + "\n"


def _split_front_matter(text: str) -> tuple[dict[str, object], str]:
    if not text.startswith(_FENCE):
        raise ValueError("missing the '---' header")
    end = text.find("\n" + _FENCE, len(_FENCE) - 1)
    if end < 0:
        raise ValueError("the '---' header is not closed")
    header: dict[str, object] = {}
    for line in text[len(_FENCE) : end].splitlines():
        key, sep, raw = line.partition(":")
        if sep:
            header[key.strip()] = _value(raw.strip())
    rest = text[end + 1 + len(_FENCE) :]
    return header, rest.removeprefix("\n")


def _value(raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # a person wrote a bare word, e.g. "state: closed"
