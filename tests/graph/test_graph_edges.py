"""Phase 5: retry, rollback and termination edges driven by deterministic budgets."""

from __future__ import annotations

from typing import Any

from graph_helpers import HAPPY, ForbiddenModel, random_bodies, scripted_bodies
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.graph.edges import BudgetState, select_edge
from frostline.graph.engine import Engine, TraversalStatus
from frostline.graph.freshness import Lattice
from frostline.graph.gates import StoredArtifact
from frostline.graph.graph import load_graph
from frostline.graph.ledger import CallbackSink
from frostline.graph.modelcheck import configurations
from frostline.graph.records import Freshness

CANONICAL = load_graph("canonical")


def edges(result) -> list[tuple[str, str, str]]:
    return [(e.data["from"], e.data["to"], e.data["kind"]) for e in result.ledger.of_kind("edge")]


def run(overrides: dict[str, list[Any]]):
    return Engine(CANONICAL, scripted_bodies(overrides), model=ForbiddenModel()).run()


def test_test_failure_with_budget_takes_the_retry_edge():
    result = run({"TEST": [{"failed": 1}]})
    assert ("TEST", "REPAIR", "retry") in edges(result)
    assert result.counters.retry_used == 1
    assert result.status is TraversalStatus.ACCEPTED
    assert result.counters.model_calls == 0


def test_exhausted_budget_takes_the_termination_edge():
    result = run({"TEST": [{"failed": 1}] * 10, "REPAIR": [{}] * 10})
    taken = edges(result)
    assert taken.count(("TEST", "REPAIR", "retry")) == CANONICAL.budgets.retry
    assert taken[-1] == ("TEST", "TERMINAL_REJECT", "termination")
    assert (result.status, result.terminal, result.reason) == (TraversalStatus.REJECTED, "TERMINAL_REJECT", "out_of_budget")
    last_gates = [e.data for e in result.ledger.of_kind("gate") if e.data["state"] == "TEST"][-3:]
    retry = next(g for g in last_gates if g["edge"]["to"] == "REPAIR")
    assert retry["budget_ok"] is False and retry["gate"] is None  # disabled, not even evaluated
    assert result.counters.model_calls == 0


def test_diagnosis_implicating_validation_failure_rolls_back_to_localize():
    result = run({"VALIDATE": [{"accepted": 0, "implicates_diagnosis": 1}],
                  "DEBUG": [{}, {"root_cause": "wrong function entirely"}]})
    assert ("VALIDATE", "LOCALIZE", "rollback") in edges(result)
    assert result.counters.rollback_used == 1
    # Upstream preserved: the manifest and the localization were never invalidated or re-versioned.
    inv = [e.data for e in result.ledger.of_kind("invalidation") if e.data["changed"] == "Diagnosis"]
    assert inv and inv[0]["stale"] == ["Plan", "Patch", "Review", "ValidationResult"]
    assert inv[0]["preserved"] == ["RepoManifest", "LocalizationResult"]
    assert all("RepoManifest" not in e.data["stale"] and "LocalizationResult" not in e.data["stale"]
               for e in result.ledger.of_kind("invalidation"))
    assert result.artifacts["RepoManifest"].version == 1
    assert result.artifacts["LocalizationResult"].version == 1
    assert result.status is TraversalStatus.ACCEPTED
    assert result.counters.model_calls == 0


def test_edge_selection_is_a_pure_function_of_artifacts_and_budget():
    def art(name: str, value: dict, fresh: Freshness = Freshness.VALID) -> StoredArtifact:
        return StoredArtifact(name, value, "sha256:" + "1" * 64, fresh, 1, "X#0")

    arts = {name: art(name, value) for name, value in
            [("RepoManifest", HAPPY["RECONNAISSANCE"]), ("LocalizationResult", HAPPY["LOCALIZE"]),
             ("Diagnosis", HAPPY["DEBUG"]), ("Plan", HAPPY["PLAN"]), ("Patch", HAPPY["GENERATE"]),
             ("TestResult", HAPPY["TEST"]), ("RegressionResult", HAPPY["REGRESSION"]),
             ("Review", HAPPY["REVIEW"])]}
    arts["ValidationResult"] = art("ValidationResult", {"accepted": 0, "implicates_diagnosis": 1, "reasons": []})
    fresh = BudgetState(CANONICAL.budgets)
    d = select_edge(CANONICAL, "VALIDATE", arts, fresh, emitted=True)
    assert d.edge is not None and (d.edge.to, d.edge.kind.value) == ("LOCALIZE", "rollback")
    spent = BudgetState(CANONICAL.budgets, rollback_used=CANONICAL.budgets.rollback)
    d = select_edge(CANONICAL, "VALIDATE", arts, spent, emitted=True)
    assert d.edge is not None and (d.edge.to, d.edge.reason) == ("TERMINAL_REJECT", "contradiction_in_specification")
    # a visit that emitted nothing never opens a forward edge
    arts["ValidationResult"] = art("ValidationResult", {"accepted": 1, "implicates_diagnosis": 0, "reasons": []})
    d = select_edge(CANONICAL, "VALIDATE", arts, fresh, emitted=False)
    assert d.edge is not None and d.edge.kind.value != "forward"
    assert fresh.draw(d.edge).rollback_used == 1


def test_an_edge_into_a_state_with_stale_inputs_is_never_taken():
    # Fail closed at run time: REPAIR needs a VALID Plan; with Plan STALE the edge is blocked.
    def art(name: str, value: dict, fresh: Freshness = Freshness.VALID) -> StoredArtifact:
        return StoredArtifact(name, value, "sha256:" + "1" * 64, fresh, 1, "X#0")

    arts = {"Diagnosis": art("Diagnosis", HAPPY["DEBUG"]), "Plan": art("Plan", HAPPY["PLAN"], Freshness.STALE),
            "Patch": art("Patch", HAPPY["GENERATE"]), "TestResult": art("TestResult", {"passed": 0, "failed": 1, "failures": []})}
    d = select_edge(CANONICAL, "TEST", arts, BudgetState(CANONICAL.budgets), emitted=True)
    repair = next(c for c in d.considered if c.edge.to == "REPAIR")
    assert repair.blocked_by == ("Plan",) and not repair.taken
    assert d.edge is not None and d.edge.to == "TERMINAL_REJECT"


# -- property: random evidence always ends in a terminal within the budget bound ---------------

@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_guard_outcomes_always_end_in_a_terminal_within_the_budget_bound(data):
    engine = Engine(CANONICAL, random_bodies(data), model=ForbiddenModel())
    result = engine.run()
    assert result.status in (TraversalStatus.ACCEPTED, TraversalStatus.REJECTED)
    assert result.terminal in CANONICAL.terminals
    b = CANONICAL.budgets
    # forward and termination edges form no cycle, so between two budget draws a run visits
    # each state at most once
    assert result.counters.steps <= (b.retry + b.rollback + 1) * len(CANONICAL.states)
    assert result.counters.retry_used <= b.retry and result.counters.rollback_used <= b.rollback
    assert not result.ledger.of_kind("stuck") and result.counters.illegal_transitions == 0
    # every invalidation is downstream-only: a retry or rollback never touches untouched upstream
    lat = Lattice(CANONICAL.lattice)
    for e in result.ledger.of_kind("invalidation"):
        assert set(e.data["stale"]) <= lat.downstream(e.data["changed"])
        assert not set(e.data["stale"]) & lat.upstream(e.data["changed"])
    # and no state was ever entered with a missing or STALE required input
    assert all(e.data["blocking"] == [] for e in result.ledger.of_kind("state_entered"))


EXPLORED = configurations(CANONICAL)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_every_configuration_a_run_enters_was_explored_by_the_checker(data):
    # The checker's exploration over-approximates the engine: whatever evidence the bodies
    # produce, each configuration a run enters is one the checker has already proven safe.
    engine = Engine(CANONICAL, random_bodies(data), model=ForbiddenModel())
    entered = []

    def snapshot(event):
        if event.kind == "state_entered":
            stored = tuple((a, engine.artifacts[a].freshness.value) for a in CANONICAL.artifact_fields
                           if a in engine.artifacts)
            entered.append((event.data["state"], stored, engine.budget.retry_used, engine.budget.rollback_used))

    engine.ledger.sinks.append(CallbackSink(snapshot))
    engine.run()
    assert entered
    for cfg in entered:
        assert cfg in EXPLORED, cfg
