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
- reachability: TERMINAL_ACCEPT and TERMINAL_REJECT are both reachable from the initial state;
- safety: no state is entered while one of its required inputs is missing or STALE (and no
  GENERATE without a VALID Diagnosis, whether or not the contract lists it);
- liveness (strong): every reachable configuration can reach a terminal (no state where a run
  gets stuck with no enabled edge), and every run terminates: the configuration graph is
  acyclic, i.e. each cycle of the state graph passes through an edge that draws a finite budget.

The checker reads only the graph. It never runs a state body, a tool, or a model.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from frostline.graph.graph import Graph
from frostline.graph.records import EXISTS, Transition, TransitionKind

ABSENT, VALID, STALE = 0, 1, 2
_STATUS = {ABSENT: "missing", VALID: "VALID", STALE: "STALE"}
STUCK = -1

#: Safety facts the checker asserts whenever the graph has both names, contract or not.
BUILTIN_INVARIANTS: tuple[tuple[str, str], ...] = (("GENERATE", "Diagnosis"),)

Config = tuple[int, tuple[int, ...], int, int]  # (state, artifact statuses, retry used, rollback used)


@dataclass(frozen=True)
class QueryResult:
    """One query's verdict. `counterexample` is a path of state names, or None when it holds."""

    ok: bool
    counterexample: list[str] | None = None
    detail: str = ""
    findings: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "graph": self.graph,
                "queries": {k: q.to_json() for k, q in self.queries.items()},
                "states_explored": self.states_explored, "elapsed_ms": round(self.elapsed_ms, 3),
                "notes": list(self.notes)}


@dataclass(frozen=True)
class _Edge:
    edge: Transition
    target: int
    guard: tuple[tuple[int, bool], ...]  # (artifact index, decided by the abstract state?)
    budget: int  # 0 none, 1 retry, 2 rollback


@dataclass(frozen=True)
class _State:
    name: str
    output: int  # artifact index or -1
    lattice_output: bool
    required: tuple[int, ...]
    forward: tuple[_Edge, ...]
    failures: tuple[_Edge, ...]
    terminal: bool


class _Model:
    """The graph compiled to integer tables, so exploration is tuple arithmetic."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.artifacts = list(graph.artifact_fields)
        index = {a: i for i, a in enumerate(self.artifacts)}
        lattice = set(graph.lattice_artifacts)
        deps = {n.artifact: n.depends_on for n in graph.lattice}
        children: dict[str, set[str]] = {a: set() for a in deps}
        for a, ds in deps.items():
            for d in ds:
                children[d].add(a)
        self.downstream: list[tuple[int, ...]] = []
        for a in self.artifacts:
            seen: set[str] = set()
            todo = list(children.get(a, ()))
            while todo:
                x = todo.pop()
                if x not in seen:
                    seen.add(x)
                    todo.extend(children.get(x, ()))
            self.downstream.append(tuple(sorted(index[x] for x in seen)))
        sidx = {s: i for i, s in enumerate(graph.states)}
        self.names = list(graph.states)

        def compile_edge(t: Transition) -> _Edge:
            guard = tuple((index[p.artifact], p.property == EXISTS) for p in t.guard)
            budget = {"retry": 1, "rollback": 2}.get(t.consumes or "", 0)
            return _Edge(t, sidx[t.to], guard, budget)

        self.states: list[_State] = []
        for s in graph.states:
            c = graph.contracts[s]
            required = [index[a] for a in c.required_inputs]
            for st, art in BUILTIN_INVARIANTS:
                if s == st and art in index and index[art] not in required:
                    required.append(index[art])
            out = c.output
            self.states.append(_State(
                s, index[out] if out is not None else -1, out in lattice, tuple(required),
                tuple(compile_edge(t) for t in graph.forward(s)),
                tuple(compile_edge(t) for t in graph.failures(s)), s in graph.terminals))
        self.limits = (graph.budgets.retry, graph.budgets.rollback)
        self.initial: Config = (sidx[graph.initial], (ABSENT,) * len(self.artifacts), 0, 0)

    # -- semantics ------------------------------------------------------------------------
    def outcomes(self, st: _State, arts: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], bool]]:
        """The visit's possible (artifacts after the body, emitted?) pairs."""
        if st.output < 0:
            yield arts, True
            return
        yield arts, False  # the body failed and emitted nothing
        o = st.output
        changed = list(arts)
        changed[o] = VALID
        if st.lattice_output:
            for d in self.downstream[o]:
                if changed[d] != ABSENT:
                    changed[d] = STALE
        yield tuple(changed), True
        if st.lattice_output and arts[o] != ABSENT:
            same = list(arts)
            same[o] = VALID  # recomputed to an identical value: nothing downstream changes
            t = tuple(same)
            if t != tuple(changed):
                yield t, True

    @staticmethod
    def can_true(e: _Edge, arts: tuple[int, ...]) -> bool:
        return all(arts[i] == VALID for i, _ in e.guard)

    @staticmethod
    def can_false(e: _Edge, arts: tuple[int, ...]) -> bool:
        return any(arts[i] != VALID or not decided for i, decided in e.guard)

    def successors(self, cfg: Config) -> Iterator[tuple[Config, _Edge | None]]:
        """Every next configuration; a (STUCK, ...) configuration when no edge may be enabled."""
        s, arts, retry, rollback = cfg
        st = self.states[s]
        used = (0, retry, rollback)
        limit = (0, *self.limits)
        seen: set[Config] = set()
        for after, emitted in self.outcomes(st, arts):
            open_ = True  # every earlier edge can be passed over
            for e in (*(st.forward if emitted else ()), *st.failures):
                if e.budget and used[e.budget] >= limit[e.budget]:
                    continue  # exhausted budget: deterministically disabled
                if self.can_true(e, after):
                    r = retry + (e.budget == 1)
                    b = rollback + (e.budget == 2)
                    nxt: Config = (e.target, after, r, b)
                    if nxt not in seen:
                        seen.add(nxt)
                        yield nxt, e
                if not self.can_false(e, after):
                    open_ = False
                    break
            if open_:
                stuck: Config = (STUCK, after, retry, s)
                if stuck not in seen:
                    seen.add(stuck)
                    yield stuck, None


def check(graph: Graph, *, clock: Callable[[], float] = time.perf_counter) -> CheckResult:
    """Model-check `graph`: ``check(load_graph("canonical")).ok is True``."""
    t0 = clock()
    m = _Model(graph)
    parent: dict[Config, Config | None] = {m.initial: None}
    succ: dict[Config, list[Config]] = {}
    queue = deque([m.initial])
    violations: dict[tuple[int, int], tuple[Config, int]] = {}
    reached_terminal: dict[int, Config] = {}

    def entry_violations(cfg: Config) -> None:
        s, arts, _, _ = cfg
        for i in m.states[s].required:
            if arts[i] != VALID and (s, i) not in violations:
                violations[(s, i)] = (cfg, arts[i])

    entry_violations(m.initial)
    while queue:
        cfg = queue.popleft()
        s = cfg[0]
        if s == STUCK or m.states[s].terminal:
            succ[cfg] = []
            if s != STUCK:
                reached_terminal.setdefault(s, cfg)
            continue
        nexts = []
        for nxt, _edge in m.successors(cfg):
            nexts.append(nxt)
            if nxt not in parent:
                parent[nxt] = cfg
                if nxt[0] != STUCK:
                    entry_violations(nxt)
                queue.append(nxt)
        succ[cfg] = nexts

    def name(cfg: Config) -> str:
        if cfg[0] == STUCK:
            return m.names[cfg[3]]  # a stuck config remembers where it got stuck
        return m.names[cfg[0]]

    def path(cfg: Config) -> list[str]:
        out = []
        cur: Config | None = cfg
        while cur is not None:
            if cur[0] != STUCK:
                out.append(name(cur))
            cur = parent[cur]
        return out[::-1]

    # reachability
    missing = [t for t in graph.terminals if graph.states.index(t) not in reached_terminal]
    if missing:
        reachable = sorted({name(c) for c in parent if c[0] != STUCK}, key=graph.states.index)
        reach = QueryResult(False, reachable,
                            f"{', '.join(missing)} unreachable from {graph.initial}; the counterexample "
                            "lists every reachable state")
    else:
        reach = QueryResult(True)

    # safety
    if violations:
        ordered = sorted(violations.items(), key=lambda kv: (len(path(kv[1][0])), kv[0]))
        findings: tuple[dict[str, Any], ...] = tuple({"state": m.names[s], "input": m.artifacts[i], "status": _STATUS[status],
                          "path": path(cfg)} for (s, i), (cfg, status) in ordered)
        first = findings[0]
        safety = QueryResult(False, list(first["path"]),
                             f"{first['state']} entered with {first['input']} {first['status']}", findings)
    else:
        safety = QueryResult(True)

    liveness = _liveness(graph, m, parent, succ, path, name)
    notes = tuple(_notes(graph))
    return CheckResult(graph.name, reach, safety, liveness, len(parent), (clock() - t0) * 1000.0, notes)


def _liveness(graph: Graph, m: _Model, parent: dict[Config, Config | None],
              succ: dict[Config, list[Config]], path: Callable[[Config], list[str]],
              name: Callable[[Config], str]) -> QueryResult:
    pred: dict[Config, list[Config]] = {c: [] for c in succ}
    for c, ns in succ.items():
        for n in ns:
            pred[n].append(c)
    # (1) every reachable configuration can reach a terminal
    good = {c for c in succ if c[0] != STUCK and m.states[c[0]].terminal}
    todo = list(good)
    while todo:
        c = todo.pop()
        for p in pred[c]:
            if p not in good:
                good.add(p)
                todo.append(p)
    findings: list[dict[str, Any]] = []
    paths: list[tuple[list[str], str]] = []
    bad = [c for c in parent if c not in good]  # parent preserves BFS order: shortest first
    if bad:
        c = bad[0]
        where = name(c)
        stuck = c[0] == STUCK
        detail = (f"a run can get stuck in {where}: no edge is enabled there" if stuck
                  else f"no terminal is reachable from this configuration of {where}")
        stuck_states = sorted({name(b) for b in bad if b[0] == STUCK}, key=graph.states.index)
        findings.append({"kind": "stuck" if stuck else "no_terminal", "state": where, "path": path(c),
                         "configurations": len(bad), "stuck_in": stuck_states})
        paths.append((path(c), detail))
    # (2) every run terminates: Kahn's algorithm leaves exactly the configurations on or after a cycle
    indeg = {c: len(pred[c]) for c in succ}
    queue = deque(c for c, d in indeg.items() if d == 0)
    removed = 0
    while queue:
        c = queue.popleft()
        removed += 1
        for n in succ[c]:
            indeg[n] -= 1
            if indeg[n] == 0:
                queue.append(n)
    if removed < len(succ):
        remaining = {c for c, d in indeg.items() if d > 0}
        # walk predecessors inside the remainder until one repeats: that is a cycle
        cur = next(c for c in parent if c in remaining)
        order: list[Config] = []
        pos: dict[Config, int] = {}
        while cur not in pos:
            pos[cur] = len(order)
            order.append(cur)
            cur = next(p for p in pred[cur] if p in remaining)
        cycle = order[pos[cur]:][::-1]  # forward direction
        start = min(cycle, key=lambda c: len(path(c)))
        k = cycle.index(start)
        cycle = cycle[k:] + cycle[:k]
        lasso = path(start) + [name(c) for c in cycle[1:]] + [name(start)]
        edges = [f"{name(a)}->{name(b)}" for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)]
        detail = (f"a run can loop forever through {' -> '.join(name(c) for c in cycle)} -> "
                  f"{name(start)}: no edge on this cycle draws a budget")
        findings.append({"kind": "cycle", "edges": edges, "path": lasso})
        paths.append((lasso, detail))
    if findings:
        return QueryResult(False, paths[0][0], "; ".join(d for _, d in paths), tuple(findings))
    return QueryResult(True)


def _notes(graph: Graph) -> Iterator[str]:
    kinds: dict[tuple[str, str], list[TransitionKind]] = {}
    for t in graph.transitions:
        kinds.setdefault((t.from_, t.to), []).append(t.kind)
    for (a, b), ks in kinds.items():
        if len(ks) > 1:
            yield f"{a}->{b} is declared as {' and '.join(k.value for k in ks)}"
