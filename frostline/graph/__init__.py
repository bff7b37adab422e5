"""frostline.graph: declared, evidence-gated phase graphs.

A graph is data (a JSON file or a `GraphBuilder`), checked by a model checker before it runs,
and run by a deterministic engine in which the model is one bounded slot inside a state.

    graph = load_graph("canonical")
    assert check(graph).ok
    result = Engine(graph, bodies, model=client, router=router).run()
"""

from frostline.capabilities.model import ModelClient
from frostline.graph.allowlist import LocalToolRouter, ToolBoundary, ToolCall, ToolRouter
from frostline.graph.builder import GraphBuilder
from frostline.graph.engine import (
    Engine,
    RunCounters,
    RunResult,
    StateContext,
    TraversalStatus,
    model_body,
)
from frostline.graph.errors import GraphRejected, IllegalTool, IllegalTransition
from frostline.graph.freshness import Lattice
from frostline.graph.gates import evaluate_gate
from frostline.graph.graph import Budgets, Graph, load_graph
from frostline.graph.ledger import EventLogSink, MemorySink, WorkflowLedger
from frostline.graph.modelcheck import CheckResult, check
from frostline.graph.records import (
    ArtifactFreshness,
    Freshness,
    GatePredicate,
    Operator,
    SafetyInvariant,
    StateContract,
    TerminationReason,
    Transition,
    TransitionKind,
    exists,
)
from frostline.graph.slot import SlotLimits, SlotModel, SlotReply, SlotRequest

__all__ = [
    "ArtifactFreshness",
    "Budgets",
    "CheckResult",
    "Engine",
    "EventLogSink",
    "Freshness",
    "GatePredicate",
    "Graph",
    "GraphBuilder",
    "GraphRejected",
    "IllegalTool",
    "IllegalTransition",
    "Lattice",
    "LocalToolRouter",
    "MemorySink",
    "ModelClient",
    "Operator",
    "RunCounters",
    "RunResult",
    "SafetyInvariant",
    "SlotLimits",
    "SlotModel",
    "SlotReply",
    "SlotRequest",
    "StateContext",
    "StateContract",
    "TerminationReason",
    "ToolBoundary",
    "ToolCall",
    "ToolRouter",
    "Transition",
    "TransitionKind",
    "TraversalStatus",
    "WorkflowLedger",
    "check",
    "evaluate_gate",
    "exists",
    "load_graph",
    "model_body",
]
