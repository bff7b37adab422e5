"""The model checker: reachability, safety and liveness, proven before a graph runs.

It explores the product of graph state × artifact existence and freshness × retry/rollback
counters, exhaustively. Everything the engine decides deterministically is modelled exactly
(budgets, declared edge order, existence tests, downstream invalidation); everything that
depends on content is a free choice, which over-approximates every run the engine can make:

- a visit either fails (emits nothing) or emits its output, which either changed (its lattice
  downstream becomes STALE) or came out identical to the stored version (nothing invalidated);
- a threshold test over a stored VALID artifact may come out either way; an existence test, and
  any test over a missing or STALE artifact, is decided by the abstract state.

Queries (each returns a counterexample path of state names when it fails):
- reachability: every terminal the graph declares is reachable from the initial state;
- safety: no state is entered while one of its entry requirements is missing or STALE: its
  contract's required inputs, and every artifact the graph's `invariants` demand for it
  (e.g. no GENERATE without a VALID Diagnosis, whether or not the contract lists it);
- liveness (strong): every reachable configuration can reach a terminal (no state where a run
  gets stuck with no enabled edge), and every run terminates: the configuration graph is
  acyclic, i.e. each cycle of the state graph passes through an edge that draws a finite budget.

The checker reads only the graph. It never runs a state body, a tool, or a model. The
configuration space itself (its encoding and exploration) lives in statespace.py.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from frostline.graph.graph import Graph
from frostline.graph.records import TransitionKind
from frostline.graph.statespace import STATUS_NAMES, Exploration, explore


@dataclass(frozen=True)
class QueryResult:
    """One query's verdict. `counterexample` is a path of state names, or None when it holds."""

    ok: bool
    counterexample: list[str] | None = None
    detail: str = ""
    findings: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "counterexample": self.counterexample}
        if self.detail:
            out["detail"] = self.detail
        if self.findings:
            out["findings"] = list(self.findings)
        return out


@dataclass(frozen=True)
class CheckResult:
    graph: str
    reachability: QueryResult
    safety: QueryResult
    liveness: QueryResult
    states_explored: int
    elapsed_ms: float
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.reachability.ok and self.safety.ok and self.liveness.ok

    @property
    def queries(self) -> dict[str, QueryResult]:
        return {"reachability": self.reachability, "safety": self.safety, "liveness": self.liveness}

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "graph": self.graph,
                "queries": {k: q.to_dict() for k, q in self.queries.items()},
                "states_explored": self.states_explored, "elapsed_ms": round(self.elapsed_ms, 3),
                "notes": list(self.notes)}


def configurations(graph: Graph) -> set[tuple[str, tuple[tuple[str, str], ...], int, int]]:
    """Every configuration the checker explores, decoded: (state, ((artifact, status), ...),
    retry used, rollback used), listing stored artifacts only. Stuck pseudo-configurations are
    left out. The engine's runs must stay inside this set."""
    return set(explore(graph).decoded())


def check(graph: Graph, *, clock: Callable[[], float] = time.perf_counter) -> CheckResult:
    """Model-check `graph`: ``check(load_graph("canonical")).ok is True``."""
    t0 = clock()
    ex = explore(graph)
    return CheckResult(graph.name, _reachability(graph, ex), _safety(ex), _liveness(graph, ex),
                       len(ex), (clock() - t0) * 1000.0, tuple(_notes(graph)))


def _reachability(graph: Graph, ex: Exploration) -> QueryResult:
    missing = [t for t in graph.terminals if graph.states.index(t) not in ex.reached_terminal]
    if not missing:
        return QueryResult(True)
    reachable = sorted({ex.name(j) for j in range(len(ex)) if not ex.stuck(j)},
                       key=graph.states.index)
    return QueryResult(False, reachable,
                       f"{', '.join(missing)} unreachable from {graph.initial}; the counterexample "
                       "lists every reachable state")


def _safety(ex: Exploration) -> QueryResult:
    if not ex.violations:
        return QueryResult(True)
    m = ex.model
    ordered = sorted(ex.violations.items(), key=lambda kv: (len(ex.path(kv[1][0])), kv[0]))
    findings: tuple[dict[str, Any], ...] = tuple(
        {"state": m.names[s], "input": m.artifacts[i], "status": STATUS_NAMES[status],
         "path": ex.path(j)}
        for (s, i), (j, status) in ordered)
    first = findings[0]
    return QueryResult(False, list(first["path"]),
                       f"{first['state']} entered with {first['input']} {first['status']}", findings)


def _predecessors(succ: list[list[int]]) -> list[list[int]]:
    pred: list[list[int]] = [[] for _ in succ]
    for c, ns in enumerate(succ):
        for x in ns:
            pred[x].append(c)
    return pred


def _liveness(graph: Graph, ex: Exploration) -> QueryResult:
    """(1) every reachable configuration can reach a terminal; (2) every run terminates."""
    pred = _predecessors(ex.succ)
    found = [f for f in (_no_terminal(graph, ex, pred), _cycle(ex, pred)) if f is not None]
    if found:
        findings = tuple(f for f, _ in found)
        return QueryResult(False, list(findings[0]["path"]), "; ".join(d for _, d in found), findings)
    return QueryResult(True)


def _no_terminal(graph: Graph, ex: Exploration,
                 pred: list[list[int]]) -> tuple[dict[str, Any], str] | None:
    """A configuration from which no terminal is reachable (the first discovered), if any."""
    good = [ex.terminal(c) for c in range(len(ex))]
    todo = [c for c in range(len(ex)) if good[c]]
    while todo:
        c = todo.pop()
        for p in pred[c]:
            if not good[p]:
                good[p] = True
                todo.append(p)
    bad = [c for c in range(len(ex)) if not good[c]]  # discovery order: shortest counterexample first
    if not bad:
        return None
    c = bad[0]
    where = ex.name(c)
    detail = (f"a run can get stuck in {where}: no edge is enabled there" if ex.stuck(c)
              else f"no terminal is reachable from this configuration of {where}")
    stuck_states = sorted({ex.name(b) for b in bad if ex.stuck(b)}, key=graph.states.index)
    return ({"kind": "stuck" if ex.stuck(c) else "no_terminal", "state": where, "path": ex.path(c),
             "configurations": len(bad), "stuck_in": stuck_states}, detail)


def _cycle(ex: Exploration, pred: list[list[int]]) -> tuple[dict[str, Any], str] | None:
    """A cycle of configurations (a run that never terminates), as a lasso path, if any."""
    n = len(ex)
    # Kahn's algorithm leaves exactly the configurations on or after a cycle
    indeg = [len(p) for p in pred]
    queue = deque(c for c in range(n) if indeg[c] == 0)
    removed = 0
    while queue:
        c = queue.popleft()
        removed += 1
        for x in ex.succ[c]:
            indeg[x] -= 1
            if indeg[x] == 0:
                queue.append(x)
    if removed == n:
        return None
    # walk predecessors inside the remainder until one repeats: that is a cycle
    cur = next(c for c in range(n) if indeg[c] > 0)
    order: list[int] = []
    pos: dict[int, int] = {}
    while cur not in pos:
        pos[cur] = len(order)
        order.append(cur)
        cur = next(p for p in pred[cur] if indeg[p] > 0)
    cycle = order[pos[cur]:][::-1]  # forward direction
    start = min(cycle)  # the earliest discovered: the shortest prefix
    i = cycle.index(start)
    cycle = cycle[i:] + cycle[:i]
    name = ex.name
    lasso = ex.path(start) + [name(c) for c in cycle[1:]] + [name(start)]
    edges = [f"{name(a)}->{name(b)}" for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)]
    detail = (f"a run can loop forever through {' -> '.join(name(c) for c in cycle)} -> "
              f"{name(start)}: no edge on this cycle draws a budget")
    return {"kind": "cycle", "edges": edges, "path": lasso}, detail


def _notes(graph: Graph) -> Iterator[str]:
    kinds: dict[tuple[str, str], list[TransitionKind]] = {}
    for t in graph.transitions:
        kinds.setdefault((t.from_, t.to), []).append(t.kind)
    for (a, b), ks in kinds.items():
        if len(ks) > 1:
            yield f"{a}->{b} is declared as {' and '.join(k.value for k in ks)}"
