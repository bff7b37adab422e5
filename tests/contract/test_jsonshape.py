"""What JSON frostline keeps: the nesting bound (exact below the limit, cheap above it), and
the characters no store holds (issue 26)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.jsonshape import (
    MAX_JSON_DEPTH,
    check_depth,
    check_storable,
    json_depth,
    storable_copy,
    storable_json,
)
from frostline.errors import ResultTooDeep, RunError, ValueNotStorable


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
_TEXT = st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))
STORABLE = st.recursive(st.none() | st.booleans() | st.integers() | st.text(_TEXT, max_size=3),
                        lambda kids: st.lists(kids, max_size=3)
                        | st.dictionaries(st.text(_TEXT, max_size=2), kids, max_size=3),
                        max_leaves=30)


def reference_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    return 0


@given(JSON)
def test_depth_matches_the_recursive_definition(value):
    assert json_depth(value) == reference_depth(value)


# issue 26: what no store can hold is refused by one check, the same on every store -----------
@pytest.mark.parametrize(("value", "reason", "at"), [
    ({"s": "a\x00b"}, "nul", 'the string at $["s"]'),
    ({"a\x00": 1}, "nul", 'the key "a\\u0000" of $'),
    ([1, ["x", "\ud800"]], "surrogate", "the string at $[1][1]"),
    ({"k": {"\udfff": 0}}, "surrogate", 'the key "\\udfff" of $["k"]'),
])
def test_issue26_nul_and_lone_surrogates_are_refused_with_where(value, reason, at):
    with pytest.raises(ValueNotStorable) as info:
        check_storable(value, "the result")
    assert info.value.fields["reason"] == reason and info.value.fields["at"] == at
    assert info.value.code == "value_not_storable"
    # The refusal itself is storable (it quotes paths, never the bad characters).
    storable_json(info.value.to_dict(), "the error")


def test_issue26_an_escaped_backslash_u0000_is_ordinary_text():
    text = storable_json({"s": "\\u0000"}, "args")  # a backslash, then u0000: no NUL
    assert json.loads(text) == {"s": "\\u0000"}
    assert storable_json({"s": "paired \U0001F600 é"}, "args")


def test_issue26_too_deep_and_not_json_are_the_same_refusal():
    for deep in (nested(MAX_JSON_DEPTH + 1), nested(50_000)):
        with pytest.raises(ValueNotStorable, match="deeper than 128") as info:
            check_storable(deep, "the event body")
        assert info.value.fields["reason"] == "too_deep"
    with pytest.raises(ResultTooDeep):
        check_storable(nested(300), "the result", too_deep=ResultTooDeep)
    with pytest.raises(ValueNotStorable) as info:
        check_storable({"x": float("nan")}, "args")
    assert info.value.fields["reason"] == "not_json"


def test_issue26_diagnostics_are_kept_with_a_replacement_character():
    error = {"message": "boom a\x00b \ud800", "a\x00": [nested(200)]}
    kept = storable_copy(error)
    assert kept["message"] == "boom a\ufffdb \ufffd" and "a\ufffd" in kept
    storable_json(kept, "the error")
    fine = {"message": "ok"}
    assert storable_copy(fine) is fine


@given(STORABLE)
def test_storable_json_is_json_dumps_for_storable_values(value):
    assert json.loads(storable_json(value, "v")) == value
