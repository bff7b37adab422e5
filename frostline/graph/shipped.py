"""The two shipped graphs, built through the Python API.

`seed_graph()` is the specification's graph verbatim: its states, its classified transition
relation (including the retry records that duplicate forward pairs), its allowlists, outputs and
lattice. The specification states guards only in prose; each prose condition is encoded here as
predicates over the source state's output, and required inputs follow the lattice (a state
that emits a lattice artifact needs that artifact's upstream) plus the one the text pins
(GENERATE needs a VALID Diagnosis), which both graphs also declare as a safety invariant.
The model checker finds this graph unsafe and not live.

`canonical_graph()` is the shipped graph: it resolves every finding; each deviation from the
seed and its reason is documented in docs/graph-deviations.md.

The JSON files in `graphs/` are these graphs serialized; a test pins them equal, and
``python -m frostline.graph.shipped`` rewrites them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from frostline.graph.builder import GraphBuilder
from frostline.graph.graph import Graph
from frostline.graph.records import GatePredicate, Operator, exists
from frostline.graph.states import (
    ALL_STATES,
    ALLOWLISTS,
    CANONICAL_STATES,
    LATTICE,
    OUTPUTS,
    TERMINAL_ACCEPT,
    TERMINAL_REJECT,
    TERMINALS,
    TOOLS,
    output_schema,
)

ACCEPT, REJECT = TERMINAL_ACCEPT, TERMINAL_REJECT
OOB = "out_of_budget"
CONTRADICTION = "contradiction_in_specification"
SANDBOX = "unrecoverable_sandbox_failure"


def P(artifact: str, prop: str, op: str, threshold: float) -> GatePredicate:
    return GatePredicate(artifact, prop, Operator(op), float(threshold))


#: The specification's canonical gate: LocalizationResult exists AND confidence > threshold.
LOCALIZATION_GATE = (exists("LocalizationResult"),
                     P("LocalizationResult", "top_candidate_confidence", "GT", 0.5))


def _seed_inputs(state: str) -> tuple[str, ...]:
    depends = {n.artifact: n.depends_on for n in LATTICE}
    inputs = list(depends.get(OUTPUTS.get(state, ""), ()))
    if state == "GENERATE" and "Diagnosis" not in inputs:
        inputs.insert(0, "Diagnosis")
    return tuple(inputs)


def _base(name: str, inputs: dict[str, tuple[str, ...]]) -> GraphBuilder:
    b = GraphBuilder(name, states=ALL_STATES, terminals=TERMINALS, tools=TOOLS, accepting=[ACCEPT])
    for s in ALL_STATES:
        b.state(s, inputs=inputs.get(s, ()), tools=ALLOWLISTS[s], output=output_schema(s))
    # The specification pins this one safety fact in its text; both graphs carry it as data, so
    # it stays proven even if an edit drops Diagnosis from GENERATE's required inputs.
    b.invariant("GENERATE", "Diagnosis")
    return b.lattice(LATTICE)


def seed_graph() -> Graph:
    """The specification's graph as written (it fails safety and liveness)."""
    b = _base("seed", {s: _seed_inputs(s) for s in CANONICAL_STATES})
    # FORWARD edges, in the specification's order.
    b.edge("INIT", "RECONNAISSANCE")
    b.edge("RECONNAISSANCE", "LOCALIZE", guard=[exists("RepoManifest")])
    b.edge("LOCALIZE", "IMPACT", guard=LOCALIZATION_GATE)
    b.edge("IMPACT", "PLAN", guard=[exists("ImpactResult")])
    b.edge("PLAN", "GENERATE", guard=[P("Plan", "satisfiable", "EQ", 1)])
    b.edge("GENERATE", "EDIT", guard=[exists("Patch")])
    b.edge("EDIT", "EXECUTE", guard=[P("Patch", "applied", "EQ", 1)])
    b.edge("EXECUTE", "TRACE", guard=[P("ExecutionResult", "exit_code", "NEQ", 0)])
    b.edge("TRACE", "DEBUG", guard=[exists("Trace")])
    b.edge("DEBUG", "REPAIR", guard=[P("Diagnosis", "patch_local", "EQ", 1)])
    b.edge("DEBUG", "REFLECT", guard=[exists("Diagnosis")])
    b.edge("REFLECT", "CANDIDATES", guard=[exists("Reflection")])
    b.edge("CANDIDATES", "REPAIR", guard=[P("CandidateSet", "requires_replan", "EQ", 0)])
    b.edge("CANDIDATES", "PLAN", guard=[exists("CandidateSet")])
    b.edge("EXECUTE", "TEST", guard=[P("ExecutionResult", "exit_code", "EQ", 0)])
    b.edge("TEST", "VALIDATE", guard=[P("TestResult", "failed", "EQ", 0)])
    b.edge("VALIDATE", "REGRESSION", guard=[P("ValidationResult", "accepted", "EQ", 1)])
    b.edge("REGRESSION", "MEMORIZE", guard=[P("RegressionResult", "regressions", "EQ", 0)])
    b.edge("MEMORIZE", "REVIEW", guard=[exists("MemoryWrite")])
    b.edge("REVIEW", ACCEPT, guard=[P("Review", "verified_defects", "EQ", 0),
                                    P("ValidationResult", "accepted", "EQ", 1)])
    # RETRY edges: the inner cycle TEST -> REPAIR -> EDIT -> EXECUTE -> TEST.
    b.edge("TEST", "REPAIR", "retry", guard=[P("TestResult", "failed", "GT", 0)])
    b.edge("REPAIR", "EDIT", "retry", guard=[exists("Patch")])
    b.edge("EDIT", "EXECUTE", "retry")
    b.edge("EXECUTE", "TEST", "retry")
    # ROLLBACK edges.
    b.edge("VALIDATE", "LOCALIZE", "rollback", guard=[P("ValidationResult", "implicates_diagnosis", "EQ", 1)])
    b.edge("VALIDATE", "REPAIR", "rollback")
    b.edge("REVIEW", "REPAIR", "rollback", guard=[P("Review", "verified_defects", "GT", 0)])
    b.edge("REGRESSION", "REPAIR", "rollback", guard=[P("RegressionResult", "regressions", "GT", 0)])
    # TERMINATION edges.
    b.edge("PLAN", REJECT, "termination", reason=CONTRADICTION)
    b.edge("TEST", REJECT, "termination", reason=OOB)
    b.edge("EXECUTE", REJECT, "termination", reason=SANDBOX)
    b.edge("VALIDATE", REJECT, "termination", reason=CONTRADICTION)
    b.edge("REVIEW", REJECT, "termination", reason=OOB)
    return b.budgets(retry=3, rollback=2).build()


CANONICAL_INPUTS: dict[str, tuple[str, ...]] = {
    "LOCALIZE": ("RepoManifest",),
    "IMPACT": ("LocalizationResult",),
    "DEBUG": ("RepoManifest", "LocalizationResult"),
    "PLAN": ("Diagnosis",),
    "GENERATE": ("Diagnosis", "Plan"),
    "EDIT": ("Diagnosis", "Plan", "Patch"),
    "EXECUTE": ("Patch",),
    "TRACE": ("ExecutionResult",),
    "REFLECT": ("Diagnosis",),
    "CANDIDATES": ("Diagnosis", "Reflection"),
    "REPAIR": ("Diagnosis", "Plan", "Patch"),
    "TEST": ("Patch", "ExecutionResult"),
    "REGRESSION": ("Patch", "TestResult"),
    "REVIEW": ("Patch",),
    "VALIDATE": ("Patch", "Review", "TestResult", "RegressionResult"),
    "MEMORIZE": ("ValidationResult",),
}


def canonical_graph() -> Graph:
    """The shipped coding workflow: safe, live, and every run terminates."""
    b = _base("canonical", CANONICAL_INPUTS)
    b.edge("INIT", "RECONNAISSANCE")
    b.edge("RECONNAISSANCE", "LOCALIZE", guard=[P("RepoManifest", "file_count", "GT", 0)])
    b.edge("RECONNAISSANCE", REJECT, "termination", reason=SANDBOX)
    b.edge("LOCALIZE", "IMPACT", guard=LOCALIZATION_GATE)
    b.edge("LOCALIZE", REJECT, "termination", reason=OOB)
    # IMPACT hands over to DEBUG, which interprets the reproduction evidence into the first
    # Diagnosis: the forward path now produces a Diagnosis before PLAN and GENERATE need one.
    b.edge("IMPACT", "DEBUG", guard=[exists("ImpactResult")])
    b.edge("IMPACT", REJECT, "termination", reason=OOB)
    b.edge("DEBUG", "REPAIR", guard=[exists("Patch"), exists("Plan"), P("Diagnosis", "patch_local", "EQ", 1)])
    b.edge("DEBUG", "REFLECT", guard=[exists("Patch"), P("Diagnosis", "confidence", "LT", 0.5)])
    b.edge("DEBUG", "PLAN", guard=[exists("Diagnosis")])
    b.edge("DEBUG", REJECT, "termination", reason=OOB)
    b.edge("PLAN", "GENERATE", guard=[P("Plan", "satisfiable", "EQ", 1)])
    b.edge("PLAN", REJECT, "termination", reason=CONTRADICTION)
    b.edge("GENERATE", "EDIT", guard=[exists("Patch")])
    b.edge("GENERATE", REJECT, "termination", reason=OOB)
    b.edge("EDIT", "EXECUTE", guard=[P("Patch", "applied", "EQ", 1)])
    b.edge("EDIT", REJECT, "termination", reason=SANDBOX)
    b.edge("EXECUTE", "TEST", guard=[P("ExecutionResult", "exit_code", "EQ", 0)])
    b.edge("EXECUTE", "TRACE", "retry", guard=[exists("ExecutionResult")])
    b.edge("EXECUTE", REJECT, "termination", reason=SANDBOX)
    b.edge("TRACE", "DEBUG", guard=[exists("Trace")])
    b.edge("TRACE", REJECT, "termination", reason=SANDBOX)
    b.edge("REFLECT", "CANDIDATES", guard=[exists("Reflection")])
    b.edge("REFLECT", REJECT, "termination", reason=OOB)
    b.edge("CANDIDATES", "REPAIR", guard=[exists("Patch"), exists("Plan"),
                                          P("CandidateSet", "requires_replan", "EQ", 0)])
    b.edge("CANDIDATES", "PLAN", guard=[exists("CandidateSet")])
    b.edge("CANDIDATES", REJECT, "termination", reason=OOB)
    b.edge("REPAIR", "EDIT", guard=[exists("Patch")])
    b.edge("REPAIR", REJECT, "termination", reason=OOB)
    b.edge("TEST", "REGRESSION", guard=[P("TestResult", "failed", "EQ", 0)])
    b.edge("TEST", "REPAIR", "retry", guard=[exists("TestResult")])
    b.edge("TEST", REJECT, "termination", reason=OOB)
    b.edge("REGRESSION", "REVIEW", guard=[P("RegressionResult", "regressions", "EQ", 0)])
    b.edge("REGRESSION", "REPAIR", "rollback", guard=[exists("RegressionResult")])
    b.edge("REGRESSION", REJECT, "termination", reason=OOB)
    b.edge("REVIEW", "VALIDATE", guard=[P("Review", "verified_defects", "EQ", 0)])
    b.edge("REVIEW", "REPAIR", "rollback", guard=[exists("Review")])
    b.edge("REVIEW", REJECT, "termination", reason=OOB)
    b.edge("VALIDATE", "MEMORIZE", guard=[P("ValidationResult", "accepted", "EQ", 1)])
    b.edge("VALIDATE", "LOCALIZE", "rollback", guard=[P("ValidationResult", "implicates_diagnosis", "EQ", 1)])
    b.edge("VALIDATE", "REPAIR", "rollback", guard=[exists("ValidationResult")])
    b.edge("VALIDATE", REJECT, "termination", reason=CONTRADICTION)
    b.edge("MEMORIZE", ACCEPT, guard=[exists("MemoryWrite"), P("ValidationResult", "accepted", "EQ", 1)])
    b.edge("MEMORIZE", REJECT, "termination", reason=SANDBOX)
    return _tunables(b.budgets(retry=3, rollback=2)).build()


def _tunables(b: GraphBuilder) -> GraphBuilder:
    """The coding workflow's own parameters and what offline tuning may change (design time
    only; `frostline graph tune`). The settings are the coding workflow's defaults."""
    b.settings(samples=3, screen_limit=48, test_timeout=20.0)
    b.tunable("budget", "retry", [1, 2, 3, 4, 5])
    b.tunable("budget", "rollback", [0, 1, 2, 3])
    b.tunable("threshold", "LOCALIZE->IMPACT:forward", [0.0, 0.25, 0.5, 0.75],
              predicate="LocalizationResult.top_candidate_confidence")
    b.tunable("threshold", "DEBUG->REFLECT:forward", [0.25, 0.5, 0.75],
              predicate="Diagnosis.confidence")
    b.tunable("edge", "VALIDATE->LOCALIZE:rollback", [True, False])
    b.tunable("state", "REFLECT", [True, False])
    b.tunable("setting", "samples", [1, 3, 5])
    b.tunable("setting", "screen_limit", [16, 48, 96])
    b.tunable("setting", "test_timeout", [10.0, 20.0, 40.0])
    return b


BUILDERS = {"seed": seed_graph, "canonical": canonical_graph}


def write_shipped(directory: Path | None = None) -> list[Path]:
    """Serialize both shipped graphs into `directory` (default: the package's graphs/)."""
    directory = directory or Path(__file__).parent / "graphs"
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in BUILDERS.items():
        path = directory / f"{name}.json"
        path.write_text(build().dumps(), "utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for p in write_shipped(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(p)
