"""The engine: runs a checked graph with injected state bodies, model client and tool router.

The engine is the whole control plane at run time, and it holds no learned entry. For each
visit it records the entry, runs the state's body (deterministic code, or one bounded model
slot through `StateContext.judge`), validates and stores the output, lets the lattice mark the
downstream of a changed artifact STALE, evaluates the gates, and takes the edge `select_edge`
picks, drawing the retry/rollback budget. Everything goes to the ledger.

Everything an A/B driver varies is injected: `bodies` (state -> callable), `model`
(a `SlotModel`: the model-client protocol over slot requests), `router` (a `ToolRouter`), the ledger `sinks`, and the slot limits; the
`RunCounters` it reads come back in the `RunResult`.

A graph must pass the model checker before it runs (``verify=True``); pass ``verify=False`` only
to study a graph that is known to be red.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from frostline.contract.identity import digest
from frostline.errors import FrostlineError, GraphBodiesInvalid, RunError
from frostline.graph.allowlist import ToolBoundary, ToolCall, ToolRouter
from frostline.graph.edges import BudgetState, blocking_inputs, select_edge
from frostline.graph.errors import GraphRejected, IllegalTool, IllegalTransition
from frostline.graph.freshness import Lattice
from frostline.graph.gates import StoredArtifact
from frostline.graph.graph import Graph
from frostline.graph.ledger import LedgerSink, MemorySink, WorkflowLedger
from frostline.graph.modelcheck import CheckResult, check
from frostline.graph.records import Freshness
from frostline.graph.slot import SlotLimits, SlotModel, SlotRequest, run_slot, validate_output

_CHECKED: weakref.WeakKeyDictionary[Graph, CheckResult] = weakref.WeakKeyDictionary()


def _verified(graph: Graph) -> CheckResult:
    """Model-check a graph once per (immutable) graph object."""
    report = _CHECKED.get(graph)
    if report is None:
        report = _CHECKED[graph] = check(graph)
    return report


class TraversalStatus(StrEnum):
    """How one traversal of a graph ended (`RunResult.status`; its exit code is
    `contract.status.GRAPH_EXIT`). Not a stored run's status: that is
    `frostline.contract.status.RunStatus`."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    STUCK = "stuck"
    STEP_LIMIT = "step_limit"


@dataclass
class RunCounters:
    """Deterministic instruments of one run (never a self-report)."""

    steps: int = 0
    visits: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0
    model_calls_by_state: dict[str, int] = field(default_factory=dict)
    tokens: int = 0
    tool_calls: int = 0
    illegal_tools: int = 0
    illegal_transitions: int = 0
    output_rejections: int = 0
    state_failures: int = 0
    invalidated: int = 0
    identical_recomputations: int = 0  # repeated work: an artifact re-emitted unchanged
    retry_used: int = 0
    rollback_used: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunResult:
    status: TraversalStatus
    terminal: str | None
    reason: str
    path: tuple[str, ...]
    artifacts: Mapping[str, StoredArtifact]
    counters: RunCounters
    ledger: WorkflowLedger

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "terminal": self.terminal, "reason": self.reason,
                "path": list(self.path), "counters": self.counters.to_dict(),
                "artifacts": {k: v.to_dict() for k, v in self.artifacts.items()}}


Body = Callable[["StateContext"], Mapping[str, Any] | None]


def model_body(ctx: StateContext) -> Mapping[str, Any] | None:
    """The body of a semantic state: one bounded model slot, nothing else."""
    return ctx.judge()


class StateContext:
    """What a state body sees: its inputs, the VALID artifacts, its tools, and its one slot."""

    def __init__(self, engine: Engine, state: str, visit: int) -> None:
        self._engine = engine
        self.state = state
        self.visit = visit
        self._ordinal = 0
        self._judged = False
        self.slot_failure = ""
        contract = engine.graph.contracts[state]
        self.output_schema = contract.output_schema
        self.permitted_tools = contract.permitted_tools
        # Bodies and the model get copies: nothing they do can edit a stored artifact.
        self.inputs: Mapping[str, Mapping[str, Any]] = {
            a: copy.deepcopy(engine.artifacts[a].value) for a in contract.required_inputs
            if a in engine.artifacts}

    def artifact(self, name: str) -> dict[str, Any] | None:
        """A copy of the stored value of `name` if it is VALID (a STALE artifact reads as absent)."""
        stored = self._engine.artifacts.get(name)
        return copy.deepcopy(dict(stored.value)) if stored is not None and stored.valid else None

    def tool(self, tool: str, payload: Mapping[str, Any] | None = None) -> Any:
        """Call a tool of this state's allowlist; an off-list tool raises IllegalTool, unrouted."""
        return self._engine._call_tool(self, tool, dict(payload or {}))

    def judge(self, hint: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
        """Run this visit's model slot (at most once) and return its validated output or None."""
        if self._judged:
            raise RunError(f"{self.state}: the model slot runs at most once per visit",
                           state=self.state, visit=self.visit)
        self._judged = True
        return self._engine._judge(self, hint)

    def next_ordinal(self) -> int:
        n = self._ordinal
        self._ordinal += 1
        return n


class Engine:
    """Run a graph. Example::

        result = Engine(load_graph("canonical"), bodies, model=client, router=router).run()
        result.status is TraversalStatus.ACCEPTED
    """

    def __init__(self, graph: Graph, bodies: Mapping[str, Body], *, model: SlotModel | None = None,
                 router: ToolRouter | None = None, sinks: Iterable[LedgerSink] = (),
                 limits: SlotLimits | None = None, run_id: str = "graph-run", max_steps: int = 10_000,
                 verify: bool = True) -> None:
        if verify:
            report = _verified(graph)
            if not report.ok:
                failed = [k for k, q in report.queries.items() if not q.ok]
                raise GraphRejected(f"graph {graph.name!r} fails {', '.join(failed)}; "
                                    f"run `frostline graph check {graph.name}` for counterexamples",
                                    graph=graph.name, queries=report.to_dict()["queries"])
        unknown = sorted(set(bodies) - set(graph.states))
        if unknown:
            raise GraphBodiesInvalid(f"bodies for unknown state(s) {unknown}", states=unknown)
        missing = [s for s in graph.states if s not in graph.terminals and s not in bodies
                   and graph.contracts[s].output is not None]
        if missing:
            raise GraphBodiesInvalid(f"no body for state(s) {missing}; map each to a function of "
                                     "the StateContext (use model_body for a pure model "
                                     "judgment)", states=missing)
        self.graph = graph
        self.bodies = dict(bodies)
        self.model = model
        self.router = router
        self.limits = limits or SlotLimits()
        self.max_steps = max_steps
        self.memory = MemorySink()
        self.ledger = WorkflowLedger(run_id, [self.memory, *sinks])
        self.boundary = ToolBoundary(graph)
        self.lattice = Lattice(graph.lattice)
        self.artifacts: dict[str, StoredArtifact] = {}
        self.counters = RunCounters()
        self.budget = BudgetState(graph.budgets)
        self._reason = ""  # the last edge's termination reason ("" on every other kind)
        self._started = False

    # -- tools and the slot ------------------------------------------------------------------
    def _call_tool(self, ctx: StateContext, tool: str, payload: dict[str, Any]) -> Any:
        try:
            self.boundary.check(ctx.state, tool)
        except IllegalTool as exc:
            self.counters.illegal_tools += 1
            self.ledger.append("illegal_tool", {"state": ctx.state, "visit": ctx.visit, "tool": tool,
                                                "owners": exc.fields.get("owners", []),
                                                "routed": False})
            raise
        if self.router is None:
            raise RunError(f"{ctx.state} called {tool!r} but the engine has no tool router",
                           state=ctx.state, tool=tool)
        payload_digest = digest(payload)  # a non-JSON payload is refused before it takes an ordinal
        call = ToolCall(ctx.state, ctx.visit, ctx.next_ordinal(), tool, payload)
        self.counters.tool_calls += 1
        self.ledger.append("tool_call", {"state": call.state, "visit": call.visit,
                                         "ordinal": call.ordinal, "identity": call.identity,
                                         "tool": tool, "payload_digest": payload_digest})
        return self.router.call(call)

    def _judge(self, ctx: StateContext, hint: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        if self.model is None:
            raise RunError(f"{ctx.state} asked for a model judgment but the engine has no model client",
                           state=ctx.state)
        request = SlotRequest(ctx.state, ctx.visit, 0, ctx.inputs, ctx.output_schema,
                              ctx.permitted_tools, hint=hint)

        def emit(kind: str, data: dict[str, Any]) -> None:
            if kind == "model_call":
                self.counters.model_calls += 1
                self.counters.model_calls_by_state[ctx.state] = \
                    self.counters.model_calls_by_state.get(ctx.state, 0) + 1
            elif kind == "illegal_transition":
                self.counters.illegal_transitions += 1
            elif kind == "output_rejected":
                self.counters.output_rejections += 1
            self.ledger.append(kind, data)

        outcome = run_slot(request, self.model, self.limits, emit=emit,
                           call_tool=lambda tool, payload: self._call_tool(ctx, tool, dict(payload)))
        self.counters.tokens += outcome.tokens
        if outcome.output is None:
            ctx.slot_failure = outcome.failure
        return outcome.output

    # -- one visit ---------------------------------------------------------------------------
    def _visit(self, state: str) -> bool:
        """Run `state`'s body; store its output. Returns whether the visit emitted its output."""
        visit = self.counters.visits.get(state, 0)
        self.counters.visits[state] = visit + 1
        contract = self.graph.contracts[state]
        self.ledger.append("state_entered", {
            "state": state, "visit": visit,
            "inputs": {a: self.artifacts[a].digest for a in contract.required_inputs if a in self.artifacts},
            "blocking": list(blocking_inputs(self.graph, state, self.artifacts))})
        ctx = StateContext(self, state, visit)
        body = self.bodies.get(state)
        if body is None:
            return contract.output is None
        try:
            output = body(ctx)
        except IllegalTool as exc:
            # A state that emits nothing has no output for its forward guards to wait on.
            return self._fail(state, visit, f"the body called an off-list tool: {exc.message}") \
                or contract.output is None
        except FrostlineError as exc:
            return self._fail(state, visit, exc.message) or contract.output is None
        if contract.output is None:
            return True
        if output is None:
            return self._fail(state, visit, ctx.slot_failure or "the body emitted no output")
        problem = validate_output(contract.output_schema, output)
        if problem is not None:
            return self._fail(state, visit, f"output does not satisfy {contract.output}: {problem}")
        try:
            self._store(contract.output, copy.deepcopy(dict(output)), f"{state}#{visit}")
        except FrostlineError as exc:  # e.g. an integer beyond the canonical-JSON range
            return self._fail(state, visit, f"output cannot be stored: {exc.message}")
        return True

    def _fail(self, state: str, visit: int, why: str) -> bool:
        self.counters.state_failures += 1
        self.ledger.append("state_failed", {"state": state, "visit": visit, "reason": why})
        return False

    def _store(self, name: str, value: dict[str, Any], produced_by: str) -> None:
        h = digest(value)
        prev = self.artifacts.get(name)
        changed = prev is None or prev.digest != h
        version = 1 if prev is None else prev.version + int(changed)
        self.artifacts[name] = StoredArtifact(name, value, h, Freshness.VALID, version, produced_by)
        self.ledger.append("artifact", {"artifact": name, "digest": h, "version": version,
                                        "changed": changed, "produced_by": produced_by})
        if not changed:
            if name in self.lattice and prev is not None and prev.valid:
                self.counters.identical_recomputations += 1
            return
        if name not in self.lattice:
            return
        status = {a: s.freshness for a, s in self.artifacts.items() if a in self.lattice}
        new, inv = self.lattice.invalidate(status, name)
        for a in inv.stale:
            old = self.artifacts[a]
            self.artifacts[a] = StoredArtifact(a, old.value, old.digest, Freshness.STALE, old.version,
                                               old.produced_by)
        if inv.stale:
            self.counters.invalidated += len(inv.stale)
            self.ledger.append("invalidation", {"changed": name, "stale": list(inv.stale),
                                                "preserved": list(inv.preserved),
                                                "recompute_order": list(self.lattice.stale(new))})

    # -- the run -----------------------------------------------------------------------------
    def traverse(self, source: str, target: str) -> None:
        """Reject, on the record, any attempt to move along a pair the graph does not declare."""
        if not self.graph.has_pair(source, target):
            self.counters.illegal_transitions += 1
            self.ledger.append("illegal_transition", {"state": source, "requested": target,
                                                      "source": "caller",
                                                      "message": "not an enumerated edge"})
            raise IllegalTransition(f"ILLEGAL_TRANSITION: {source}->{target} is not an enumerated edge",
                                    source=source, target=target)

    def run(self) -> RunResult:
        """Run the graph from its initial state to a terminal (an Engine runs once)."""
        if self._started:
            raise RunError("this engine has already run; build a new Engine for another run")
        self._started = True
        g = self.graph
        self.ledger.append("run_started", {"graph": g.name, "initial": g.initial,
                                           "budgets": g.budgets.to_dict()})
        state = g.initial
        path = [state]
        while True:
            if g.is_terminal(state):
                self.counters.visits[state] = self.counters.visits.get(state, 0) + 1
                self.ledger.append("state_entered", {"state": state, "visit": 0, "inputs": {},
                                                     "blocking": []})
                # the graph says which sinks accept (a termination edge never enters one)
                status = (TraversalStatus.ACCEPTED if state in g.accepting_terminals
                          else TraversalStatus.REJECTED)
                return self._finish(status, state, self._reason, path)
            if self.counters.steps >= self.max_steps:
                self.ledger.append("step_limit", {"state": state, "steps": self.counters.steps})
                return self._finish(TraversalStatus.STEP_LIMIT, None, "step_limit", path)
            self.counters.steps += 1
            emitted = self._visit(state)
            decision = select_edge(g, state, self.artifacts, self.budget, emitted=emitted)
            for c in decision.considered:
                self.ledger.append("gate", {"state": state, **c.to_dict()})
            if decision.edge is None:
                self.ledger.append("stuck", {"state": state, "emitted": emitted,
                                             "budget": self.budget.to_dict()})
                return self._finish(TraversalStatus.STUCK, None, "no edge enabled", path)
            edge = decision.edge
            self.traverse(edge.from_, edge.to)
            self.budget = self.budget.draw(edge)
            self.counters.retry_used = self.budget.retry_used
            self.counters.rollback_used = self.budget.rollback_used
            self.ledger.append("edge", {"from": edge.from_, "to": edge.to, "kind": edge.kind.value,
                                        "reason": edge.reason, "budget_drawn": edge.consumes,
                                        "budget": self.budget.to_dict()})
            self._reason = edge.reason
            state = edge.to
            path.append(state)

    def _finish(self, status: TraversalStatus, terminal: str | None, reason: str,
                path: list[str]) -> RunResult:
        if terminal is not None:
            self.ledger.append("terminal", {"state": terminal, "status": status.value, "reason": reason,
                                            "counters": self.counters.to_dict()})
        return RunResult(status, terminal, reason, tuple(path), dict(self.artifacts), self.counters,
                         self.ledger)
