"""The local tracker, the embedded default: one Markdown file per issue in the repository.

Issue ``N`` lives in ``<repo>/.seawall/issues/N.md``: a front-matter header (number,
title, state, labels, created), a blank line, the body verbatim, then each comment
after a ``<!-- seawall:comment <time> -->`` line. Values in the header are JSON, which
is also valid YAML, so a person can read the file and tools can parse it. A person
closes an issue by editing ``state: open`` to ``state: closed``.

Every write happens under an exclusive lock (``.seawall/issues/.lock``) and replaces
the file atomically, so concurrent sessions never tear a file or reuse a number.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from seawall.errors import StateError, TrackerError
from seawall.model import TrackerConfig
from seawall.runtime.files import atomic_write_text, file_lock
from seawall.tracker import Issue, IssueTracker

__all__ = ["LocalTracker"]

_COMMENT_LINE = re.compile(r"\n<!-- seawall:comment [0-9TZ:.\-]+ -->\n")
_FENCE = "---\n"


class LocalTracker(IssueTracker):
    """Issues as Markdown files under ``<root>/.seawall/issues/`` (or ``issues_dir``)."""

    name = "local"

    def __init__(self, root: Path, *, issues_dir: Path | None = None) -> None:
        self.directory = issues_dir if issues_dir is not None else root / ".seawall" / "issues"
        self._lock_path = self.directory / ".lock"

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

    # -- files ----------------------------------------------------------------------

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
