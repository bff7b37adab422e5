"""The run-time refusals of a phase graph; defined in `frostline.errors` with the whole tree.

    FrostlineError
    ├── DefinitionError
    │   └── GraphRejected      the model checker found a red query; the graph may not run
    └── RunError
        ├── IllegalTransition  a traversal of an un-enumerated (or disabled) edge was attempted
        └── CallDenied
            └── IllegalTool    a tool outside the current state's allowlist; never routed
"""

from __future__ import annotations

from frostline.errors import GraphRejected, IllegalTool, IllegalTransition

__all__ = ["GraphRejected", "IllegalTool", "IllegalTransition"]
