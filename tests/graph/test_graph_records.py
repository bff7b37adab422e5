"""The four records: exactly the specification's fields, strict JSON in both directions."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.errors import GraphLoadError
from frostline.graph.records import (
    ArtifactFreshness,
    Freshness,
    GatePredicate,
    Operator,
    StateContract,
    Transition,
    TransitionKind,
    exists,
)


def field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_records_have_exactly_the_specified_fields():
    assert field_names(StateContract) == ["required_inputs", "permitted_tools", "output_schema",
                                          "transition_guards", "failure_transitions"]
    assert field_names(GatePredicate) == ["artifact", "property", "operator", "threshold"]
    assert field_names(Transition) == ["from_", "to", "kind", "guard", "reason"]
    assert field_names(ArtifactFreshness) == ["artifact", "freshness", "depends_on"]
    assert set(Transition("A", "B", TransitionKind.FORWARD).to_dict()) == {"from", "to", "kind", "guard", "reason"}


def test_records_are_frozen():
    p = exists("Plan")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.threshold = 2.0  # type: ignore[misc]


def test_enums_hold_exactly_the_specified_values():
    assert [o.value for o in Operator] == ["GT", "GTE", "LT", "LTE", "EQ", "NEQ"]
    assert [k.value for k in TransitionKind] == ["forward", "retry", "rollback", "termination"]
    assert [f.value for f in Freshness] == ["VALID", "STALE"]


@pytest.mark.parametrize(("data", "field"), [
    ({"artifact": "A", "property": "p", "operator": "GT"}, "predicate.threshold"),
    ({"artifact": "A", "property": "p", "operator": "GT", "threshold": 1, "note": "x"}, "predicate.note"),
    ({"artifact": "A", "property": "p", "operator": "ABOUT", "threshold": 1}, "predicate.operator"),
    ({"artifact": "A", "property": "p", "operator": "GT", "threshold": "high"}, "predicate.threshold"),
    ({"artifact": 3, "property": "p", "operator": "GT", "threshold": 1}, "predicate.artifact"),
])
def test_bad_predicates_name_the_field(data, field):
    with pytest.raises(GraphLoadError) as err:
        GatePredicate.from_dict(data)
    assert err.value.fields["field"] == field


def test_transition_reasons_are_checked():
    ok = {"from": "TEST", "to": "TERMINAL_REJECT", "kind": "termination", "guard": [], "reason": "out_of_budget"}
    assert Transition.from_dict(ok).reason == "out_of_budget"
    with pytest.raises(GraphLoadError) as err:
        Transition.from_dict(dict(ok, reason="tired"))
    assert err.value.fields["field"] == "transition.reason"
    with pytest.raises(GraphLoadError) as err:
        Transition.from_dict(dict(ok, kind="retry"))
    assert err.value.fields["field"] == "transition.reason"
    with pytest.raises(GraphLoadError) as err:
        Transition.from_dict(dict(ok, kind="sideways"))
    assert err.value.fields["field"] == "transition.kind"
    with pytest.raises(GraphLoadError):
        Transition("A", "B", TransitionKind.RETRY, (), "out_of_budget")


def test_freshness_enum_checked():
    with pytest.raises(GraphLoadError) as err:
        ArtifactFreshness.from_dict({"artifact": "Plan", "freshness": "FRESH", "depends_on": []})
    assert err.value.fields["field"] == "lattice.freshness"


def test_state_contract_output_schema_shape():
    base = {"required_inputs": [], "permitted_tools": [], "output_schema": {},
            "transition_guards": [], "failure_transitions": []}
    assert StateContract.from_dict(base).output is None
    c = StateContract.from_dict(dict(base, output_schema={"name": "Plan", "required": ["steps"]}))
    assert c.output == "Plan" and c.output_fields == ("steps",)
    with pytest.raises(GraphLoadError) as err:
        StateContract.from_dict(dict(base, output_schema={"name": "Plan"}))
    assert err.value.fields["field"] == "contract.output_schema.required"
    with pytest.raises(GraphLoadError) as err:
        StateContract.from_dict({k: v for k, v in base.items() if k != "permitted_tools"})
    assert err.value.fields["field"] == "contract.permitted_tools"


ops = st.sampled_from(list(Operator))
names = st.text("ABCDEFabcdef", min_size=1, max_size=8)
predicates = st.builds(GatePredicate, names, st.text("abc_xyz", min_size=1, max_size=8), ops,
                       st.floats(-1e6, 1e6, allow_nan=False))


@settings(deadline=None)
@given(st.lists(predicates, max_size=4), st.sampled_from(list(TransitionKind)))
def test_transition_json_round_trip(guard, kind):
    reason = "out_of_budget" if kind is TransitionKind.TERMINATION else ""
    t = Transition("A", "B", kind, tuple(guard), reason)
    assert Transition.from_dict(t.to_dict()) == t


@settings(deadline=None)
@given(st.floats(-10, 10, allow_nan=False), st.floats(-10, 10, allow_nan=False))
def test_operators_compare_like_python(value, threshold):
    assert Operator.GT.compare(value, threshold) == (value > threshold)
    assert Operator.GTE.compare(value, threshold) == (value >= threshold)
    assert Operator.LT.compare(value, threshold) == (value < threshold)
    assert Operator.LTE.compare(value, threshold) == (value <= threshold)
    assert Operator.EQ.compare(value, threshold) == (value == threshold)
    assert Operator.NEQ.compare(value, threshold) == (value != threshold)
