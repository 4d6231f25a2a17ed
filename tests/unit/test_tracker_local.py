"""The local tracker: conformance, the file format, locking and numbering."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from seawall.adapters.trackers.local import LocalTracker
from seawall.errors import TrackerError
from seawall.model import TrackerConfig
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import IssueTracker, open_tracker


class TestLocalConformance(TrackerConformance):
    @pytest.fixture
    def tracker(self, tmp_path: Path) -> Iterator[IssueTracker]:
        with LocalTracker(tmp_path) as tracker:
            yield tracker

    @pytest.fixture
    def second_tracker(self, tmp_path: Path) -> Iterator[IssueTracker]:
        """Another clone's client of the same issues directory."""
        with LocalTracker(tmp_path / "clone", issues_dir=tmp_path / ".seawall" / "issues") as other:
            yield other


def test_one_readable_markdown_file_per_issue(tmp_path: Path) -> None:
    tracker = LocalTracker(tmp_path)
    issue = tracker.create_issue(
        title="[Carryover] [SPIRAL] parser", body="The body.\n", labels=["carryover", "p:1"]
    )
    path = tmp_path / ".seawall" / "issues" / "1.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith('---\nnumber: 1\ntitle: "[Carryover] [SPIRAL] parser"\n')
    assert 'labels: ["carryover", "p:1"]' in text
    assert text.endswith("---\n\nThe body.\n")
    assert issue.url == path.resolve().as_uri()


def test_comments_are_appended_after_the_body(tmp_path: Path) -> None:
    tracker = LocalTracker(tmp_path)
    issue = tracker.create_issue(title="t", body="body\n", labels=["carryover"])
    tracker.comment(issue.number, "seen again")
    text = (tmp_path / ".seawall" / "issues" / "1.md").read_text(encoding="utf-8")
    assert text.rstrip().endswith("seen again")
    assert "<!-- seawall:comment " in text
    assert tracker.list_issues("carryover")[0].body == "body\n"


def test_a_person_can_close_an_issue_by_editing_the_state(tmp_path: Path) -> None:
    tracker = LocalTracker(tmp_path)
    tracker.create_issue(title="t", body="b", labels=["carryover"])
    path = tmp_path / ".seawall" / "issues" / "1.md"
    path.write_text(path.read_text().replace("state: open", "state: closed"))
    assert tracker.list_issues("carryover") == []


def test_concurrent_creates_get_distinct_numbers(tmp_path: Path) -> None:
    numbers: list[int] = []

    def create() -> None:
        issue = LocalTracker(tmp_path).create_issue(title="t", body="b", labels=["c"])
        numbers.append(issue.number)

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(numbers) == list(range(1, 9))


def test_a_corrupt_file_is_a_tracker_error_naming_it(tmp_path: Path) -> None:
    directory = tmp_path / ".seawall" / "issues"
    directory.mkdir(parents=True)
    (directory / "3.md").write_text("no header here")
    with pytest.raises(TrackerError, match=r"3\.md is not a seawall issue file") as info:
        LocalTracker(tmp_path).list_issues("carryover")
    assert info.value.tracker == "local"


def test_resolves_by_name_from_settings(tmp_path: Path) -> None:
    tracker = open_tracker(TrackerConfig(kind="local"), root=tmp_path)
    assert isinstance(tracker, LocalTracker)
    assert tracker.directory == tmp_path / ".seawall" / "issues"
