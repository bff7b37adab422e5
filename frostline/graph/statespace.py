"""The configuration space the model checker explores: a graph compiled to integers, and its
exhaustive breadth-first exploration.

This is kept apart from the queries asked of it (modelcheck.py) because it is the part that
must be fast: a configuration is one int, the artifact statuses (two bits each: 0 missing,
1 VALID, 2 STALE) above the rollback count, the retry count, a "stuck" flag and the state
index. Guards, invalidation and entry checks become mask arithmetic, which keeps a full
exploration of the canonical graph in the tens of milliseconds.

What is modelled exactly and what is a free choice is described in modelcheck.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from frostline.graph.graph import Graph
from frostline.graph.records import EXISTS, Transition

ABSENT, VALID, STALE = 0, 1, 2
STATUS_NAMES = {ABSENT: "missing", VALID: "VALID", STALE: "STALE"}

_S_BITS, _STUCK_BIT, _R_SHIFT, _B_SHIFT, _A_SHIFT = 9, 1 << 9, 10, 18, 26
_S_MASK, _C_MASK = (1 << _S_BITS) - 1, 0xFF

# One edge in the hot loop, as a plain tuple (unpacking is cheaper than attribute access):
# (target, mask, want, mask_exists, want_exists, free, budget). `mask` has two bits set at
# every guarded artifact and `want` is the VALID pattern under it; the `_exists` pair is the
# same for existence-only predicates; `free` says some predicate is a threshold test (its
# outcome is a free choice); `budget` is 0 none, 1 retry, 2 rollback.
_Edge = tuple[int, int, int, int, int, bool, int]


@dataclass(frozen=True)
class _State:
    output: int  # artifact index or -1
    lattice_output: bool
    down_mask: int  # two bits at every lattice descendant of the output
    down_low: int  # the low bit of each of those pairs
    required: tuple[int, ...]  # the entry requirements
    req_mask: int
    req_want: int
    forward: tuple[_Edge, ...]
    failures: tuple[_Edge, ...]
    terminal: bool


def _pair(i: int) -> int:
    return 3 << (2 * i)


def _downstream(deps: dict[str, tuple[str, ...]], a: str) -> set[str]:
    seen: set[str] = set()
    todo = [x for x, ds in deps.items() if a in ds]
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(y for y, ds in deps.items() if x in ds)
    return seen


class Model:
    """The graph compiled to integer tables and bit masks."""

    def __init__(self, graph: Graph) -> None:
        if len(graph.states) > _S_MASK or max(graph.budgets.retry, graph.budgets.rollback) > _C_MASK:
            raise ValueError("the checker handles at most 511 states and budgets up to 255")
        self.artifacts = list(graph.artifact_fields)
        self.names = list(graph.states)
        self._index = {a: i for i, a in enumerate(self.artifacts)}
        self._sidx = {s: i for i, s in enumerate(graph.states)}
        self.states = [self._compile_state(graph, s) for s in graph.states]
        self.retry_limit, self.rollback_limit = graph.budgets.retry, graph.budgets.rollback
        self.initial = self._sidx[graph.initial]

    def _compile_edge(self, t: Transition) -> _Edge:
        mask = want = mask_e = want_e = 0
        free = False
        for p in t.guard:
            i = self._index[p.artifact]
            mask |= _pair(i)
            want |= 1 << (2 * i)
            if p.property == EXISTS:
                mask_e |= _pair(i)
                want_e |= 1 << (2 * i)
            else:
                free = True
        budget = {"retry": 1, "rollback": 2}.get(t.consumes or "", 0)
        return (self._sidx[t.to], mask, want, mask_e, want_e, free, budget)

    def _compile_state(self, graph: Graph, s: str) -> _State:
        index = self._index
        required = tuple(index[a] for a in graph.entry_requirements(s))
        out = graph.contracts[s].output
        in_lattice = out is not None and out in graph.lattice_artifacts
        deps = {n.artifact: n.depends_on for n in graph.lattice}
        down = _downstream(deps, out) if in_lattice and out is not None else set()
        return _State(
            index[out] if out is not None else -1, in_lattice,
            sum(_pair(index[d]) for d in down), sum(1 << (2 * index[d]) for d in down),
            required, sum(_pair(i) for i in set(required)), sum(1 << (2 * i) for i in set(required)),
            tuple(self._compile_edge(t) for t in graph.forward(s)),
            tuple(self._compile_edge(t) for t in graph.failures(s)), graph.is_terminal(s))


@dataclass
class Exploration:
    """Every reachable configuration, in discovery (breadth-first) order, with its BFS parent
    and successors; the entry-requirement violations found; the first configuration reaching
    each terminal."""

    model: Model
    configs: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    succ: list[list[int]] = field(default_factory=list)
    #: (state index, artifact index) -> (config id, status) of the first violation found
    violations: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    reached_terminal: dict[int, int] = field(default_factory=dict)
    ids: dict[int, int] = field(default_factory=dict)

    def discover(self, cfg: int, from_id: int) -> int:
        """The id of configuration `cfg`, recording it (reached from `from_id`) when new."""
        j = self.ids.get(cfg)
        if j is not None:
            return j
        j = self.ids[cfg] = len(self.configs)
        self.configs.append(cfg)
        self.parent.append(from_id)
        if not cfg & _STUCK_BIT:
            st = self.model.states[cfg & _S_MASK]
            arts = cfg >> _A_SHIFT
            if arts & st.req_mask != st.req_want:
                for i in st.required:
                    status = (arts >> (2 * i)) & 3
                    if status != VALID and (cfg & _S_MASK, i) not in self.violations:
                        self.violations[(cfg & _S_MASK, i)] = (j, status)
        return j

    # -- reading configurations back ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self.configs)

    def stuck(self, j: int) -> bool:
        """Whether configuration `j` is a run with no enabled edge (a pseudo-configuration)."""
        return bool(self.configs[j] & _STUCK_BIT)

    def terminal(self, j: int) -> bool:
        return not self.stuck(j) and self.model.states[self.configs[j] & _S_MASK].terminal

    def name(self, j: int) -> str:
        """The state of configuration `j` (a stuck one keeps the state it is stuck in)."""
        return self.model.names[self.configs[j] & _S_MASK]

    def path(self, j: int) -> list[str]:
        """The states of the shortest run to configuration `j`."""
        out = []
        while j >= 0:
            if not self.configs[j] & _STUCK_BIT:
                out.append(self.name(j))
            j = self.parent[j]
        return out[::-1]

    def decoded(self) -> Iterator[tuple[str, tuple[tuple[str, str], ...], int, int]]:
        """Each non-stuck configuration as (state, stored artifacts and their status, retry
        used, rollback used)."""
        m = self.model
        for cfg in self.configs:
            if cfg & _STUCK_BIT:
                continue
            arts = cfg >> _A_SHIFT
            stored = tuple((a, STATUS_NAMES[(arts >> (2 * i)) & 3]) for i, a in enumerate(m.artifacts)
                           if (arts >> (2 * i)) & 3)
            yield (m.names[cfg & _S_MASK], stored, (cfg >> _R_SHIFT) & _C_MASK,
                   (cfg >> _B_SHIFT) & _C_MASK)


def explore(graph: Graph) -> Exploration:
    """Breadth-first exploration of every reachable configuration of `graph`."""
    m = Model(graph)
    ex = Exploration(m)
    ex.discover(m.initial, -1)  # the initial state's own entry requirements are checked too
    k = 0
    while k < len(ex.configs):
        cfg = ex.configs[k]
        s = cfg & _S_MASK
        nexts: list[int] = []
        ex.succ.append(nexts)
        st = m.states[s]
        if cfg & _STUCK_BIT or st.terminal:
            if not cfg & _STUCK_BIT:
                ex.reached_terminal.setdefault(s, k)
        else:
            _expand(ex, k, cfg, st, nexts)
        k += 1
    return ex


def _outcomes(st: _State, arts: int) -> list[tuple[int, bool]]:
    """A visit's outcomes: (artifacts after the body, emitted?). It fails, or emits an output
    that changed (its lattice downstream becomes STALE) or came out identical (nothing does)."""
    if st.output < 0:
        return [(arts, True)]
    shift = 2 * st.output
    cleared = arts & ~(3 << shift)
    changed = cleared | (1 << shift)
    if st.down_mask:
        x = changed & st.down_mask
        nonzero = (x | (x >> 1)) & st.down_low
        changed = (changed & ~st.down_mask) | (nonzero << 1)
    outcomes = [(arts, False), (changed, True)]
    if st.lattice_output and arts & (3 << shift):
        same = cleared | (1 << shift)  # recomputed identical: nothing downstream changes
        if same != changed:
            outcomes.append((same, True))
    return outcomes


def _expand(ex: Exploration, k: int, cfg: int, st: _State, nexts: list[int]) -> None:
    """Discover the successors of configuration `k` (`cfg`, in state `st`) into `nexts`."""
    s = cfg & _S_MASK
    retry = (cfg >> _R_SHIFT) & _C_MASK
    rollback = (cfg >> _B_SHIFT) & _C_MASK
    counters = (retry << _R_SHIFT) | (rollback << _B_SHIFT)
    r_limit, b_limit = ex.model.retry_limit, ex.model.rollback_limit
    all_edges = st.forward + st.failures
    seen: set[int] = set()
    for after, emitted in _outcomes(st, cfg >> _A_SHIFT):
        open_ = True  # every earlier edge can be passed over
        base = after << _A_SHIFT
        for target, mask, want, mask_e, want_e, free, budget in all_edges if emitted else st.failures:
            if budget == 1:
                if retry >= r_limit:
                    continue  # exhausted budget: deterministically disabled
                nxt = base | target | ((retry + 1) << _R_SHIFT) | (rollback << _B_SHIFT)
            elif budget == 2:
                if rollback >= b_limit:
                    continue
                nxt = base | target | (retry << _R_SHIFT) | ((rollback + 1) << _B_SHIFT)
            else:
                nxt = base | target | counters
            if after & mask == want and nxt not in seen:
                seen.add(nxt)
                nexts.append(ex.discover(nxt, k))
            if not free and after & mask_e == want_e:
                open_ = False
                break
        if open_:  # a run can find no enabled edge here
            stuck = base | _STUCK_BIT | s | counters
            if stuck not in seen:
                seen.add(stuck)
                nexts.append(ex.discover(stuck, k))
