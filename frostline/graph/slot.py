"""The model-call slot: the single bounded learned entry inside a state.

The engine hands the model the state's required inputs, output schema and allowlist, and asks
for the state's typed output. Inside the slot the model may interleave tool calls and answers,
for at most `max_turns` model calls (one bounded sequence per visit); every call is one budget
draw on the ledger. What the model may not do is decide anything the graph decides: a reply
that names a next state is an ILLEGAL_TRANSITION (recorded, never honored), an off-list tool is
an ILLEGAL_TOOL (recorded, never routed), and whether the output satisfies the schema is checked
here, with jsonschema, never by the model. A malformed output is re-requested at most
`max_rerequests` times; then the visit fails deterministically and the graph's failure edges
take over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from frostline.capabilities.model import ModelClient
from frostline.graph.errors import IllegalTool


@dataclass(frozen=True)
class SlotRequest:
    """What the model sees: never a gate, never the graph, never another state's tools."""

    state: str
    visit: int
    turn: int
    inputs: Mapping[str, Mapping[str, Any]]
    output_schema: Mapping[str, Any]
    permitted_tools: tuple[str, ...]
    observations: tuple[Mapping[str, Any], ...] = ()
    feedback: str | None = None
    hint: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SlotReply:
    """One model reply: an output, tool calls, and possibly an attempt to name a transition."""

    output: Mapping[str, Any] | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    transition: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, reply: Any) -> SlotReply:
        """Accept a SlotReply or its JSON shape ``{"output", "tool_calls", "transition", "usage"}``."""
        if isinstance(reply, SlotReply):
            return reply
        if not isinstance(reply, Mapping):
            raise TypeError(f"a model reply must be a SlotReply or an object, got {type(reply).__name__}")
        unknown = set(reply) - {"output", "tool_calls", "transition", "usage"}
        if unknown:
            raise TypeError(f"unknown reply field(s) {sorted(unknown)}")
        calls = reply.get("tool_calls") or ()
        if not isinstance(calls, Sequence) or not all(isinstance(c, Mapping) for c in calls):
            raise TypeError("tool_calls must be a list of {tool, payload} objects")
        return cls(reply.get("output"), tuple(calls), reply.get("transition"), reply.get("usage") or {})


# The one learned component of a graph: fills a state's output from its inputs.
SlotModel = ModelClient[SlotRequest, SlotReply | Mapping[str, Any]]


@dataclass(frozen=True)
class SlotLimits:
    """Bounds of one visit's slot: model calls in the sequence, and malformed outputs re-requested."""

    max_turns: int = 4
    max_rerequests: int = 2


@dataclass
class SlotOutcome:
    output: dict[str, Any] | None
    turns: int = 0
    rejections: int = 0
    tokens: int = 0
    failure: str = ""


def schema_validator(output_schema: Mapping[str, Any]) -> jsonschema.Draft202012Validator:
    """The JSON schema an output_schema stands for: an object with the required fields."""
    return jsonschema.Draft202012Validator(
        {"type": "object", "required": list(output_schema.get("required", ()))})


def validate_output(output_schema: Mapping[str, Any], output: Any) -> str | None:
    """None when `output` satisfies the schema, else the reason it does not."""
    errors = sorted(schema_validator(output_schema).iter_errors(output), key=lambda e: list(e.path))
    if errors:
        return "; ".join(e.message for e in errors)
    try:
        json.dumps(output, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"output is not JSON: {exc}"
    return None


Emit = Callable[[str, dict[str, Any]], None]
CallTool = Callable[[str, Mapping[str, Any]], Any]


def run_slot(request: SlotRequest, client: SlotModel, limits: SlotLimits, *, emit: Emit,
             call_tool: CallTool) -> SlotOutcome:
    """Drive one bounded sequence of model calls for one state visit."""
    outcome = SlotOutcome(None)
    observations: list[Mapping[str, Any]] = []
    feedback: str | None = None
    for turn in range(limits.max_turns):
        req = SlotRequest(request.state, request.visit, turn, request.inputs, request.output_schema,
                          request.permitted_tools, tuple(observations), feedback, request.hint)
        emit("model_call", {"state": request.state, "visit": request.visit, "turn": turn,
                            "remaining": limits.max_turns - turn - 1})
        outcome.turns += 1
        try:
            reply = SlotReply.coerce(client.complete(req))
        except TypeError as exc:
            reply, feedback = SlotReply(), f"malformed reply: {exc}"
        tokens = reply.usage.get("total_tokens", 0)
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            outcome.tokens += tokens
        if reply.transition is not None:
            emit("illegal_transition", {"state": request.state, "visit": request.visit,
                                        "requested": str(reply.transition), "source": "model",
                                        "message": "the model never names the next state; ignored"})
        for call in reply.tool_calls:
            tool = str(call.get("tool", ""))
            payload = call.get("payload") or {}
            try:
                result = call_tool(tool, payload if isinstance(payload, Mapping) else {})
                observations.append({"tool": tool, "result": result})
            except IllegalTool as exc:
                observations.append({"tool": tool, "error": "ILLEGAL_TOOL", "message": exc.message})
        if reply.output is None and reply.tool_calls:
            continue  # an action turn; the answer may come next
        problem = "the reply carried no output" if reply.output is None else \
            validate_output(request.output_schema, reply.output)
        if problem is None and reply.output is not None:
            outcome.output = dict(reply.output)
            return outcome
        outcome.rejections += 1
        feedback = problem or feedback
        emit("output_rejected", {"state": request.state, "visit": request.visit, "turn": turn,
                                 "problem": feedback or "", "rejections": outcome.rejections})
        if outcome.rejections > limits.max_rerequests:
            outcome.failure = f"malformed output after {outcome.rejections} attempt(s): {feedback}"
            return outcome
    outcome.failure = f"no valid output within {limits.max_turns} model call(s)"
    return outcome

