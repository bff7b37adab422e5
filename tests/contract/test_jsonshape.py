"""The nesting bound on kept JSON: exact below the limit, cheap above it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.jsonshape import MAX_JSON_DEPTH, check_depth, json_depth
from frostline.errors import ResultTooDeep, RunError


def nested(depth: int) -> object:
    value: object = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [0, 1, 2, 17, MAX_JSON_DEPTH])
def test_depth_is_exact_up_to_the_limit(depth):
    assert json_depth(nested(depth)) == depth
    check_depth(nested(depth), "the result")


def test_past_the_limit_is_refused_with_a_clear_error():
    with pytest.raises(ResultTooDeep, match="deeper than 128") as info:
        check_depth(nested(MAX_JSON_DEPTH + 1), "the result of orchestrate/#0@:0")
    assert isinstance(info.value, RunError) and info.value.fields["limit"] == MAX_JSON_DEPTH


def test_a_very_deep_value_is_walked_only_to_the_limit():
    assert json_depth(nested(50_000)) == MAX_JSON_DEPTH + 1


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=2), kids, max_size=3), max_leaves=30)


def reference_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    return 0


@given(JSON)
def test_depth_matches_the_recursive_definition(value):
    assert json_depth(value) == reference_depth(value)
