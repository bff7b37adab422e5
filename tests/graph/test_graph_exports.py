"""The package root's public names are pinned."""

import frostline.graph as graph_pkg

EXPECTED = {
    "ArtifactFreshness", "Budgets", "CheckResult", "Engine", "Freshness", "GatePredicate", "Graph",
    "GraphBuilder", "GraphRejected", "IllegalTool", "IllegalTransition", "Lattice", "WorkflowLedger",
    "LocalToolRouter", "MemorySink", "ModelClient", "Operator", "RunCounters", "RunResult",
    "TraversalStatus", "SafetyInvariant", "SlotLimits", "SlotModel", "SlotReply", "SlotRequest", "StateContext",
    "StateContract", "EventLogSink", "TerminationReason", "ToolBoundary", "ToolCall", "ToolRouter",
    "Transition", "TransitionKind", "check", "evaluate_gate", "exists", "load_graph", "model_body",
}


def test_exported_members():
    assert set(graph_pkg.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(graph_pkg, name) is not None
