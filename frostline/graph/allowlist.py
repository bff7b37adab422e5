"""Per-state tool allowlists, enforced at the boundary, and the router seam behind them.

Tool choice is a state property: the current state's `permitted_tools` is the grant set in
force. A permitted call is routed through an injected `ToolRouter` with a structural identity
(state, visit, ordinal), so a durable router (the broker) can replay committed calls after a
crash. An off-list call raises `IllegalTool` and reaches no router.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from frostline.errors import ProviderError
from frostline.graph.errors import IllegalTool
from frostline.graph.graph import Graph


@dataclass(frozen=True)
class ToolCall:
    """A routed tool call. `visit` counts the state's entries from 0; `ordinal` counts the
    visit's routed calls from 0."""

    state: str
    visit: int
    ordinal: int
    tool: str
    payload: Mapping[str, Any]

    @property
    def identity(self) -> str:
        return f"{self.state}#{self.visit}/{self.ordinal}"


class ToolRouter(Protocol):
    """Where permitted tool calls go: in-process functions here, the broker in a durable run."""

    def call(self, call: ToolCall) -> Any: ...


class LocalToolRouter:
    """Route each tool name to a plain function of the payload.

    Example: ``LocalToolRouter({"test.run": lambda payload: {"failed": 0}})``
    """

    def __init__(self, tools: Mapping[str, Callable[[Mapping[str, Any]], Any]]) -> None:
        self.tools = dict(tools)
        self.calls: list[ToolCall] = []

    def call(self, call: ToolCall) -> Any:
        fn = self.tools.get(call.tool)
        if fn is None:
            raise ProviderError(f"tool {call.tool!r} is permitted in {call.state} but has no "
                                "implementation; give the router a function for it", tool=call.tool)
        self.calls.append(call)
        return fn(call.payload)


class ToolBoundary:
    """The allowlist check. `check` raises IllegalTool for an off-list tool.

    Example: ``ToolBoundary(graph).permitted("EXECUTE", "patch.generate") is False``
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._allowed = {s: frozenset(graph.contracts[s].permitted_tools) for s in graph.states}

    def permitted(self, state: str, tool: str) -> bool:
        return tool in self._allowed.get(state, frozenset())

    def owners(self, tool: str) -> tuple[str, ...]:
        """The states whose allowlist holds `tool` (a call of one from elsewhere crosses states)."""
        return tuple(s for s in self.graph.states if tool in self._allowed[s])

    def check(self, state: str, tool: str) -> None:
        if self.permitted(state, tool):
            return
        owners = self.owners(tool)
        where = f"; it belongs to {', '.join(owners)}" if owners else "; it is not in the vocabulary"
        raise IllegalTool(f"ILLEGAL_TOOL: {tool!r} is not on {state}'s allowlist "
                          f"{sorted(self._allowed.get(state, ()))}{where}",
                          state=state, tool=tool, owners=list(owners))
