"""Safety invariants are data: a graph file's `invariants` are proven by the checker, exported to
Promela, and enforced by the engine like required inputs."""

from __future__ import annotations

import json

import pytest
from broken_graphs import shortcut
from graph_helpers import ForbiddenModel

from frostline.errors import GraphLoadError
from frostline.graph.engine import Engine, TraversalStatus
from frostline.graph.graph import Graph, load_graph
from frostline.graph.modelcheck import check
from frostline.graph.promela import to_promela
from frostline.graph.records import SafetyInvariant


def with_invariants(graph: Graph, invariants: list[dict[str, str]], tmp_path) -> Graph:
    """`graph` written to a file with an `invariants` list, and loaded back from it."""
    data = graph.to_dict()
    data["invariants"] = invariants
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(data))
    return load_graph(path)


def test_an_invariant_in_a_graph_file_is_checked(tmp_path):
    plain = shortcut()
    assert "invariants" not in plain.to_dict()
    assert check(plain).ok  # USE's contract needs nothing, so the shortcut is safe as declared
    graph = with_invariants(plain, [{"state": "USE", "requires": "Out"}], tmp_path)
    assert graph.invariants == (SafetyInvariant("USE", "Out"),)
    result = check(graph)
    assert result.reachability.ok and result.liveness.ok and not result.safety.ok
    assert result.safety.counterexample == ["INIT", "WORK", "USE"]
    assert result.safety.findings == (
        {"state": "USE", "input": "Out", "status": "missing", "path": ["INIT", "WORK", "USE"]},)
    assert result.safety.detail == "USE entered with Out missing"


def test_an_invariant_may_guard_a_terminal(tmp_path):
    graph = with_invariants(shortcut(), [{"state": "FAIL", "requires": "Out"}], tmp_path)
    result = check(graph)
    assert not result.safety.ok and result.safety.findings[0]["state"] == "FAIL"
    assert "assert((a[A_Out] == 1));\n     reached_FAIL: last = S_FAIL;" in to_promela(graph)


def test_the_shipped_graphs_declare_the_specification_invariant(seed, canonical):
    for graph in (seed, canonical):
        assert graph.invariants == (SafetyInvariant("GENERATE", "Diagnosis"),)


def test_the_invariant_holds_when_the_contract_forgets_it(canonical):
    data = canonical.to_dict()
    data["contracts"]["GENERATE"]["required_inputs"] = ["Plan"]
    for t in data["transitions"]:
        if (t["from"], t["to"]) == ("IMPACT", "DEBUG"):
            t["to"] = "PLAN"  # the seed's shortcut: PLAN and GENERATE without a Diagnosis
    data["contracts"]["PLAN"]["required_inputs"] = []
    graph = Graph.from_dict(data)
    assert graph.entry_requirements("GENERATE") == ("Plan", "Diagnosis")
    findings = {(f["state"], f["input"]) for f in check(graph).safety.findings}
    assert ("GENERATE", "Diagnosis") in findings and ("PLAN", "Diagnosis") not in findings
    del data["invariants"]
    findings = {(f["state"], f["input"]) for f in check(Graph.from_dict(data)).safety.findings}
    assert ("GENERATE", "Diagnosis") not in findings
    assert "assert((a[A_Plan] == 1) && (a[A_Diagnosis] == 1));" in to_promela(graph)


def test_the_engine_fails_closed_on_an_invariant():
    def work(ctx):
        return None  # WORK fails: its retry edge would enter USE without an Out

    bodies = {"WORK": work, "USE": lambda ctx: {"pass": 1}}
    plain = Engine(shortcut(), bodies, model=ForbiddenModel()).run()
    assert plain.path == ("INIT", "WORK", "USE", "DONE")
    guarded = Engine(shortcut("USE"), bodies, model=ForbiddenModel(), verify=False).run()
    assert guarded.path == ("INIT", "WORK", "FAIL")
    assert (guarded.status, guarded.reason) == (TraversalStatus.REJECTED, "out_of_budget")
    blocked = [e.data for e in guarded.ledger.of_kind("gate") if e.data["blocked_by"]]
    assert [(b["edge"]["to"], b["blocked_by"]) for b in blocked] == [("USE", ["Out"])]


@pytest.mark.parametrize(("entry", "field", "words"), [
    ({"state": "SHIP", "requires": "Out"}, "invariants[0].state", "'SHIP' is not a declared state"),
    ({"state": "USE", "requires": "Vibes"}, "invariants[0].requires", "unknown artifact 'Vibes'"),
    ({"state": "USE"}, "invariants[0].requires", "missing field"),
    ({"state": "USE", "requires": "Out", "why": "x"}, "invariants[0].why", "unknown field"),
    ({"state": "USE", "requires": 3}, "invariants[0].requires", "must be a string"),
])
def test_a_malformed_invariant_is_named(entry, field, words):
    data = shortcut().to_dict()
    data["invariants"] = [entry]
    with pytest.raises(GraphLoadError) as err:
        Graph.from_dict(data)
    assert err.value.fields["field"] == field and words in err.value.message


def test_invariants_must_be_a_list_without_repeats():
    data = shortcut().to_dict()
    data["invariants"] = {"state": "USE", "requires": "Out"}
    with pytest.raises(GraphLoadError) as err:
        Graph.from_dict(data)
    assert err.value.fields["field"] == "invariants"
    data["invariants"] = [{"state": "USE", "requires": "Out"}] * 2
    with pytest.raises(GraphLoadError) as err:
        Graph.from_dict(data)
    assert err.value.fields["field"] == "invariants[1]" and "declared twice" in err.value.message
