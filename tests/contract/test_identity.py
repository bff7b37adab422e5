import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.identity import Identity, digest
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
