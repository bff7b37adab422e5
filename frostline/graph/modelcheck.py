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

#: Safety facts the checker asserts whenever the graph has both names, contract or not.
BUILTIN_INVARIANTS: tuple[tuple[str, str], ...] = (("GENERATE", "Diagnosis"),)


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


# -- the compiled model --------------------------------------------------------------------------
#
# A configuration is one int: the artifact statuses (two bits each: 0 missing, 1 VALID,
# 2 STALE) above the rollback count, the retry count, a "stuck" flag and the state index.
# Guards, invalidation and entry checks become mask arithmetic, which keeps a full
# exploration of the canonical graph in the tens of milliseconds.

_S_BITS, _STUCK_BIT, _R_SHIFT, _B_SHIFT, _A_SHIFT = 9, 1 << 9, 10, 18, 26
_S_MASK, _C_MASK = (1 << _S_BITS) - 1, 0xFF


@dataclass(frozen=True)
class _Edge:
    target: int
    mask: int  # two bits set at every guarded artifact
    want: int  # the VALID pattern under `mask`
    mask_exists: int  # the same, for existence-only predicates
    want_exists: int
    free: bool  # some predicate is a threshold test (its outcome is a free choice)
    budget: int  # 0 none, 1 retry, 2 rollback


@dataclass(frozen=True)
class _State:
    output: int  # artifact index or -1
    lattice_output: bool
    down_mask: int  # two bits at every lattice descendant of the output
    down_low: int  # the low bit of each of those pairs
    required: tuple[int, ...]
    req_mask: int
    req_want: int
    forward: tuple[_Edge, ...]
    failures: tuple[_Edge, ...]
    terminal: bool

    @property
    def edges(self) -> tuple[_Edge, ...]:
        return self.forward + self.failures


class _Model:
    """The graph compiled to integer tables and bit masks."""

    def __init__(self, graph: Graph) -> None:
        if len(graph.states) > _S_MASK or max(graph.budgets.retry, graph.budgets.rollback) > _C_MASK:
            raise ValueError("the checker handles at most 511 states and budgets up to 255")
        self.artifacts = list(graph.artifact_fields)
        index = {a: i for i, a in enumerate(self.artifacts)}
        lattice = set(graph.lattice_artifacts)
        deps = {n.artifact: n.depends_on for n in graph.lattice}
        sidx = {s: i for i, s in enumerate(graph.states)}
        self.names = list(graph.states)

        def pair(i: int) -> int:
            return 3 << (2 * i)

        def downstream(a: str) -> set[str]:
            seen: set[str] = set()
            todo = [x for x, ds in deps.items() if a in ds]
            while todo:
                x = todo.pop()
                if x not in seen:
                    seen.add(x)
                    todo.extend(y for y, ds in deps.items() if x in ds)
            return seen

        def compile_edge(t: Transition) -> _Edge:
            mask = want = mask_e = want_e = 0
            free = False
            for p in t.guard:
                i = index[p.artifact]
                mask |= pair(i)
                want |= 1 << (2 * i)
                if p.property == EXISTS:
                    mask_e |= pair(i)
                    want_e |= 1 << (2 * i)
                else:
                    free = True
            budget = {"retry": 1, "rollback": 2}.get(t.consumes or "", 0)
            return _Edge(sidx[t.to], mask, want, mask_e, want_e, free, budget)

        self.states: list[_State] = []
        for s in graph.states:
            c = graph.contracts[s]
            required = [index[a] for a in c.required_inputs]
            for st, art in BUILTIN_INVARIANTS:
                if s == st and art in index and index[art] not in required:
                    required.append(index[art])
            out = c.output
            o = index[out] if out is not None else -1
            down = downstream(out) if out in lattice and out is not None else set()
            self.states.append(_State(
                o, out in lattice,
                sum(pair(index[d]) for d in down), sum(1 << (2 * index[d]) for d in down),
                tuple(required), sum(pair(i) for i in set(required)),
                sum(1 << (2 * i) for i in set(required)),
                tuple(compile_edge(t) for t in graph.forward(s)),
                tuple(compile_edge(t) for t in graph.failures(s)), s in graph.terminals))
        self.limits = (0, graph.budgets.retry, graph.budgets.rollback)
        self.initial = sidx[graph.initial]

    def status(self, arts: int, i: int) -> int:
        return (arts >> (2 * i)) & 3


@dataclass
class _Exploration:
    model: _Model
    configs: list[int]
    parent: list[int]
    succ: list[list[int]]
    violations: dict[tuple[int, int], tuple[int, int]]
    reached_terminal: dict[int, int]


def _explore(graph: Graph) -> _Exploration:
    """Breadth-first exploration of every reachable configuration."""
    m = _Model(graph)
    states = m.states
    limit = m.limits
    ids: dict[int, int] = {}  # configuration -> discovery index (BFS order)
    configs: list[int] = []
    parent: list[int] = []
    succ: list[list[int]] = []
    violations: dict[tuple[int, int], tuple[int, int]] = {}  # (state, artifact) -> (config id, status)
    reached_terminal: dict[int, int] = {}

    def discover(cfg: int, from_id: int) -> int:
        j = ids.get(cfg)
        if j is None:
            j = ids[cfg] = len(configs)
            configs.append(cfg)
            parent.append(from_id)
            if not cfg & _STUCK_BIT:
                st = states[cfg & _S_MASK]
                arts = cfg >> _A_SHIFT
                if arts & st.req_mask != st.req_want:
                    for i in st.required:
                        status = (arts >> (2 * i)) & 3
                        if status != VALID and (cfg & _S_MASK, i) not in violations:
                            violations[(cfg & _S_MASK, i)] = (j, status)
        return j

    discover(m.initial, -1)  # the initial state's own inputs are checked too
    # Plain tuples in the hot loop: unpacking is cheaper than attribute access.
    tables = [(st.output, st.lattice_output, st.down_mask, st.down_low, st.terminal,
               tuple((e.target, e.mask, e.want, e.mask_exists, e.want_exists, e.free, e.budget)
                     for e in st.edges),
               tuple((e.target, e.mask, e.want, e.mask_exists, e.want_exists, e.free, e.budget)
                     for e in st.failures)) for st in states]
    r_limit, b_limit = limit[1], limit[2]
    k = 0
    while k < len(configs):
        cfg = configs[k]
        s = cfg & _S_MASK
        nexts: list[int] = []
        succ.append(nexts)
        output, lattice_output, down_mask, down_low, terminal, all_edges, fail_edges = tables[s]
        if cfg & _STUCK_BIT or terminal:
            if not cfg & _STUCK_BIT:
                reached_terminal.setdefault(s, k)
            k += 1
            continue
        retry = (cfg >> _R_SHIFT) & _C_MASK
        rollback = (cfg >> _B_SHIFT) & _C_MASK
        arts = cfg >> _A_SHIFT
        # the visit's outcomes: (artifacts after the body, emitted?)
        if output < 0:
            outcomes = [(arts, True)]
        else:
            shift = 2 * output
            cleared = arts & ~(3 << shift)
            changed = cleared | (1 << shift)
            if down_mask:
                x = changed & down_mask
                nonzero = (x | (x >> 1)) & down_low
                changed = (changed & ~down_mask) | (nonzero << 1)
            outcomes = [(arts, False), (changed, True)]
            if lattice_output and arts & (3 << shift):
                same = cleared | (1 << shift)  # recomputed identical: nothing downstream changes
                if same != changed:
                    outcomes.append((same, True))
        seen: set[int] = set()
        for after, emitted in outcomes:
            open_ = True  # every earlier edge can be passed over
            base = after << _A_SHIFT
            for target, mask, want, mask_e, want_e, free, budget in all_edges if emitted else fail_edges:
                if budget == 1:
                    if retry >= r_limit:
                        continue  # exhausted budget: deterministically disabled
                    nxt = base | target | ((retry + 1) << _R_SHIFT) | (rollback << _B_SHIFT)
                elif budget == 2:
                    if rollback >= b_limit:
                        continue
                    nxt = base | target | (retry << _R_SHIFT) | ((rollback + 1) << _B_SHIFT)
                else:
                    nxt = base | target | (retry << _R_SHIFT) | (rollback << _B_SHIFT)
                if after & mask == want and nxt not in seen:
                    seen.add(nxt)
                    j = ids.get(nxt)
                    nexts.append(discover(nxt, k) if j is None else j)
                if not free and after & mask_e == want_e:
                    open_ = False
                    break
            if open_:  # a run can find no enabled edge here
                stuck = base | _STUCK_BIT | s | (retry << _R_SHIFT) | (rollback << _B_SHIFT)
                if stuck not in seen:
                    seen.add(stuck)
                    nexts.append(discover(stuck, k))
        k += 1
    return _Exploration(m, configs, parent, succ, violations, reached_terminal)


def configurations(graph: Graph) -> set[tuple[str, tuple[tuple[str, str], ...], int, int]]:
    """Every configuration the checker explores, decoded: (state, ((artifact, status), ...),
    retry used, rollback used), listing stored artifacts only. Stuck pseudo-configurations are
    left out. The engine's runs must stay inside this set."""
    ex = _explore(graph)
    m = ex.model
    out = set()
    for cfg in ex.configs:
        if cfg & _STUCK_BIT:
            continue
        arts = cfg >> _A_SHIFT
        stored = tuple((a, _STATUS[(arts >> (2 * i)) & 3]) for i, a in enumerate(m.artifacts)
                       if (arts >> (2 * i)) & 3)
        out.add((m.names[cfg & _S_MASK], stored, (cfg >> _R_SHIFT) & _C_MASK, (cfg >> _B_SHIFT) & _C_MASK))
    return out


def check(graph: Graph, *, clock: Callable[[], float] = time.perf_counter) -> CheckResult:
    """Model-check `graph`: ``check(load_graph("canonical")).ok is True``."""
    t0 = clock()
    ex = _explore(graph)
    m, configs, parent, succ = ex.model, ex.configs, ex.parent, ex.succ
    violations, reached_terminal, states = ex.violations, ex.reached_terminal, ex.model.states

    def name(j: int) -> str:
        return m.names[configs[j] & _S_MASK]  # a stuck config keeps the state it is stuck in

    def path(j: int) -> list[str]:
        out = []
        while j >= 0:
            if not configs[j] & _STUCK_BIT:
                out.append(name(j))
            j = parent[j]
        return out[::-1]

    # reachability
    missing = [t for t in graph.terminals if graph.states.index(t) not in reached_terminal]
    if missing:
        reachable = sorted({name(j) for j in range(len(configs)) if not configs[j] & _STUCK_BIT},
                           key=graph.states.index)
        reach = QueryResult(False, reachable,
                            f"{', '.join(missing)} unreachable from {graph.initial}; the counterexample "
                            "lists every reachable state")
    else:
        reach = QueryResult(True)

    # safety
    if violations:
        ordered = sorted(violations.items(), key=lambda kv: (len(path(kv[1][0])), kv[0]))
        findings: tuple[dict[str, Any], ...] = tuple(
            {"state": m.names[s], "input": m.artifacts[i], "status": _STATUS[status], "path": path(j)}
            for (s, i), (j, status) in ordered)
        first = findings[0]
        safety = QueryResult(False, list(first["path"]),
                             f"{first['state']} entered with {first['input']} {first['status']}", findings)
    else:
        safety = QueryResult(True)

    terminal = [not c & _STUCK_BIT and states[c & _S_MASK].terminal for c in configs]
    stuck_flags = [bool(c & _STUCK_BIT) for c in configs]
    liveness = _liveness(graph, succ, terminal, stuck_flags, path, name)
    return CheckResult(graph.name, reach, safety, liveness, len(configs), (clock() - t0) * 1000.0,
                       tuple(_notes(graph)))


def _liveness(graph: Graph, succ: list[list[int]], terminal: list[bool], stuck: list[bool],
              path: Callable[[int], list[str]], name: Callable[[int], str]) -> QueryResult:
    n = len(succ)
    pred: list[list[int]] = [[] for _ in range(n)]
    for c, ns in enumerate(succ):
        for x in ns:
            pred[x].append(c)
    # (1) every reachable configuration can reach a terminal
    good = terminal[:]
    todo = [c for c in range(n) if good[c]]
    while todo:
        c = todo.pop()
        for p in pred[c]:
            if not good[p]:
                good[p] = True
                todo.append(p)
    findings: list[dict[str, Any]] = []
    paths: list[tuple[list[str], str]] = []
    bad = [c for c in range(n) if not good[c]]  # discovery order: shortest counterexample first
    if bad:
        c = bad[0]
        where = name(c)
        detail = (f"a run can get stuck in {where}: no edge is enabled there" if stuck[c]
                  else f"no terminal is reachable from this configuration of {where}")
        stuck_states = sorted({name(b) for b in bad if stuck[b]}, key=graph.states.index)
        findings.append({"kind": "stuck" if stuck[c] else "no_terminal", "state": where, "path": path(c),
                         "configurations": len(bad), "stuck_in": stuck_states})
        paths.append((path(c), detail))
    # (2) every run terminates: Kahn's algorithm leaves exactly the configurations on or after a cycle
    indeg = [len(p) for p in pred]
    queue = deque(c for c in range(n) if indeg[c] == 0)
    removed = 0
    while queue:
        c = queue.popleft()
        removed += 1
        for x in succ[c]:
            indeg[x] -= 1
            if indeg[x] == 0:
                queue.append(x)
    if removed < n:
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
