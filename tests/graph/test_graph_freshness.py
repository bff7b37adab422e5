"""Phase 4: the freshness lattice — downstream-only, transitive, recompute STALE only."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.graph.freshness import Lattice
from frostline.graph.records import ArtifactFreshness, Freshness
from frostline.graph.states import LATTICE, LATTICE_ARTIFACTS

V, S = Freshness.VALID, Freshness.STALE
LAT = Lattice(LATTICE)


def all_valid() -> dict[str, Freshness]:
    return {a: V for a in LATTICE_ARTIFACTS}


def test_seven_named_artifacts_with_declared_edges():
    assert LATTICE_ARTIFACTS == ("RepoManifest", "LocalizationResult", "Diagnosis", "Plan", "Patch",
                                 "Review", "ValidationResult")
    assert LAT.depends_on["ValidationResult"] == ("Patch", "Review")
    assert LAT.depends_on["Plan"] == ("Diagnosis",)


def test_the_canonical_rule():
    # Diagnosis changes -> Patch / Review / Validation become STALE; RepoManifest / Localization stay VALID.
    status, inv = LAT.invalidate(all_valid(), "Diagnosis")
    assert {a for a, f in status.items() if f is S} == {"Plan", "Patch", "Review", "ValidationResult"}
    assert status["RepoManifest"] is V and status["LocalizationResult"] is V
    assert inv.stale == ("Plan", "Patch", "Review", "ValidationResult")  # topological order
    assert inv.preserved == ("RepoManifest", "LocalizationResult")


def test_only_existing_artifacts_become_stale():
    status, inv = LAT.invalidate({"RepoManifest": V, "LocalizationResult": V, "Diagnosis": V}, "RepoManifest")
    assert set(status) == {"RepoManifest", "LocalizationResult", "Diagnosis"}
    assert inv.stale == ("LocalizationResult", "Diagnosis")


def test_recomputation_visits_stale_nodes_only_in_topological_order():
    status, _ = LAT.invalidate(all_valid(), "Plan")
    visited: list[str] = []
    new, order = LAT.recompute(status, visited.append)
    assert visited == list(order) == ["Patch", "Review", "ValidationResult"]
    assert all(f is V for f in new.values())
    visited.clear()
    LAT.recompute(new, visited.append)
    assert visited == []  # nothing STALE, nothing recomputed


def test_freshness_consults_no_model(forbidden_model):
    # A revised Diagnosis during a run: the lattice invalidates its downstream on the record,
    # and no model is asked anything.
    from graph_helpers import run_canonical

    result = run_canonical({"VALIDATE": [{"accepted": 0, "implicates_diagnosis": 1}],
                            "DEBUG": [{}, {"root_cause": "revised"}]}, model=forbidden_model)
    revised = [e.data for e in result.ledger.of_kind("invalidation") if e.data["changed"] == "Diagnosis"]
    assert revised[0]["stale"] == ["Plan", "Patch", "Review", "ValidationResult"]
    assert revised[0]["recompute_order"] == ["Plan", "Patch", "Review", "ValidationResult"]
    assert result.counters.model_calls == 0


statuses = st.dictionaries(st.sampled_from(LATTICE_ARTIFACTS), st.sampled_from([V, S]))


@settings(deadline=None)
@given(statuses, st.sampled_from(LATTICE_ARTIFACTS))
def test_staleness_is_downstream_only_and_transitive(status, changed):
    new, inv = LAT.invalidate(status, changed)
    for a, f in new.items():
        if a in LAT.downstream(changed):
            assert f is S  # every existing descendant, however far, is STALE
        else:
            assert f is status[a]  # nothing else moved, least of all the upstream
    for a in LAT.upstream(changed):
        if a in status:
            assert new[a] is status[a]
    assert changed not in inv.stale


@settings(deadline=None)
@given(st.lists(st.sampled_from(LATTICE_ARTIFACTS), min_size=1, max_size=6))
def test_a_sequence_of_changes_never_touches_untouched_upstream(changes):
    status = all_valid()
    for changed in changes:
        status, _ = LAT.invalidate(status, changed)
        status[changed] = V  # the new version is stored VALID
    touched = set(changes)
    affected = touched | {d for c in touched for d in LAT.downstream(c)}
    for a, f in status.items():
        if a not in affected:
            assert f is V


@settings(deadline=None)
@given(st.permutations(list(LATTICE)))
def test_lattice_order_does_not_depend_on_declaration_order(nodes):
    lat = Lattice(nodes)
    for node in LATTICE:
        assert lat.downstream(node.artifact) == LAT.downstream(node.artifact)
    order = lat.order
    for node in LATTICE:
        for dep in node.depends_on:
            assert order.index(dep) < order.index(node.artifact)


def test_custom_lattice_declared_from_records():
    lat = Lattice([ArtifactFreshness("A", V, ()), ArtifactFreshness("B", V, ("A",)),
                   ArtifactFreshness("C", V, ("B",))])
    assert lat.downstream("A") == {"B", "C"} and lat.upstream("C") == {"A", "B"}
