"""The graph each arm runs: the canonical graph, or a variant with one mechanism taken out.

An `Arm`'s flags say which mechanisms it keeps (frostline.coding.interface). Each variant
is derived from the shipped canonical graph and, like it, must pass the model checker before it
runs (the engine refuses a red graph):

    gates off          every guard is emptied: a transition fires as soon as its target's
                       entry requirements hold (for a forward edge: once the state emitted)
    allowlists off     every state may call every tool of the vocabulary
    lattice off        no freshness lattice: nothing is ever STALE, every revisit recomputes
    failure edges off  the retry and rollback edges are removed; a failure terminates
    adaptive plan      (arm 3 and after, with failure edges) one more rollback edge,
                       TEST -> PLAN, taken before TEST -> REPAIR when the test run shows the
                       edit diverging from the plan's assumption (TestResult.plan_diverged,
                       frostline.coding.plandag); it draws the rollback budget, so a re-plan
                       never spends a retry and every cycle through it stays bounded
    arm 1              the fixed pipeline: the canonical happy path in order, each step
                       guarded only by its output's existence, the pipeline's one check at
                       VALIDATE -> MEMORIZE, and any failure sends the run back to
                       RECONNAISSANCE to rerun everything (one retry unit per rerun, with the
                       canonical retry and rollback budgets added together)

With `guards` (the default) every variant also carries the overfit guards' gate predicates
(`frostline.coding.guards`); `guards=False` is the graph as it was before them, kept so that
the A/B can measure what they change.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from functools import lru_cache

from frostline.coding.guards import GUARDED_FIELDS, guard_edges
from frostline.coding.interface import Arm
from frostline.graph.builder import GraphBuilder
from frostline.graph.graph import Graph, load_graph
from frostline.graph.records import GatePredicate, Operator, Transition, TransitionKind, exists

#: The canonical happy path, which the fixed pipeline runs in order.
PIPELINE = ("INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT", "DEBUG", "PLAN", "GENERATE", "EDIT",
            "EXECUTE", "TEST", "REGRESSION", "REVIEW", "VALIDATE", "MEMORIZE", "TERMINAL_ACCEPT")
REJECT = "TERMINAL_REJECT"


def canonical() -> Graph:
    return load_graph("canonical")


#: The re-plan edge of the adaptive plan and the TestResult field its guard reads.
REPLAN = Transition("TEST", "PLAN", TransitionKind.ROLLBACK,
                    (exists("TestResult"),
                     GatePredicate("TestResult", "plan_diverged", Operator.EQ, 1.0)), "")


def rebuild(base: Graph, name: str, transitions: Iterable[Transition], *,
            lattice: bool = True, allow_all: bool = False, retry: int | None = None,
            rollback: int | None = None, fields: Mapping[str, tuple[str, ...]] | None = None
            ) -> Graph:
    """`base` with another transition list (contracts restated to agree with it); `fields`
    adds required fields to the output schemas of the artifacts it names."""
    b = GraphBuilder(name, states=base.states, terminals=base.terminals, tools=base.tools,
                     initial=base.initial, accepting=base.accepting)
    for s in base.states:
        c = base.contracts[s]
        tools = base.tools if allow_all and s not in base.terminals else c.permitted_tools
        output = dict(c.output_schema)
        extra = (fields or {}).get(str(output.get("name", "")), ())
        if extra:
            output["required"] = [*output.get("required", ()),
                                  *(f for f in extra if f not in output.get("required", ()))]
        b.state(s, inputs=c.required_inputs, tools=tools, output=output)
    for t in transitions:
        b.edge(t.from_, t.to, t.kind, guard=t.guard, reason=t.reason)
    if lattice:
        b.lattice(base.lattice)
    b.budgets(retry=base.budgets.retry if retry is None else retry,
              rollback=base.budgets.rollback if rollback is None else rollback)
    for inv in base.invariants:
        b.invariant(inv.state, inv.requires)
    return b.build()


def with_replan(edges: list[Transition]) -> list[Transition]:
    """`edges` with the re-plan edge consulted first among TEST's failure edges."""
    at = next(i for i, t in enumerate(edges)
              if t.from_ == "TEST" and t.kind is not TransitionKind.FORWARD)
    return [*edges[:at], REPLAN, *edges[at:]]


def _pipeline(base: Graph) -> list[Transition]:
    edges: list[Transition] = []
    for src, dst in itertools.pairwise(PIPELINE):
        out = base.contracts[src].output
        guard: tuple[GatePredicate, ...] = (exists(out),) if out else ()
        if src == "VALIDATE":
            guard = (GatePredicate("ValidationResult", "accepted", Operator.EQ, 1.0),)
        edges.append(Transition(src, dst, TransitionKind.FORWARD, guard, ""))
        if src != "INIT":
            edges.append(Transition(src, "RECONNAISSANCE", TransitionKind.RETRY, (), ""))
            edges.append(Transition(src, REJECT, TransitionKind.TERMINATION, (), "out_of_budget"))
    return edges


@lru_cache(maxsize=64)
def graph_for(arm: Arm, guards: bool = True) -> Graph:
    """The (model-checkable) graph `arm` runs, with the overfit guards unless `guards` is
    False."""
    graph = _variant(arm)
    if not guards:
        return graph
    return rebuild(graph, f"{graph.name}+guards", guard_edges(graph.transitions),
                   lattice=bool(graph.lattice), fields=GUARDED_FIELDS)


def _variant(arm: Arm) -> Graph:
    base = canonical()
    if not arm.failure_edges and not arm.gates:
        return rebuild(base, f"pipeline-{arm.name}", _pipeline(base), lattice=arm.lattice,
                       allow_all=not arm.allowlists,
                       retry=base.budgets.retry + base.budgets.rollback, rollback=0)
    edges = list(base.transitions)
    if not arm.failure_edges:
        edges = [t for t in edges if t.kind in (TransitionKind.FORWARD, TransitionKind.TERMINATION)]
    replans = arm.adaptive_plan and arm.failure_edges
    if replans:
        edges = with_replan(edges)
    if not arm.gates:
        edges = [Transition(t.from_, t.to, t.kind, (), t.reason) for t in edges]
    return rebuild(base, f"canonical-{arm.name}", edges, lattice=arm.lattice,
                   allow_all=not arm.allowlists,
                   fields={"TestResult": ("plan_diverged",)} if replans else None)
