"""The §8.3 decision rule and the §8.4 ablation rule, applied to scripted outcomes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.ab.decide import (
    MIN_PAIRED,
    ablation,
    decide_all,
    intermediate,
    state_machine,
)
from frostline.coding.interface import Instruments, TaskOutcome

N = 12


def _arm(name: str, **values: int | float) -> list[TaskOutcome]:
    return [TaskOutcome(f"t{i}", name, "ACCEPT", instruments=Instruments(**values))  # type: ignore[arg-type]
            for i in range(N)]


def test_arm4_kept_when_it_strictly_dominates_the_free_agent() -> None:
    d = state_machine({"arm4": _arm("arm4", resolved=1),
                       "free_agent": _arm("free_agent", resolved=0, illegal_actions=2)}, {})
    assert d.verdict == "kept" and "resolve_rate" in d.reason


def test_arm4_removed_when_costlier() -> None:
    d = state_machine({"arm4": _arm("arm4", resolved=1, tokens=900),
                       "free_agent": _arm("free_agent", resolved=0, tokens=100)}, {})
    assert d.verdict == "removed" and "tokens" in d.reason


def test_the_escape_hatch_fires_when_indistinguishable() -> None:
    d = state_machine({"arm4": _arm("arm4", resolved=1), "free_agent": _arm("free_agent", resolved=1)}, {})
    assert d.verdict == "removed" and "escape hatch" in d.reason


def test_undecided_when_an_arm_did_not_run_or_too_few_tasks() -> None:
    d = state_machine({"arm4": _arm("arm4")}, {"free_agent": "needs a model"})
    assert d.verdict == "undecided" and "needs a model" in d.reason
    few = {"arm4": _arm("arm4")[:MIN_PAIRED - 1], "free_agent": _arm("free_agent")[:MIN_PAIRED - 1]}
    assert state_machine(few, {}).verdict == "undecided"


def test_an_intermediate_arm_that_harms_is_removed_outright() -> None:
    harm = intermediate("arm2", "arm1", {"arm2": _arm("arm2", resolved=1, regressions=1),
                                         "arm1": _arm("arm1", resolved=0)}, {})
    assert harm.verdict == "removed" and "harm" in harm.reason and "regressions" in harm.reason
    gain = intermediate("arm2", "arm1", {"arm2": _arm("arm2", resolved=1),
                                         "arm1": _arm("arm1", resolved=0)}, {})
    assert gain.verdict == "kept"
    flat = intermediate("arm2", "arm1", {"arm2": _arm("arm2"), "arm1": _arm("arm1")}, {})
    assert flat.verdict == "removed" and "no instrument" in flat.reason


def test_a_mechanism_is_deleted_iff_its_removal_degrades_nothing() -> None:
    arm4 = _arm("arm4", resolved=1)
    kept = ablation("no_lattice", {"arm4": arm4, "no_lattice": _arm("no_lattice", resolved=1,
                                                                    repeated_work=3)}, {})
    assert kept.verdict == "kept" and kept.subject == "lattice"
    assert "observed ['repeated_work']" in kept.reason
    deleted = ablation("no_gates", {"arm4": arm4, "no_gates": _arm("no_gates", resolved=1)}, {})
    assert deleted.verdict == "deleted" and "none of them" in deleted.reason


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=N, max_size=N))
def test_removal_that_only_improves_is_deleted(extra: list[int]) -> None:
    arm4 = [TaskOutcome(f"t{i}", "arm4", "ACCEPT", instruments=Instruments(repeated_work=e))
            for i, e in enumerate(extra)]
    better = [TaskOutcome(f"t{i}", "no_gates", "ACCEPT", instruments=Instruments())
              for i in range(N)]
    assert ablation("no_gates", {"arm4": arm4, "no_gates": better}, {}).verdict == "deleted"


def test_decide_all_covers_the_asked_arms_in_order() -> None:
    outcomes = {n: _arm(n) for n in ("arm1", "arm2", "arm4", "no_gates")}
    rules = [d.rule for d in decide_all(outcomes, {"arm3": "deferred"},
                                        ["arm1", "arm2", "arm3", "arm4", "no_gates"])]
    assert rules == ["8.3 state machine: arm4 vs free_agent", "8.3 intermediate: arm1 vs free_agent",
                     "8.3 intermediate: arm2 vs arm1", "8.3 intermediate: arm3 vs arm2",
                     "8.3 intermediate: arm4 vs arm2", "8.4 ablation: no_gates vs arm4"]
