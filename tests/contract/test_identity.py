import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.contract import identity as identity_mod
from frostline.contract.identity import Identity, canonical, digest
from frostline.errors import PayloadInvalid


def test_digest_is_canonical():
    assert digest({"b": 1, "a": [1.0, "x"]}) == digest({"a": [1, "x"], "b": 1.0})
    assert digest({"a": 1}) != digest({"a": 2})


def test_digest_rejects_non_json():
    with pytest.raises(PayloadInvalid):
        digest({"a": float("nan")})
    with pytest.raises(PayloadInvalid):
        digest({"a": 2**80})


sites = st.from_regex(r"[a-z_]{1,8}(\.[a-z_]{1,6})?(/(for|if|try)#[0-9]\.(body|orelse))*/#[0-9]{1,2}", fullmatch=True)


@given(sites, st.lists(st.integers(0, 99), max_size=4), st.integers(0, 1000))
def test_identity_text_round_trip(site, path, occ):
    ident = Identity(site, tuple(path), occ)
    assert Identity.parse(str(ident)) == ident


@pytest.mark.parametrize("bad", ["", "x", "a@b:c", "@:0", "s@1.-2:0", "s@:-1", "s@1..2:0"])
def test_identity_parse_rejects(bad):
    with pytest.raises(ValueError):
        Identity.parse(bad)


# The plain-payload fast path of `canonical` writes exactly RFC 8785 -------------------------
_ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
_KEYS = st.one_of(st.text(st.characters(codec="ascii"), max_size=6), _ANY_TEXT)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | _ANY_TEXT
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12)


def _reference(value: object) -> bytes | None:
    try:
        return bytes(rfc8785.dumps(value))
    except Exception:
        return None


@settings(max_examples=600, deadline=None)
@given(_JSON)
def test_canonical_equals_the_rfc8785_library(value: object) -> None:
    expected = _reference(value)
    if expected is None:
        with pytest.raises(PayloadInvalid):
            canonical(value)
    else:
        assert canonical(value) == expected


@pytest.mark.parametrize("value", [
    {"b": 1, "a": {"d": [True, None, "x"], "c": ""}},
    {"ctl": "\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\"\\/ \u2028\u2029"},
    {"emoji": "🦊 snow ❄", "nested": [[[]], {}]},
    {"edge": [2**53 - 1, -(2**53 - 1), 0, -1]},
])
def test_canonical_fast_path_on_plain_payloads(value: object) -> None:
    assert identity_mod._plain(value, 0)
    assert canonical(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [
    {"big": 2**53}, {"f": 1.5}, {"é": 1}, {"t": (1, 2)}, {1: "x"}, {"s": "\ud800"},
])
def test_values_outside_the_plain_subset_go_to_the_library(value: object) -> None:
    expected = _reference(value)
    if expected is None:
        with pytest.raises(PayloadInvalid):
            canonical(value)
    else:
        assert canonical(value) == expected
