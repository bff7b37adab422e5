"""Aggregates and paired bootstrap intervals of the nine instruments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.ab.stats import aggregate, bootstrap_ci, compare
from frostline.coding.interface import INSTRUMENT_KEYS, Instruments, TaskOutcome


def _o(task: str, arm: str, **values: float) -> TaskOutcome:
    return TaskOutcome(task, arm, "ACCEPT", instruments=Instruments(**values))  # type: ignore[arg-type]


def test_aggregate_has_exactly_the_nine_and_tasks() -> None:
    agg = aggregate([_o("t1", "a", resolved=1, tokens=10, wall_s=1.5, repeated_work=2),
                     _o("t2", "a", resolved=0, tokens=5, wall_s=0.5)])
    assert set(agg) == {"tasks", *INSTRUMENT_KEYS}
    assert agg["tasks"] == 2 and agg["resolve_rate"] == 0.5 and agg["tokens"] == 15
    assert agg["wall_s"] == 2.0 and agg["repeated_work"] == 2


def test_aggregate_of_nothing_is_null() -> None:
    agg = aggregate([])
    assert agg["tasks"] == 0 and all(agg[k] is None for k in INSTRUMENT_KEYS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=40))
def test_the_interval_holds_the_mean_and_is_reproducible(values: list[float]) -> None:
    lo, hi = bootstrap_ci(values, resamples=300)
    mean = sum(values) / len(values)
    assert lo <= mean + 1e-9 and mean - 1e-9 <= hi
    assert min(values) - 1e-9 <= lo <= hi <= max(values) + 1e-9
    assert bootstrap_ci(values, resamples=300) == (lo, hi)


def test_bootstrap_needs_values() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_compare_is_paired_and_oriented() -> None:
    a = [_o(f"t{i}", "a", resolved=1, repeated_work=0) for i in range(10)]
    b = [_o(f"t{i}", "b", resolved=0, repeated_work=3) for i in range(10)]
    b.append(_o("only-b", "b", resolved=1))
    outcomes = {"a": a, "b": b}
    r = compare("a", "b", outcomes, "resolve_rate")
    w = compare("a", "b", outcomes, "repeated_work")
    assert r.n == 10 and r.gain == 1.0 and r.verdict == "better"
    assert w.gain == 3.0 and w.verdict == "better"  # fewer repeats is better
    assert compare("b", "a", outcomes, "repeated_work").verdict == "worse"
    assert compare("a", "b", outcomes, "tokens").verdict == "same"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=30))
def test_comparison_is_antisymmetric(pairs: list[tuple[int, int]]) -> None:
    outcomes = {"a": [_o(f"t{i}", "a", resolved=x) for i, (x, _) in enumerate(pairs)],
                "b": [_o(f"t{i}", "b", resolved=y) for i, (_, y) in enumerate(pairs)]}
    ab, ba = compare("a", "b", outcomes, "resolve_rate"), compare("b", "a", outcomes, "resolve_rate")
    assert ab.gain == pytest.approx(-ba.gain)
    assert {ab.verdict, ba.verdict} in ({"same"}, {"better", "worse"})
