"""A graph names its own terminals: which accept and which reject is the graph's, not the code's."""

from __future__ import annotations

import json

import pytest
from graph_helpers import ForbiddenModel, scripted_bodies

from frostline.errors import GraphLoadError
from frostline.graph.builder import GraphBuilder
from frostline.graph.engine import Engine, TraversalStatus
from frostline.graph.graph import Graph, load_graph
from frostline.graph.modelcheck import check
from frostline.graph.promela import spin_available, spin_check, to_promela
from frostline.graph.records import GatePredicate, Operator, exists

RENAMES = {"TERMINAL_ACCEPT": "SHIPPED", "TERMINAL_REJECT": "GAVE_UP"}


def renamed(graph: Graph) -> Graph:
    """`graph` with its terminals renamed everywhere they occur."""
    text = graph.dumps()
    for old, new in RENAMES.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    assert "TERMINAL_" not in text
    return Graph.loads(text)


def give_up_graph(*, declare: bool = True) -> Graph:
    """WORK gives up by a *forward* edge into its reject sink ABANDONED, as well as by a
    termination edge once its output is missing."""
    b = GraphBuilder("give_up", states=["INIT", "WORK", "SHIPPED", "ABANDONED"],
                     terminals=["SHIPPED", "ABANDONED"], tools=[],
                     accepting=["SHIPPED"] if declare else None)
    b.state("WORK", output={"name": "Out", "required": ["ok"]})
    b.edge("INIT", "WORK")
    b.edge("WORK", "SHIPPED", guard=[GatePredicate("Out", "ok", Operator.EQ, 1)])
    b.edge("WORK", "ABANDONED", guard=[exists("Out")])
    b.edge("WORK", "ABANDONED", "termination", reason="out_of_budget")
    return b.budgets(retry=0, rollback=0).build()


def run_give_up(graph: Graph, ok: int):
    return Engine(graph, {"WORK": lambda ctx: {"ok": ok}}, model=ForbiddenModel()).run()


@pytest.mark.parametrize("declare", [True, False])
def test_a_reject_sink_reached_by_a_forward_edge_rejects(declare):
    graph = give_up_graph(declare=declare)
    assert graph.accepting_terminals == ("SHIPPED",) and graph.rejecting_terminals == ("ABANDONED",)
    result = run_give_up(graph, ok=0)
    assert result.path[-2:] == ("WORK", "ABANDONED")
    assert result.ledger.of_kind("edge")[-1].data["kind"] == "forward"
    assert (result.status, result.terminal, result.reason) == (TraversalStatus.REJECTED, "ABANDONED", "")
    assert result.ledger.of_kind("terminal")[0].data["status"] == "rejected"
    result = run_give_up(graph, ok=1)
    assert (result.status, result.terminal) == (TraversalStatus.ACCEPTED, "SHIPPED")


def test_renamed_canonical_runs_to_its_own_terminals(canonical):
    graph = renamed(canonical)
    assert graph.accepting == ("SHIPPED",)
    result = Engine(graph, scripted_bodies(), model=ForbiddenModel()).run()
    assert (result.status, result.terminal) == (TraversalStatus.ACCEPTED, "SHIPPED")
    result = Engine(graph, scripted_bodies({"PLAN": [{"satisfiable": 0}]}), model=ForbiddenModel()).run()
    assert (result.status, result.terminal, result.reason) == (
        TraversalStatus.REJECTED, "GAVE_UP", "contradiction_in_specification")


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_the_checker_gives_a_renamed_graph_the_same_verdict(name):
    graph = load_graph(name)

    def verdict(g: Graph) -> str:
        out = check(g).to_dict()
        del out["elapsed_ms"], out["graph"]
        return json.dumps(out, sort_keys=True)

    expected = verdict(graph)
    for old, new in RENAMES.items():
        expected = expected.replace(f'"{old}', f'"{new}')
    assert verdict(renamed(graph)) == expected


def test_the_checker_names_a_renamed_unreachable_terminal():
    data = give_up_graph().to_dict()
    data["transitions"] = [t for t in data["transitions"] if t["to"] != "SHIPPED"]
    data["contracts"]["WORK"]["transition_guards"].pop(0)
    reach = check(Graph.from_dict(data)).reachability
    assert not reach.ok and reach.detail.startswith("SHIPPED unreachable")


def test_promela_export_of_renamed_terminals(canonical):
    text = to_promela(renamed(canonical))
    assert "reached_SHIPPED: last = S_SHIPPED;" in text and "reached_GAVE_UP: last = S_GAVE_UP;" in text
    assert "TERMINAL_" not in text


@pytest.mark.skipif(not spin_available(), reason="spin and gcc are not installed")
def test_spin_confirms_the_renamed_graph(tmp_path):
    graph = give_up_graph()
    spin = spin_check(graph, workdir=tmp_path)
    mine = check(graph)
    assert mine.ok and spin.ok, spin.outputs


def test_a_file_without_accepting_still_loads(canonical):
    data = canonical.to_dict()
    del data["accepting"]
    legacy = Graph.from_dict(data)
    assert legacy.accepting is None and "accepting" not in legacy.to_dict()
    assert legacy.accepting_terminals == ("TERMINAL_ACCEPT",)
    assert Engine(legacy, scripted_bodies(), model=ForbiddenModel()).run().status is TraversalStatus.ACCEPTED


def load_error(data) -> GraphLoadError:
    with pytest.raises(GraphLoadError) as err:
        Graph.from_dict(data)
    return err.value


def test_accepting_must_name_terminals(canonical):
    data = canonical.to_dict()
    data["accepting"] = ["REVIEW"]
    err = load_error(data)
    assert err.fields["field"] == "accepting" and "'REVIEW' is not a terminal" in err.message
    data["accepting"] = []
    assert "names no terminal" in load_error(data).message
    data["accepting"] = "TERMINAL_ACCEPT"
    assert load_error(data).fields["field"] == "accepting"


def test_a_termination_edge_cannot_end_in_an_accepting_terminal(canonical):
    data = canonical.to_dict()
    data["accepting"] = ["TERMINAL_ACCEPT", "TERMINAL_REJECT"]
    err = load_error(data)
    assert err.fields["field"].startswith("transitions[") and "accepting terminal" in err.message
