"""The overfit guards as a declared change of the coding graph, model-checked like any other.

Each guard adds gate predicates to forward edges of an arm's graph (`guard_edges`, applied by
`variants.graph_for`); the bodies and
tools produce the properties the predicates read (`frostline.coding.overfit` for the analysis):

    degenerate rewrites   REVIEW -> VALIDATE also needs Review.degenerate == 0: a patch that
                          rewrites a decision into a constant is a verified defect (the
                          generators' candidates are marked, and REPAIR and GENERATE never
                          choose a marked one; the gate is the second line)
    the whole suite       VALIDATE -> MEMORIZE also needs ValidationResult.suite_checked > 0:
                          acceptance rests on a run of the package's whole visible suite on the
                          patch in force (REGRESSION's when it ran on this patch, else one VALIDATE
                          runs itself), not only on the tests that run the changed line
    smallest change first a body policy, no gate: REPAIR and GENERATE order each site's
                          candidates by how little they change (`overfit.smallest_first`)

A graph whose gates are off (every guard emptied) gets no predicate: the guards are gates. The
result must pass the model checker before it runs, as every arm's graph must.
"""

from __future__ import annotations

from collections.abc import Iterable

from frostline.graph.records import GatePredicate, Operator, Transition, TransitionKind

__all__ = ["GUARDED_FIELDS", "GUARDS", "guard_edges"]

#: (from, to) of a forward edge -> the predicates the guards add to its gate.
GUARDS: dict[tuple[str, str], tuple[GatePredicate, ...]] = {
    ("REVIEW", "VALIDATE"): (GatePredicate("Review", "degenerate", Operator.EQ, 0.0),),
    ("VALIDATE", "MEMORIZE"): (GatePredicate("ValidationResult", "suite_checked", Operator.GT,
                                             0.0),),
}

#: The fields the guards' predicates read, added to their artifacts' output schemas.
GUARDED_FIELDS: dict[str, tuple[str, ...]] = {"Review": ("degenerate",),
                                              "ValidationResult": ("suite_checked",)}


def guard_edges(transitions: Iterable[Transition]) -> list[Transition]:
    """`transitions` with the guards' predicates added to the gates of the edges they name
    (only edges that have a gate: a graph without gates stays without)."""
    edges: list[Transition] = []
    for t in transitions:
        extra = GUARDS.get((t.from_, t.to), ())
        if t.kind is TransitionKind.FORWARD and t.guard and extra:
            t = Transition(t.from_, t.to, t.kind, (*t.guard, *extra), t.reason)
        edges.append(t)
    return edges
