"""Which retries continue the agent's own conversation, decided by the session: a failed
attempt on the same model does; one that escalates to another model, or a plan with
``continue_conversations = false``, starts a new agent with the fix prompt. A real
session in process, its runner a Python agent that names a conversation and records
what it was asked to continue. (The real CLIs continuing: test_real_continuation.py.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.callable import AgentEmit, CallableRunner
from seawall.events import Conversation
from seawall.plan import parse_plan
from seawall.runner import AgentRequest
from seawall.session.engine import Session
from tests.integration.sessionkit import make_repo, show


@dataclass
class Asked:
    """What each dispatch was given: the conversation to continue, the prompt, the model."""

    calls: list[tuple[str | None, str, str | None]] = field(default_factory=list)


class ConversingRunner(CallableRunner):
    """A Python agent whose conversations can be continued: it names one at its start
    (``conv-<n>``); its first dispatch fails, the next writes the file."""

    def __init__(self, asked: Asked) -> None:
        self.asked = asked
        super().__init__(self._agent)

    @property
    def continues_conversations(self) -> bool:
        return True

    async def _agent(self, request: AgentRequest, emit: AgentEmit) -> str:
        self.asked.calls.append((request.conversation, request.prompt, request.model))
        await emit(Conversation(id=f"conv-{len(self.asked.calls)}"))
        if len(self.asked.calls) == 1:
            return "STATUS: failed — ValueError: bad input"
        (request.workspace / "parse.py").write_text("P = 1\n")
        return "STATUS: done — parser added"


PLAN = """
[session]
name = "policy"
{extra}
[[task]]
id = "parse"
prompt = "Add the parser."
scope = ["parse.py"]
{task_extra}
"""


@pytest.mark.parametrize(
    ("extra", "task_extra", "continued"),
    [
        ("", "", True),
        ("", 'models = ["small", "large"]', False),  # another model: a new conversation
        ("continue_conversations = false", "", False),
    ],
    ids=["same model", "escalated", "turned off"],
)
def test_which_retry_continues_the_conversation(
    tmp_path: Path, extra: str, task_extra: str, continued: bool
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    asked = Asked()
    plan = parse_plan(PLAN.format(extra=extra, task_extra=task_extra))
    session = Session(plan, repo=repo, runner=ConversingRunner(asked), session_id="policy-1")
    anyio.run(session.run)
    assert len(asked.calls) == 2, asked.calls
    (first, _, _), (again, prompt, _) = asked.calls
    assert first is None  # the first dispatch starts a conversation
    if continued:
        assert again == "conv-1"
        assert "CONTINUE: your attempt ended as FAILED" in prompt and "bad input" in prompt
    else:
        assert again is None and "FIX TASK parse" in prompt
    assert show(repo, "main", "parse.py") == "P = 1\n"
    assert session.state is not None
    retry = session.state.waves[1].agents[0]
    assert retry.continued == ("conv-1" if continued else "")
