"""Retry, rollback and termination edges: which edge leaves a state, decided deterministically.

After a state's visit, its forward edges are consulted in declared order (only if the visit
emitted its output: the output must exist before any forward guard may open), and the first
whose gate holds is taken. When none does, the failure transitions are consulted in declared
order: a retry edge draws one unit of the retry budget, a rollback edge one unit of the rollback
budget, and an exhausted budget disables those edges, so the declared termination edge is taken.
An edge whose target's entry requirements (its required inputs and the graph's invariants on
it) are not all stored and VALID is never taken (fail closed); the model checker proves a
shipped graph never reaches that situation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from frostline.graph.gates import Artifacts, GateEvaluation, evaluate_gate
from frostline.graph.graph import Budgets, Graph
from frostline.graph.records import Transition


@dataclass(frozen=True)
class BudgetState:
    """Units drawn so far from the graph's retry and rollback budgets."""

    limits: Budgets
    retry_used: int = 0
    rollback_used: int = 0

    def remaining(self, budget: str) -> int:
        if budget == "retry":
            return self.limits.retry - self.retry_used
        return self.limits.rollback - self.rollback_used

    def allows(self, edge: Transition) -> bool:
        return edge.consumes is None or self.remaining(edge.consumes) > 0

    def draw(self, edge: Transition) -> BudgetState:
        if edge.consumes == "retry":
            return replace(self, retry_used=self.retry_used + 1)
        if edge.consumes == "rollback":
            return replace(self, rollback_used=self.rollback_used + 1)
        return self

    def to_dict(self) -> dict[str, int]:
        return {"retry_used": self.retry_used, "retry_left": self.remaining("retry"),
                "rollback_used": self.rollback_used, "rollback_left": self.remaining("rollback")}


def blocking_inputs(graph: Graph, state: str, artifacts: Artifacts) -> tuple[str, ...]:
    """The entry requirements of `state` that are missing or STALE (empty = enterable)."""
    out = []
    for a in graph.entry_requirements(state):
        stored = artifacts.get(a)
        if stored is None or not stored.valid:
            out.append(a)
    return tuple(out)


@dataclass(frozen=True)
class Consideration:
    """One edge as it was considered: its gate, whether the budget allowed it, what blocked it."""

    edge: Transition
    gate: GateEvaluation | None  # None when the edge was not evaluated (output missing / budget)
    budget_ok: bool
    blocked_by: tuple[str, ...]

    @property
    def taken(self) -> bool:
        return self.gate is not None and self.gate.holds and self.budget_ok and not self.blocked_by

    def to_dict(self) -> dict[str, Any]:
        return {"edge": self.edge.to_dict() | {"guard": [str(p) for p in self.edge.guard]},
                "gate": None if self.gate is None else self.gate.to_dict(),
                "budget_ok": self.budget_ok, "blocked_by": list(self.blocked_by),
                "taken": self.taken}


@dataclass(frozen=True)
class EdgeDecision:
    """The chosen edge (None: no edge is enabled, the run is stuck) and every edge considered."""

    edge: Transition | None
    considered: tuple[Consideration, ...]


def select_edge(graph: Graph, state: str, artifacts: Artifacts, budget: BudgetState, *,
                emitted: bool) -> EdgeDecision:
    """Pick the edge that leaves `state` — a pure function of the artifacts and the budget."""
    considered: list[Consideration] = []
    candidates = [*(graph.forward(state) if emitted else ()), *graph.failures(state)]
    for edge in candidates:
        if not budget.allows(edge):
            considered.append(Consideration(edge, None, False, ()))
            continue
        gate = evaluate_gate(edge.guard, artifacts)
        blocked = blocking_inputs(graph, edge.to, artifacts) if gate.holds else ()
        c = Consideration(edge, gate, True, blocked)
        considered.append(c)
        if c.taken:
            return EdgeDecision(edge, tuple(considered))
    return EdgeDecision(None, tuple(considered))
