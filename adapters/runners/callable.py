"""The ``callable`` runner: an async Python function as the agent.

For embedding seawall in a program whose agents are Python code, and for tests::

    async def agent(request: AgentRequest, emit: AgentEmit) -> str:
        await emit(ToolCall(call_id="1", name="Edit", arguments={"file_path": "a.py"}))
        ...
        return "did the thing\\nSTATUS: done"

    runner = CallableRunner(agent)

The function gets the request and an ``emit`` coroutine; it returns its final message
(or emits its own ``Final``). An exception it raises is the agent crashing: an error
result, never an exception out of ``run()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from seawall.adapters.runners._inprocess import run_in_process
from seawall.events import Event
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn, Emitter

__all__ = ["AgentEmit", "AgentFunction", "CallableRunner"]

AgentEmit = Callable[[Event], Awaitable[None]]
AgentFunction = Callable[[AgentRequest, AgentEmit], Awaitable[str | None]]


class CallableRunner(AgentRunner):
    """Runs ``function(request, emit)`` as the agent, once per request."""

    def __init__(self, function: AgentFunction) -> None:
        self.function = function

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the function for ``request``; see ``AgentRunner`` for the duties."""

        async def body(emitter: Emitter) -> str:
            return await self.function(request, emitter) or ""

        return await run_in_process(request, emit, body)
