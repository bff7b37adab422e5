"""Build a phase graph in Python instead of writing its JSON file.

A graph file restates each state's edges inside its contract (`transition_guards`,
`failure_transitions`); writing that by hand is error-prone, so the builder derives the
contracts from the declared edges. `build()` returns the same validated `Graph` that loading
the equivalent file would, and the shipped graphs are written this way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from frostline.graph.graph import Budgets, Graph
from frostline.graph.records import (
    ArtifactFreshness,
    GatePredicate,
    SafetyInvariant,
    StateContract,
    Transition,
    TransitionKind,
)
from frostline.graph.tunables import Tunable, Value


class GraphBuilder:
    """Build a graph in Python; `build()` returns the same `Graph` a JSON file would.

    Example::

        b = GraphBuilder("tiny", states=["INIT", "WORK", "DONE", "FAIL"], terminals=["DONE", "FAIL"],
                         tools=["x.run"], accepting=["DONE"])
        b.state("WORK", tools=["x.run"], output={"name": "Out", "required": ["ok"]})
        b.edge("INIT", "WORK")
        b.edge("WORK", "DONE", guard=[GatePredicate("Out", "ok", Operator.EQ, 1)])
        b.edge("WORK", "FAIL", "termination", reason="out_of_budget")
        graph = b.build()

    Leaving `accepting` out makes every terminal that no termination edge enters accepting.
    """

    def __init__(self, name: str, *, states: Iterable[str], terminals: Iterable[str],
                 tools: Iterable[str], initial: str = "INIT",
                 accepting: Iterable[str] | None = None) -> None:
        self.name = name
        self.states = tuple(states)
        self.terminals = tuple(terminals)
        self.accepting = None if accepting is None else tuple(accepting)
        self.tools = tuple(tools)
        self.initial = initial
        self._inputs: dict[str, tuple[str, ...]] = {}
        self._tools: dict[str, tuple[str, ...]] = {}
        self._outputs: dict[str, dict[str, Any]] = {}
        self._edges: list[Transition] = []
        self._lattice: tuple[ArtifactFreshness, ...] = ()
        self._budgets = Budgets(0, 0)
        self._invariants: list[SafetyInvariant] = []
        self._settings: dict[str, int | float] = {}
        self._tunables: list[Tunable] = []

    def state(self, name: str, *, inputs: Iterable[str] = (), tools: Iterable[str] = (),
              output: Mapping[str, Any] | None = None) -> GraphBuilder:
        """Declare a state's required inputs, allowlist and output schema."""
        self._inputs[name] = tuple(inputs)
        self._tools[name] = tuple(tools)
        self._outputs[name] = dict(output or {})
        return self

    def edge(self, source: str, target: str, kind: str | TransitionKind = "forward", *,
             guard: Iterable[GatePredicate] = (), reason: str = "") -> GraphBuilder:
        """Append an edge; declaration order is the order guards are consulted in."""
        self._edges.append(Transition(source, target, TransitionKind(kind), tuple(guard), reason))
        return self

    def lattice(self, nodes: Iterable[ArtifactFreshness]) -> GraphBuilder:
        self._lattice = tuple(nodes)
        return self

    def budgets(self, *, retry: int, rollback: int) -> GraphBuilder:
        self._budgets = Budgets(retry, rollback)
        return self

    def invariant(self, state: str, requires: str) -> GraphBuilder:
        """Declare that `state` is never entered unless `requires` is stored and VALID."""
        self._invariants.append(SafetyInvariant(state, requires))
        return self

    def settings(self, **values: int | float) -> GraphBuilder:
        """Declare application parameters the graph carries (the engine never reads them)."""
        self._settings.update(values)
        return self

    def tunable(self, kind: str, target: str, values: Iterable[Value], *,
                predicate: str = "") -> GraphBuilder:
        """Declare a parameter an offline search may change (frostline.graph.tunables)."""
        data = {"kind": kind, "target": target, "values": list(values),
                **({"predicate": predicate} if predicate else {})}
        self._tunables.append(Tunable.from_dict(data, f"tunables[{len(self._tunables)}]"))
        return self

    def build(self) -> Graph:
        contracts = {}
        for s in self.states:
            out = self._edges
            contracts[s] = StateContract(
                required_inputs=self._inputs.get(s, ()),
                permitted_tools=self._tools.get(s, ()),
                output_schema=self._outputs.get(s, {}),
                transition_guards=tuple(t.guard for t in out
                                        if t.from_ == s and t.kind is TransitionKind.FORWARD),
                failure_transitions=tuple(t for t in out
                                          if t.from_ == s and t.kind is not TransitionKind.FORWARD),
            )
        return Graph(self.name, self.states, self.initial, self.terminals, self.tools, contracts,
                     tuple(self._edges), self._lattice, self._budgets, self.accepting,
                     tuple(self._invariants), dict(self._settings), tuple(self._tunables))
