"""The engine end to end: wiring, fail-closed entry, the step valve, counters for an A/B driver."""

from __future__ import annotations

import pytest
from broken_graphs import unbounded_cycle
from graph_helpers import ForbiddenModel, run_canonical, scripted_bodies

from frostline.errors import FrostlineError
from frostline.graph.engine import Engine, TraversalStatus
from frostline.graph.errors import GraphRejected
from frostline.graph.graph import load_graph


def test_a_red_graph_is_refused_before_it_runs(seed):
    with pytest.raises(GraphRejected) as err:
        Engine(seed, scripted_bodies(), model=ForbiddenModel())
    assert err.value.fields["queries"]["safety"]["ok"] is False
    assert "frostline graph check seed" in err.value.message


def test_the_engine_enforces_required_inputs_even_on_an_unchecked_graph(seed):
    # Run the seed anyway (verify=False): IMPACT->PLAN would enter PLAN without a Diagnosis —
    # the checker's counterexample. The engine refuses the edge on the record; IMPACT has no
    # failure transition, so the run is stuck, exactly as the liveness counterexample says.
    result = Engine(seed, scripted_bodies(), model=ForbiddenModel(), verify=False).run()
    assert result.status is TraversalStatus.STUCK
    assert result.path == ("INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT")
    blocked = [e.data for e in result.ledger.of_kind("gate") if e.data["blocked_by"]]
    assert blocked[0]["edge"]["to"] == "PLAN" and blocked[0]["blocked_by"] == ["Diagnosis"]
    assert result.ledger.events[-1].kind == "stuck"


def test_the_step_valve_stops_an_unbounded_graph():
    graph = unbounded_cycle()

    def work(ctx):
        return {"ok": 1, "again": ctx.visit}

    def check_(ctx):
        return {"pass": 0}

    result = Engine(graph, {"WORK": work, "CHECK": check_}, verify=False, max_steps=25).run()
    assert result.status is TraversalStatus.STEP_LIMIT
    assert result.counters.steps == 25
    assert result.ledger.events[-1].kind == "step_limit"


def test_bodies_are_checked_against_the_graph(canonical):
    with pytest.raises(FrostlineError, match="no body for state"):
        Engine(canonical, {})
    with pytest.raises(FrostlineError, match="unknown state"):
        Engine(canonical, {**scripted_bodies(), "DEPLOY": lambda ctx: None})


def test_counters_for_an_ab_driver():
    result = run_canonical({"TEST": [{"failed": 1}], "REVIEW": [{"verified_defects": 1}]})
    c = result.counters
    assert result.status is TraversalStatus.ACCEPTED
    assert (c.retry_used, c.rollback_used) == (1, 1)
    assert c.visits["REPAIR"] == 2 and c.visits["TEST"] == 3
    assert c.invalidated == 2  # the Review, twice: by the repair and by its edit
    assert c.model_calls == 0 and c.illegal_tools == 0 and c.illegal_transitions == 0
    assert result.to_dict()["counters"]["steps"] == c.steps


def test_identical_recomputation_invalidates_nothing():
    # VALIDATE rolls back to LOCALIZE; LOCALIZE and DEBUG recompute identical artifacts, so
    # nothing goes STALE and the recomputation is counted as repeated work.
    result = run_canonical({"VALIDATE": [{"accepted": 0, "implicates_diagnosis": 1}]})
    assert not [e for e in result.ledger.of_kind("invalidation") if e.data["changed"] != "Patch"]
    assert result.counters.identical_recomputations >= 2
    assert result.status is TraversalStatus.ACCEPTED


def test_deterministic_states_never_consult_a_model(forbidden_model):
    # the whole canonical graph with deterministic bodies: zero L entries, every phase exercised
    result = run_canonical({"EXECUTE": [{"exit_code": 1}], "DEBUG": [{}, {"confidence": 0.2, "patch_local": 0}],
                            "VALIDATE": [{"accepted": 0, "implicates_diagnosis": 1}]},
                           model=forbidden_model)
    assert result.counters.model_calls == 0
    kinds = [e.data["kind"] for e in result.ledger.of_kind("edge")]
    assert "retry" in kinds and "rollback" in kinds
    assert result.terminal in load_graph("canonical").terminals


def test_an_engine_runs_once(canonical):
    engine = Engine(canonical, scripted_bodies(), model=ForbiddenModel())
    engine.run()
    with pytest.raises(FrostlineError, match="already run"):
        engine.run()


def test_terminal_status_follows_the_edge_kind():
    from broken_graphs import stuck

    graph = stuck()  # CHECK -> FAIL is a termination edge; CHECK -> DONE a forward one

    def work(ctx):
        return {"ok": 1, "again": 0}

    for verdict, status, reason in ((0, TraversalStatus.REJECTED, "out_of_budget"), (1, TraversalStatus.ACCEPTED, "")):
        result = Engine(graph, {"WORK": work, "CHECK": lambda ctx, v=verdict: {"pass": v}},
                        verify=False).run()
        assert (result.status, result.reason) == (status, reason)


def test_a_failing_body_of_a_state_without_output_still_leaves_by_its_forward_edges(canonical):
    from frostline.errors import ProviderError

    def init(ctx):
        raise ProviderError("warm-up failed")

    result = Engine(canonical, {**scripted_bodies(), "INIT": init}, model=ForbiddenModel()).run()
    assert result.ledger.of_kind("state_failed")[0].data["state"] == "INIT"
    assert result.status is TraversalStatus.ACCEPTED


def test_an_output_that_cannot_be_digested_fails_the_visit():
    result = run_canonical({"PLAN": [{"step_count": 2**80}]})
    [failed] = result.ledger.of_kind("state_failed")
    assert failed.data["state"] == "PLAN" and "cannot be stored" in failed.data["reason"]
    assert (result.terminal, result.reason) == ("TERMINAL_REJECT", "contradiction_in_specification")


def test_bodies_cannot_edit_stored_artifacts():
    def sneaky_test(ctx):
        ctx.artifact("Patch")["files"]["a.py"] = "tampered"  # edits a copy only
        ctx.inputs["Patch"]["diff"] = "tampered"
        return {"passed": 1, "failed": 0, "failures": []}

    result = run_canonical({"TEST": [sneaky_test]})
    patch = result.artifacts["Patch"].value
    assert patch["files"] == {"a.py": "v1"} and patch["diff"] == "d1"
