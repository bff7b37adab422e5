"""The state registry: the canonical coding workflow's names, tools, outputs and lattice.

These are the constants both shipped graphs are built from: the 18 canonical states plus the
two terminal sinks, the tool vocabulary (the harness's stage primitives), the per-state tool
allowlists, the artifact each state emits, the fields each artifact must carry, and the
seven-node freshness lattice with its dependency edges. Nothing here decides anything; it is
the vocabulary the graph, the engine and the checker share.
"""

from __future__ import annotations

from types import MappingProxyType

from frostline.graph.records import ArtifactFreshness, Freshness

INIT = "INIT"
TERMINAL_ACCEPT = "TERMINAL_ACCEPT"
TERMINAL_REJECT = "TERMINAL_REJECT"

#: The 18 canonical states, in dependency order.
CANONICAL_STATES: tuple[str, ...] = (
    "INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT", "PLAN", "GENERATE", "EDIT", "EXECUTE",
    "TRACE", "DEBUG", "REPAIR", "REFLECT", "CANDIDATES", "TEST", "VALIDATE", "REGRESSION",
    "MEMORIZE", "REVIEW",
)
TERMINALS: tuple[str, ...] = (TERMINAL_ACCEPT, TERMINAL_REJECT)
ALL_STATES: tuple[str, ...] = CANONICAL_STATES + TERMINALS

#: The exact toolset callable in each state; anything else is ILLEGAL_TOOL.
ALLOWLISTS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    "INIT": (),
    "RECONNAISSANCE": ("repo.manifest", "code.graph"),
    "LOCALIZE": ("code.graph", "trace.read"),
    "IMPACT": ("impact.analyze", "code.graph"),
    "PLAN": ("task.decompose",),
    "GENERATE": ("patch.generate", "code.graph", "repo.manifest"),
    "EDIT": ("edit.apply",),
    "EXECUTE": ("sandbox.execute",),
    "TRACE": ("trace.instrument", "sandbox.execute"),
    "DEBUG": ("error.interpret", "trace.read"),
    "REPAIR": ("repair.iterative", "patch.generate", "edit.apply"),
    "REFLECT": ("reflect.failure", "trace.read"),
    "CANDIDATES": ("candidates.generate",),
    "TEST": ("test.run",),
    "VALIDATE": ("validate.accept", "test.run"),
    "REGRESSION": ("regression.check", "test.run"),
    "MEMORIZE": ("memory.write",),
    "REVIEW": ("review.critic",),
    "TERMINAL_ACCEPT": (),
    "TERMINAL_REJECT": (),
})

#: The tool vocabulary: every tool some state may call, in first-use order.
TOOLS: tuple[str, ...] = tuple(dict.fromkeys(t for tools in ALLOWLISTS.values() for t in tools))

#: The artifact each state emits (its output_schema's name); absent = emits nothing.
OUTPUTS: MappingProxyType[str, str] = MappingProxyType({
    "RECONNAISSANCE": "RepoManifest",
    "LOCALIZE": "LocalizationResult",
    "IMPACT": "ImpactResult",
    "PLAN": "Plan",
    "GENERATE": "Patch",
    "EDIT": "Patch",
    "REPAIR": "Patch",
    "EXECUTE": "ExecutionResult",
    "TRACE": "Trace",
    "DEBUG": "Diagnosis",
    "REFLECT": "Reflection",
    "CANDIDATES": "CandidateSet",
    "TEST": "TestResult",
    "VALIDATE": "ValidationResult",
    "REGRESSION": "RegressionResult",
    "MEMORIZE": "MemoryWrite",
    "REVIEW": "Review",
})

#: The fields each artifact must carry (the `required` list of its output_schema). Gate
#: predicates may only test these fields (or the `exists` pseudo-property).
ARTIFACT_FIELDS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    "RepoManifest": ("root", "files", "file_count"),
    "LocalizationResult": ("candidates", "top_candidate", "top_candidate_confidence"),
    "ImpactResult": ("affected", "affected_count"),
    "Plan": ("steps", "step_count", "satisfiable"),
    "Patch": ("files", "diff", "applied"),
    "ExecutionResult": ("exit_code", "stdout", "stderr"),
    "Trace": ("events", "event_count"),
    "Diagnosis": ("root_cause", "confidence", "patch_local"),
    "Reflection": ("lessons", "hypothesis_count"),
    "CandidateSet": ("candidates", "best_score", "requires_replan"),
    "TestResult": ("passed", "failed", "failures"),
    "ValidationResult": ("accepted", "implicates_diagnosis", "reasons"),
    "RegressionResult": ("regressions", "checked"),
    "MemoryWrite": ("key", "written"),
    "Review": ("verified_defects", "notes"),
})

#: The seven lattice artifacts and their declared dependency edges.
LATTICE: tuple[ArtifactFreshness, ...] = (
    ArtifactFreshness("RepoManifest", Freshness.VALID, ()),
    ArtifactFreshness("LocalizationResult", Freshness.VALID, ("RepoManifest",)),
    ArtifactFreshness("Diagnosis", Freshness.VALID, ("RepoManifest", "LocalizationResult")),
    ArtifactFreshness("Plan", Freshness.VALID, ("Diagnosis",)),
    ArtifactFreshness("Patch", Freshness.VALID, ("Diagnosis", "Plan")),
    ArtifactFreshness("Review", Freshness.VALID, ("Patch",)),
    ArtifactFreshness("ValidationResult", Freshness.VALID, ("Patch", "Review")),
)
LATTICE_ARTIFACTS: tuple[str, ...] = tuple(node.artifact for node in LATTICE)


def output_schema(state: str) -> dict[str, object]:
    """The output_schema of a canonical state: ``{"name": ..., "required": [...]}`` or ``{}``."""
    name = OUTPUTS.get(state)
    if name is None:
        return {}
    return {"name": name, "required": list(ARTIFACT_FIELDS[name])}
