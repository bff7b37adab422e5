"""Phase 2: gate predicates are deterministic functions of stored artifacts."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.graph.gates import StoredArtifact, evaluate_gate, evaluate_predicate
from frostline.graph.records import Freshness, GatePredicate, Operator, exists
from frostline.graph.shipped import LOCALIZATION_GATE


def stored(name: str, value: dict, freshness: Freshness = Freshness.VALID) -> StoredArtifact:
    return StoredArtifact(name, value, "sha256:" + "0" * 64, freshness, 1, "TEST#0")


def localization(confidence: float, freshness: Freshness = Freshness.VALID) -> dict[str, StoredArtifact]:
    return {"LocalizationResult": stored("LocalizationResult", {
        "candidates": ["a.py:f"], "top_candidate": "a.py:f", "top_candidate_confidence": confidence},
        freshness)}


def test_canonical_gate_is_existence_and_threshold():
    assert (exists("LocalizationResult"),
                                 GatePredicate("LocalizationResult", "top_candidate_confidence", Operator.GT, 0.5)) == LOCALIZATION_GATE
    assert evaluate_gate(LOCALIZATION_GATE, localization(0.9)).holds
    assert not evaluate_gate(LOCALIZATION_GATE, localization(0.2)).holds
    assert not evaluate_gate(LOCALIZATION_GATE, localization(0.5)).holds  # strictly greater
    missing = evaluate_gate(LOCALIZATION_GATE, {})
    assert not missing.holds
    assert [r.reason for r in missing.results] == ["missing", "missing"]


def test_a_stale_artifact_reads_as_absent():
    result = evaluate_gate(LOCALIZATION_GATE, localization(0.9, Freshness.STALE))
    assert not result.holds
    assert {r.reason for r in result.results} == {"stale"}


def test_non_numeric_property_never_opens_a_gate():
    arts = {"Plan": stored("Plan", {"steps": [], "step_count": "many", "satisfiable": True})}
    r = evaluate_predicate(GatePredicate("Plan", "step_count", Operator.GT, 0), arts)
    assert (r.holds, r.reason) == (False, "not_a_number")
    # booleans read as 1/0
    assert evaluate_predicate(GatePredicate("Plan", "satisfiable", Operator.EQ, 1), arts).holds


def test_empty_gate_is_unconditional():
    assert evaluate_gate((), {}).holds


def test_evaluation_is_logged_per_predicate():
    result = evaluate_gate(LOCALIZATION_GATE, localization(0.7)).to_dict()
    assert result["holds"] is True
    assert [p["predicate"] for p in result["predicates"]] == [
        "LocalizationResult exists", "LocalizationResult.top_candidate_confidence GT 0.5"]
    assert result["predicates"][1]["value"] == 0.7


@settings(deadline=None)
@given(st.floats(0, 1, allow_nan=False), st.sampled_from(list(Operator)), st.floats(0, 1, allow_nan=False),
       st.booleans())
def test_gate_is_a_pure_function_of_the_artifacts(confidence, op, threshold, stale):
    arts = localization(confidence, Freshness.STALE if stale else Freshness.VALID)
    before = copy.deepcopy(arts)
    guard = (GatePredicate("LocalizationResult", "top_candidate_confidence", op, threshold),)
    first, second = evaluate_gate(guard, arts), evaluate_gate(guard, arts)
    assert first == second
    assert arts == before
    assert first.holds == (not stale and op.compare(confidence, threshold))


def test_gates_consult_no_model(forbidden_model):
    # the gate engine has no model parameter at all; evaluating every canonical gate over the
    # artifacts of a complete run never reaches the forbidden client.
    from graph_helpers import run_canonical

    result = run_canonical(model=forbidden_model)
    from frostline.graph.graph import load_graph

    g = load_graph("canonical")
    for t in g.transitions:
        evaluate_gate(t.guard, result.artifacts)
    assert result.counters.model_calls == 0
