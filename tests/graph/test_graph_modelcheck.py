"""Phase 7: the model checker — reachability, safety, liveness, with counterexamples."""

from __future__ import annotations

import itertools
import subprocess

import pytest
from broken_graphs import BROKEN
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.graph import engine as engine_module
from frostline.graph import slot as slot_module
from frostline.graph.graph import load_graph
from frostline.graph.modelcheck import check

CANONICAL = load_graph("canonical")


def assert_real_path(graph, path):
    assert path[0] == graph.initial
    for a, b in itertools.pairwise(path):
        assert graph.has_pair(a, b), f"{a}->{b} is not an edge"


def test_canonical_is_green(canonical):
    result = check(canonical)
    assert result.ok
    for q in result.queries.values():
        assert q.ok and q.counterexample is None
    assert result.states_explored > 100
    assert result.notes == ()


def test_seed_generate_is_reachable_without_a_diagnosis(seed):
    result = check(seed)
    assert not result.ok and not result.safety.ok
    findings = {(f["state"], f["input"]): f for f in result.safety.findings}
    generate = findings[("GENERATE", "Diagnosis")]
    assert generate["status"] == "missing"
    # the forward path never passes DEBUG, the only state whose output is a Diagnosis
    assert generate["path"] == ["INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT", "PLAN", "GENERATE"]
    assert "DEBUG" not in generate["path"]
    assert_real_path(seed, generate["path"])
    # the lattice makes Plan depend on Diagnosis: PLAN is entered without one first
    assert result.safety.counterexample == ["INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT", "PLAN"]
    assert findings[("PLAN", "Diagnosis")]["status"] == "missing"
    # ValidationResult depends on Review although VALIDATE precedes REVIEW
    validate = findings[("VALIDATE", "Review")]
    assert "REVIEW" not in validate["path"] and validate["path"][-2:] == ["TEST", "VALIDATE"]


def test_seed_is_not_live(seed):
    result = check(seed)
    assert result.reachability.ok
    assert not result.liveness.ok
    kinds = {f["kind"]: f for f in result.liveness.findings}
    assert "RECONNAISSANCE" in kinds["stuck"]["stuck_in"]  # no failure edge to fall back on
    assert "REPAIR" in kinds["stuck"]["stuck_in"]  # REPAIR's only exit is a retry edge
    cycle = kinds["cycle"]
    assert "CANDIDATES->PLAN" in cycle["edges"]  # a loop made only of forward edges
    assert_real_path(seed, cycle["path"])
    assert cycle["path"][-1] in cycle["path"][:-1]
    assert any(n == "EDIT->EXECUTE is declared as forward and retry" for n in result.notes)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_graphs_fail_exactly_their_query(name):
    build, expected = BROKEN[name]
    graph = build()
    result = check(graph)
    assert {k: q.ok for k, q in result.queries.items()} == expected
    for q in result.queries.values():
        if not q.ok:
            assert q.counterexample and q.detail
            if q is not result.reachability:
                assert_real_path(graph, q.counterexample)


def test_counterexamples_name_what_failed():
    from broken_graphs import no_accept, stale_entry, stuck, unbounded_cycle

    r = check(no_accept())
    assert "DONE unreachable" in r.reachability.detail and "DONE" not in r.reachability.counterexample
    r = check(stale_entry())
    assert r.safety.findings[0]["status"] == "STALE" and r.safety.findings[0]["state"] == "USE"
    assert r.safety.counterexample == ["INIT", "MAKE_A", "MAKE_B", "USE", "MAKE_A", "USE"]
    r = check(stuck())
    assert r.liveness.counterexample == ["INIT", "WORK"] and "stuck in WORK" in r.liveness.detail
    r = check(unbounded_cycle())
    assert r.liveness.findings[0]["kind"] == "cycle"
    assert r.liveness.counterexample[-3:] == ["WORK", "CHECK", "WORK"]


def test_the_checker_runs_nothing_and_consults_no_model(canonical, seed, monkeypatch, forbidden_model):
    def forbidden(*args, **kwargs):
        pytest.fail("the model checker executed something")

    monkeypatch.setattr(subprocess, "run", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(engine_module.Engine, "run", forbidden)
    monkeypatch.setattr(slot_module, "run_slot", forbidden)
    monkeypatch.setattr(type(forbidden_model), "complete", forbidden)
    assert check(canonical).ok
    assert not check(seed).ok


def test_json_shape(canonical):
    out = check(canonical).to_dict()
    assert set(out) >= {"ok", "queries", "states_explored", "elapsed_ms"}
    assert set(out["queries"]) == {"reachability", "safety", "liveness"}
    assert out["queries"]["safety"] == {"ok": True, "counterexample": None}
    assert isinstance(out["elapsed_ms"], float)


def test_elapsed_time_comes_from_the_injected_clock(canonical):
    ticks = iter([10.0, 10.25])
    assert check(canonical, clock=lambda: next(ticks)).elapsed_ms == 250.0


# -- soundness against the engine on mutated graphs ---------------------------------------------

def without_edges(graph, drop: set[int]):
    """`graph` with the transitions at the given indexes removed (contracts kept consistent)."""
    import copy as _copy

    from frostline.graph.graph import Graph

    data = _copy.deepcopy(graph.to_dict())
    data.pop("tunables", None)  # they may name a removed edge; a derived graph is not a space
    removed = [t for i, t in enumerate(data["transitions"]) if i in drop]
    data["transitions"] = [t for i, t in enumerate(data["transitions"]) if i not in drop]
    for t in removed:
        c = data["contracts"][t["from"]]
        if t["kind"] == "forward":
            c["transition_guards"].remove(t["guard"])
        else:
            c["failure_transitions"].remove(t)
    return Graph.from_dict(data)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_green_verdicts_hold_for_the_engine_on_mutated_graphs(data):
    from graph_helpers import ForbiddenModel, random_bodies

    from frostline.graph.engine import Engine, TraversalStatus

    canonical = CANONICAL
    failure_edges = [i for i, t in enumerate(canonical.transitions) if t.kind.value != "forward"]
    drop = set(data.draw(st.lists(st.sampled_from(failure_edges), max_size=3), label="dropped"))
    graph = without_edges(canonical, drop)
    verdict = check(graph)
    for _ in range(3):
        result = Engine(graph, random_bodies(data), model=ForbiddenModel(), verify=False, max_steps=500).run()
        if verdict.liveness.ok:
            assert result.status in (TraversalStatus.ACCEPTED, TraversalStatus.REJECTED)
        if verdict.safety.ok:
            assert all(not e.data["blocked_by"] for e in result.ledger.of_kind("gate"))
        if result.status is TraversalStatus.STUCK:
            assert not verdict.liveness.ok  # the engine got stuck: the checker had said so
