"""The mutant verdict and the visible/hidden split of its tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.coding.tasks.verdict import (
    MAX_HIDDEN_PASSING,
    Run,
    judge,
    split_tests,
)

tests_ = st.frozensets(st.sampled_from([f"t::{i}" for i in range(20)]), max_size=20)


def test_kept_when_killed_stably_and_narrowly() -> None:
    runs = [Run(frozenset({"a"}))] * 3
    v = judge(10, runs)
    assert v.kept and v.reason == "kept" and v.failing == {"a"}


@pytest.mark.parametrize(("runs", "reason"), [
    ([Run(frozenset())], "survived"),
    ([Run(frozenset({"a"})), Run(frozenset({"a", "b"}))], "unstable"),
    ([Run(frozenset({"a", "b", "c", "d"}))], "too_broad"),
    ([Run(frozenset({"a"})), Run(frozenset(), "timeout")], "timeout"),
    ([Run(frozenset(), "collection_error")], "collection_error"),
])
def test_rejections_name_their_reason(runs: list[Run], reason: str) -> None:
    v = judge(10, runs)
    assert not v.kept and v.reason == reason


def test_the_thirty_percent_bound_is_inclusive() -> None:
    assert judge(10, [Run(frozenset({"a", "b", "c"}))]).kept
    assert not judge(10, [Run(frozenset({"a", "b", "c", "d"}))]).kept


def test_judge_needs_a_run() -> None:
    with pytest.raises(ValueError):
        judge(10, [])


@given(st.integers(1, 40), st.lists(tests_, min_size=1, max_size=3))
def test_kept_implies_every_rule(total: int, sets: list[frozenset[str]]) -> None:
    v = judge(total, [Run(s) for s in sets])
    if v.kept:
        assert sets[0] and all(s == sets[0] for s in sets)
        assert len(sets[0]) <= 0.3 * total


@given(st.text(min_size=1, max_size=8), tests_.filter(bool), tests_)
def test_split_partitions_without_leaking(task: str, failing: frozenset[str],
                                          covering: frozenset[str]) -> None:
    visible, hidden = split_tests(task, failing, covering)
    assert visible and set(visible) <= failing
    assert not set(visible) & set(hidden)
    assert failing <= set(visible) | set(hidden)
    assert len(visible) == max(1, (len(failing) + 1) // 2)
    assert len(set(hidden) - failing) <= MAX_HIDDEN_PASSING
    assert split_tests(task, failing, covering) == (visible, hidden)


def test_one_failing_test_and_no_guard_leaves_nothing_hidden() -> None:
    assert split_tests("t", {"a"}, {"a"}) == (("a",), ())
