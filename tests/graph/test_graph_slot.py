"""Phase 6: the model-call slot — the single bounded L entry inside a state."""

from __future__ import annotations

import pytest
from graph_helpers import HAPPY, ScriptedModel, scripted_bodies

from frostline.graph.allowlist import LocalToolRouter
from frostline.graph.engine import Engine, TraversalStatus, model_body
from frostline.graph.graph import load_graph
from frostline.graph.slot import SlotLimits, SlotReply, validate_output

CANONICAL = load_graph("canonical")
GOOD = {"output": HAPPY["LOCALIZE"]}


def run_localize(replies, *, limits=None, tools=None):
    bodies = scripted_bodies()
    bodies["LOCALIZE"] = model_body
    model = ScriptedModel({"LOCALIZE": replies})
    router = LocalToolRouter(tools or {})
    engine = Engine(CANONICAL, bodies, model=model, router=router, limits=limits)
    return engine.run(), model, router


def test_one_bounded_model_call_emits_the_typed_output():
    result, model, _ = run_localize([GOOD])
    assert result.status is TraversalStatus.ACCEPTED
    assert result.counters.model_calls == 1
    assert result.counters.model_calls_by_state == {"LOCALIZE": 1}
    assert result.artifacts["LocalizationResult"].value == HAPPY["LOCALIZE"]
    [request] = model.requests
    # the model gets the state's required inputs, output schema and allowlist — never a gate
    assert set(request.inputs) == {"RepoManifest"}
    assert request.output_schema == {"name": "LocalizationResult",
                                     "required": ["candidates", "top_candidate", "top_candidate_confidence"]}
    assert request.permitted_tools == ("code.graph", "trace.read")
    assert "guard" not in repr(request) and "TERMINAL" not in repr(request)
    [draw] = result.ledger.of_kind("model_call")
    assert draw.data == {"state": "LOCALIZE", "visit": 0, "turn": 0, "remaining": 3}


def test_off_list_tool_from_the_slot_is_illegal_and_not_routed():
    replies = [{"tool_calls": [{"tool": "patch.generate", "payload": {}},
                               {"tool": "code.graph", "payload": {"file": "a.py"}}]}, GOOD]
    result, model, router = run_localize(
        replies, tools={"code.graph": lambda p: {"functions": ["f"]},
                        "patch.generate": lambda p: pytest.fail("routed an off-list tool")})
    assert [c.tool for c in router.calls] == ["code.graph"]
    [illegal] = result.ledger.of_kind("illegal_tool")
    assert illegal.data["tool"] == "patch.generate" and illegal.data["routed"] is False
    observations = model.requests[1].observations
    assert observations[0]["error"] == "ILLEGAL_TOOL"
    assert observations[1] == {"tool": "code.graph", "result": {"functions": ["f"]}}
    assert result.counters.model_calls == 2  # one bounded sequence of two calls
    assert result.status is TraversalStatus.ACCEPTED


def test_the_model_cannot_invent_a_transition():
    result, _, _ = run_localize([{"output": HAPPY["LOCALIZE"], "transition": "GENERATE"}])
    [illegal] = result.ledger.of_kind("illegal_transition")
    assert illegal.data["requested"] == "GENERATE" and illegal.data["source"] == "model"
    assert result.counters.illegal_transitions == 1
    # the graph, not the model, chose the next state
    assert result.path[:4] == ("INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT")


def test_malformed_output_is_re_requested_then_the_state_fails_deterministically():
    bad = {"output": {"candidates": []}}  # missing two required fields
    result, model, _ = run_localize([bad, bad, bad], limits=SlotLimits(max_turns=5, max_rerequests=2))
    assert len(model.requests) == 3
    assert model.requests[1].feedback and "top_candidate" in model.requests[1].feedback
    assert len(result.ledger.of_kind("output_rejected")) == 3
    [failed] = result.ledger.of_kind("state_failed")
    assert failed.data["state"] == "LOCALIZE" and "malformed" in failed.data["reason"]
    assert (result.terminal, result.reason) == ("TERMINAL_REJECT", "out_of_budget")
    assert "LocalizationResult" not in result.artifacts


def test_a_malformed_output_followed_by_a_good_one_succeeds():
    result, _model, _ = run_localize([{"output": "not an object"}, GOOD])
    assert result.status is TraversalStatus.ACCEPTED
    assert result.counters.output_rejections == 1 and result.counters.model_calls == 2


def test_the_sequence_is_bounded_even_without_an_answer():
    spin = {"tool_calls": [{"tool": "code.graph", "payload": {}}]}
    result, model, _ = run_localize([spin] * 10, limits=SlotLimits(max_turns=3),
                                    tools={"code.graph": lambda p: {}})
    assert len(model.requests) == 3
    assert result.terminal == "TERMINAL_REJECT"


def test_at_most_one_slot_per_visit_and_none_for_deterministic_states():
    def greedy(ctx):
        ctx.judge()
        return ctx.judge()  # a second L entry in the same visit is refused

    bodies = scripted_bodies()
    bodies["LOCALIZE"] = greedy
    model = ScriptedModel({"LOCALIZE": [GOOD, GOOD]})
    result = Engine(CANONICAL, bodies, model=model).run()
    assert len(model.requests) == 1
    [failed] = result.ledger.of_kind("state_failed")
    assert "at most once" in failed.data["reason"]
    # every other state is deterministic: zero model calls there
    assert set(result.counters.model_calls_by_state) == {"LOCALIZE"}


def test_the_l_column_has_one_entry_per_state_visit_across_a_run():
    bodies = scripted_bodies({"TEST": [{"failed": 1}]})
    for s in ("LOCALIZE", "GENERATE", "REPAIR"):
        bodies[s] = model_body
    model = ScriptedModel({"LOCALIZE": [GOOD], "GENERATE": [{"output": HAPPY["GENERATE"]}],
                           "REPAIR": [{"output": HAPPY["REPAIR"]}]})
    result = Engine(CANONICAL, bodies, model=model).run()
    assert result.status is TraversalStatus.ACCEPTED
    for state, calls in result.counters.model_calls_by_state.items():
        assert calls == result.counters.visits[state] == 1


def test_reply_shapes_and_schema_validation():
    assert SlotReply.coerce({"output": {"a": 1}}).output == {"a": 1}
    with pytest.raises(TypeError):
        SlotReply.coerce({"next_state": "GENERATE"})
    assert validate_output({"name": "X", "required": ["a"]}, {"a": 1}) is None
    assert "'a' is a required property" in (validate_output({"name": "X", "required": ["a"]}, {}) or "")
    assert "not JSON" in (validate_output({"name": "X", "required": []}, {"a": float("nan")}) or "")
