"""The run-time refusals of a phase graph, as branches of frostline's error tree.

    FrostlineError
    ├── DefinitionError
    │   └── GraphRejected      the model checker found a red query; the graph may not run
    └── RunError
        ├── IllegalTransition  a traversal of an un-enumerated (or disabled) edge was attempted
        └── CallDenied
            └── IllegalTool    a tool outside the current state's allowlist; never routed
"""

from __future__ import annotations

from frostline.errors import CallDenied, DefinitionError, RunError


class GraphRejected(DefinitionError):
    """The graph failed reachability, safety or liveness; run `frostline graph check` to see why."""

    code = "graph_rejected"


class IllegalTransition(RunError):
    code = "illegal_transition"


class IllegalTool(CallDenied):
    code = "illegal_tool"
