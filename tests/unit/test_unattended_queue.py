"""queue.json: enqueue, resume, removal, intake and corrupt files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.errors import ConfigurationError, StateError
from seawall.unattended.ledger import AttemptRow, item_histories
from seawall.unattended.queue import IntakeIssue, ItemSource, Queue, QueueFile


def plan(tmp_path: Path, name: str = "plan.toml") -> Path:
    path = tmp_path / name
    path.write_text('[session]\n\n[[task]]\nid = "a"\nprompt = "x"\n')
    return path


def test_enqueue_assigns_ids_and_keeps_absolute_plan_paths(tmp_path: Path) -> None:
    queue = QueueFile(tmp_path / "runner" / "queue.json")
    first = queue.enqueue_plan(plan(tmp_path, "fix login.toml"), now=5.0)
    second = queue.enqueue_plan(plan(tmp_path, "fix login.toml"), now=6.0)
    assert (first.id, second.id) == ("fix-login-1", "fix-login-2")
    assert first.plan == str((tmp_path / "fix login.toml").resolve())
    loaded = queue.load()
    assert loaded.items == (first, second)
    assert json.loads(queue.path.read_text())["schema"] == 1


def test_enqueue_refuses_missing_and_non_toml_plans(tmp_path: Path) -> None:
    queue = QueueFile(tmp_path / "queue.json")
    with pytest.raises(ConfigurationError, match="no such plan file"):
        queue.enqueue_plan(tmp_path / "missing.toml", now=0.0)
    bad = tmp_path / "bad.toml"
    bad.write_text("[session\n")
    with pytest.raises(ConfigurationError, match="not a TOML plan file"):
        queue.enqueue_plan(bad, now=0.0)
    assert not queue.path.exists()


def test_resume_clears_the_reason_and_grants_one_override(tmp_path: Path) -> None:
    queue = QueueFile(tmp_path / "queue.json")
    queue.update(lambda q: Queue(blocked_reason="breaker open: ..."))
    resumed = queue.resume()
    assert resumed.blocked_reason is None and resumed.override
    assert queue.load() == resumed


def test_remove_drops_only_that_item(tmp_path: Path) -> None:
    queue = QueueFile(tmp_path / "queue.json")
    a = queue.enqueue_plan(plan(tmp_path), now=0.0)
    b = queue.enqueue_plan(plan(tmp_path), now=0.0)
    queue.remove(a.id)
    assert queue.load().items == (b,)


@pytest.mark.parametrize(
    "text", ["{", "[]", '{"schema": 9, "items": []}', '{"schema": 1, "items": [{"plan": "x"}]}']
)
def test_a_corrupt_queue_is_a_state_error_naming_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "queue.json"
    path.write_text(text)
    with pytest.raises(StateError, match=r"queue\.json is not a valid runner queue"):
        QueueFile(path).load()


def test_intake_skips_queued_and_already_run_issues(tmp_path: Path) -> None:
    queue = QueueFile(tmp_path / "queue.json")
    issues = [
        IntakeIssue(id="1", title="one"),
        IntakeIssue(id="2", title="two", body="body"),
        IntakeIssue(id="3", title="three"),
    ]
    histories = item_histories([AttemptRow(item="issue-3", task="t", outcome="done", ts=1.0)])
    added = queue.intake(lambda: issues, histories=histories, plans_dir=tmp_path / "p", now=2.0)
    assert [item.id for item in added] == ["issue-1", "issue-2"]
    assert all(item.source is ItemSource.ISSUE for item in added)
    assert (tmp_path / "p" / "issue-2.toml").read_text().count("[[task]]") == 1
    again = queue.intake(lambda: issues, histories=histories, plans_dir=tmp_path / "p", now=3.0)
    assert again == ()
    assert [item.id for item in queue.load().items] == ["issue-1", "issue-2"]


OLD_QUEUE = """{
  "schema": 1,
  "blocked_reason": "breaker open: 3 consecutive failed attempts",
  "override": false,
  "next_seq": 3,
  "items": [
    {
      "id": "plan-1",
      "plan": "/work/plan.toml",
      "source": "plan",
      "issue": null,
      "title": "plan.toml",
      "enqueued_at": 1700000000.5
    },
    {
      "id": "issue-7",
      "plan": "/work/.seawall/runner/plans/issue-7.toml",
      "source": "issue",
      "issue": "7",
      "title": "Fix the login",
      "enqueued_at": 1700000100.0
    }
  ]
}
"""


def test_a_queue_written_before_it_was_a_record_loads_and_is_written_the_same(
    tmp_path: Path,
) -> None:
    path = tmp_path / "queue.json"
    path.write_text(OLD_QUEUE)
    queue = QueueFile(path).load()
    assert queue.blocked_reason is not None and queue.next_seq == 3 and not queue.override
    assert [(i.id, i.source, i.issue) for i in queue.items] == [
        ("plan-1", ItemSource.PLAN, None),
        ("issue-7", ItemSource.ISSUE, "7"),
    ]
    QueueFile(path).update(lambda q: q)
    assert path.read_text() == OLD_QUEUE


def test_a_queue_without_next_seq_continues_after_its_items(tmp_path: Path) -> None:
    path = tmp_path / "queue.json"
    path.write_text('{"schema": 1, "items": [{"id": "a-1", "plan": "/p.toml"}]}')
    queue = QueueFile(path).load()
    assert queue.next_seq == 2 and queue.items[0].source is ItemSource.PLAN
