"""Deliberately broken graphs, each failing exactly the query its name says (and bounded
variants that pass), for the checker and the SPIN cross-check."""

from __future__ import annotations

import copy

from frostline.graph.builder import GraphBuilder
from frostline.graph.graph import Graph, load_graph
from frostline.graph.records import ArtifactFreshness, Freshness, GatePredicate, Operator, exists

V = Freshness.VALID


def _tiny(name: str) -> GraphBuilder:
    b = GraphBuilder(name, states=["INIT", "WORK", "CHECK", "DONE", "FAIL"], terminals=["DONE", "FAIL"],
                     tools=["work.do"])
    b.state("WORK", tools=["work.do"], output={"name": "Out", "required": ["ok", "again"]})
    b.state("CHECK", inputs=["Out"], output={"name": "Verdict", "required": ["pass"]})
    return b.lattice([ArtifactFreshness("Out", V, ())])


def stuck() -> Graph:
    """WORK has a guarded forward edge and no failure edge: a run can get stuck there."""
    b = _tiny("stuck")
    b.edge("INIT", "WORK")
    b.edge("WORK", "CHECK", guard=[GatePredicate("Out", "ok", Operator.EQ, 1)])
    b.edge("CHECK", "DONE", guard=[GatePredicate("Verdict", "pass", Operator.EQ, 1)])
    b.edge("CHECK", "FAIL", "termination", reason="out_of_budget")
    return b.budgets(retry=1, rollback=0).build()


def unbounded_cycle(kind: str = "forward") -> Graph:
    """CHECK -> WORK loops back; as a forward edge nothing bounds it (liveness fails); as a retry
    edge the budget does (green)."""
    b = _tiny("unbounded_cycle" if kind == "forward" else "bounded_cycle")
    b.edge("INIT", "WORK")
    b.edge("WORK", "CHECK", guard=[exists("Out")])
    b.edge("WORK", "FAIL", "termination", reason="unrecoverable_sandbox_failure")
    b.edge("CHECK", "DONE", guard=[GatePredicate("Verdict", "pass", Operator.EQ, 1)])
    b.edge("CHECK", "WORK", kind, guard=[exists("Verdict")])
    b.edge("CHECK", "FAIL", "termination", reason="out_of_budget")
    return b.budgets(retry=2, rollback=0).build()


def no_accept() -> Graph:
    """DONE needs an artifact nobody produces: TERMINAL acceptance is unreachable."""
    b = _tiny("no_accept")
    b.lattice([ArtifactFreshness("Out", V, ()), ArtifactFreshness("Ghost", V, ())])
    b.edge("INIT", "WORK")
    b.edge("WORK", "CHECK", guard=[exists("Out")])
    b.edge("WORK", "FAIL", "termination", reason="unrecoverable_sandbox_failure")
    b.edge("CHECK", "DONE", guard=[exists("Ghost")])
    b.edge("CHECK", "FAIL", "termination", reason="out_of_budget")
    return b.budgets(retry=0, rollback=0).build()


def stale_entry() -> Graph:
    """USE needs a VALID B, but a rollback that changes A makes B STALE and USE is re-entered
    straight from MAKE_A."""
    b = GraphBuilder("stale_entry", states=["INIT", "MAKE_A", "MAKE_B", "USE", "DONE", "FAIL"],
                     terminals=["DONE", "FAIL"], tools=[])
    b.state("MAKE_A", output={"name": "A", "required": ["x"]})
    b.state("MAKE_B", inputs=["A"], output={"name": "B", "required": ["y"]})
    b.state("USE", inputs=["B"], output={"name": "Done", "required": ["ok"]})
    b.lattice([ArtifactFreshness("A", V, ()), ArtifactFreshness("B", V, ("A",))])
    b.edge("INIT", "MAKE_A")
    b.edge("MAKE_A", "USE", guard=[exists("Done")])
    b.edge("MAKE_A", "MAKE_B", guard=[exists("A")])
    b.edge("MAKE_A", "FAIL", "termination", reason="out_of_budget")
    b.edge("MAKE_B", "USE", guard=[exists("B")])
    b.edge("MAKE_B", "FAIL", "termination", reason="out_of_budget")
    b.edge("USE", "DONE", guard=[GatePredicate("Done", "ok", Operator.EQ, 1)])
    b.edge("USE", "MAKE_A", "rollback", guard=[exists("Done")])
    b.edge("USE", "FAIL", "termination", reason="out_of_budget")
    return b.budgets(retry=0, rollback=1).build()


def canonical_without_debug() -> Graph:
    """The canonical graph with IMPACT -> PLAN restored from the seed: GENERATE without Diagnosis."""
    data = copy.deepcopy(load_graph("canonical").to_dict())
    data["name"] = "canonical_without_debug"
    for t in data["transitions"]:
        if (t["from"], t["to"]) == ("IMPACT", "DEBUG"):
            t["to"] = "PLAN"
    return Graph.from_dict(data)


def shortcut(invariant: str | None = None) -> Graph:
    """When WORK fails, a retry edge goes on to USE anyway. USE's contract needs nothing, so
    the graph is green, unless an invariant says who must hold a VALID Out: "USE" (entered
    without it after a failed WORK) or "FAIL" (a failed WORK ends there without it)."""
    b = GraphBuilder(f"shortcut_{invariant or 'plain'}".lower(),
                     states=["INIT", "WORK", "USE", "DONE", "FAIL"], terminals=["DONE", "FAIL"],
                     tools=[], accepting=["DONE"])
    b.state("WORK", output={"name": "Out", "required": ["ok"]})
    b.state("USE", output={"name": "Verdict", "required": ["pass"]})
    b.edge("INIT", "WORK")
    b.edge("WORK", "USE", guard=[GatePredicate("Out", "ok", Operator.EQ, 1)])
    b.edge("WORK", "USE", "retry")
    b.edge("WORK", "FAIL", "termination", reason="out_of_budget")
    b.edge("USE", "DONE", guard=[GatePredicate("Verdict", "pass", Operator.EQ, 1)])
    b.edge("USE", "FAIL", "termination", reason="out_of_budget")
    if invariant is not None:
        b.invariant(invariant, "Out")
    return b.budgets(retry=1, rollback=0).build()


BROKEN = {
    "stuck": (stuck, {"reachability": True, "safety": True, "liveness": False}),
    "unbounded_cycle": (unbounded_cycle, {"reachability": True, "safety": True, "liveness": False}),
    "bounded_cycle": (lambda: unbounded_cycle("retry"), {"reachability": True, "safety": True, "liveness": True}),
    "no_accept": (no_accept, {"reachability": False, "safety": True, "liveness": True}),
    "stale_entry": (stale_entry, {"reachability": True, "safety": False, "liveness": True}),
    "canonical_without_debug": (canonical_without_debug,
                                {"reachability": True, "safety": False, "liveness": True}),
    "shortcut": (shortcut, {"reachability": True, "safety": True, "liveness": True}),
    "shortcut_invariant": (lambda: shortcut("USE"),
                           {"reachability": True, "safety": False, "liveness": True}),
    "terminal_invariant": (lambda: shortcut("FAIL"),
                           {"reachability": True, "safety": False, "liveness": True}),
}
