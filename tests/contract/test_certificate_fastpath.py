"""The certificate's inlined hot paths produce exactly the bytes of its reference definition.

`build` and the full chain check (`validate`) fold entries without calling `entry` and
`chain_digest`, and parse identities without building an `Identity`; these properties hold
them equal to the reference (`entry` + `chain_digest`, RFC 8785 entries, `Identity.parse`) on
generated slots, including text that needs escaping and non-ASCII text.
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
import rfc8785
from hypothesis import assume, given
from hypothesis import strategies as st

from frostline.contract import certificate as cert_mod
from frostline.contract.certificate import (
    DOMAIN,
    CertificateCorrupted,
    build,
    chain_digest,
    entry,
    slot_digests,
    validate,
)
from frostline.contract.certificate_verify import compare, fast_match
from frostline.contract.identity import Identity
from frostline.contract.records import SlotRecord

TEXT = st.text(st.characters(codec="utf-8"), max_size=10)
SITE = st.text(st.characters(codec="utf-8"), min_size=1, max_size=10)
JSON_NO_FLOATS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(st.characters(codec="utf-8", max_codepoint=0xFFFF), max_size=5), inner,
        max_size=3),
    max_leaves=8)
SLOT = st.builds(
    lambda site, path, occ, cap, dig, result, attempt: SlotRecord(
        "run-p", site, tuple(path), occ, cap, dig, result, {"usd": 0.0}, attempt),
    SITE, st.lists(st.integers(0, 10**6), max_size=3), st.integers(0, 10**6), TEXT, TEXT,
    JSON_NO_FLOATS, st.integers(0, 10**6))
SLOTS = st.lists(SLOT, max_size=12, unique_by=lambda s: (s.site, s.path, s.occurrence))


def reference_chain(slots: list[SlotRecord]) -> str:
    """The chain as the module docstring defines it, with the RFC 8785 library throughout."""
    links = b""
    for s in sorted(slots, key=lambda s: (s.site, s.path, s.occurrence)):
        e = {"site": s.site, "path": list(s.path), "occurrence": s.occurrence,
             "capability": s.capability, "digest": s.digest,
             "result_digest": hashlib.sha256(rfc8785.dumps(s.result)).hexdigest(),
             "attempt": s.attempt}
        links += hashlib.sha256(rfc8785.dumps(e)).digest()
    return hashlib.sha256(hashlib.sha256(DOMAIN).digest() + links).hexdigest()


@given(SLOTS)
def test_build_equals_the_reference_chain(slots: list[SlotRecord]) -> None:
    cert = build(slots, "run-p", 1)
    ordered = sorted(slots, key=lambda s: (s.site, s.path, s.occurrence))
    assert cert["chain_digest"] == reference_chain(slots)
    assert cert["chain_digest"] == chain_digest(entry(s) for s in ordered)
    assert cert["entries"] == len(slots)
    assert list(cert["items"]) == [str(Identity(s.site, s.path, s.occurrence)) for s in ordered]
    for s in ordered:
        e = entry(s)
        assert cert["items"][str(Identity(s.site, s.path, s.occurrence))] == {
            **{k: e[k] for k in ("capability", "digest", "result_digest", "attempt")},
            "entry_digest": hashlib.sha256(rfc8785.dumps(e)).hexdigest()}
    frozen: dict[str, str] = {}
    for s in ordered:
        frozen.setdefault(s.site, s.capability)
    assert cert["frozen_sites"] == frozen


@given(SLOTS)
def test_full_check_accepts_exactly_the_built_chain(slots: list[SlotRecord]) -> None:
    cert = build(slots, "run-p", 1)
    # Reverse the items: the check must sort them back into (σ, π, ω) order (PostgreSQL's
    # jsonb does not keep object key order).
    cert["items"] = dict(reversed(list(cert["items"].items())))
    assert validate(cert, "run-p") == cert
    if slots:
        cert["chain_digest"] = hashlib.sha256(cert["chain_digest"].encode()).hexdigest()
        with pytest.raises(CertificateCorrupted, match="chain digest"):
            validate(cert, "run-p")


@given(st.lists(st.tuples(SITE, st.lists(st.integers(0, 10**6), max_size=3),
                          st.integers(0, 10**6), TEXT, TEXT, TEXT, st.integers(0, 10**6)),
                max_size=8))
def test_row_fold_equals_entry_bytes(rows: list[tuple]) -> None:  # type: ignore[type-arg]
    h = hashlib.sha256(cert_mod.DOMAIN_V1).digest()
    for row in rows:
        h = hashlib.sha256(h + cert_mod.entry_bytes(*row)).digest()
    # a version 1 chain links the entries' bytes themselves
    assert cert_mod._fold_rows_v1(rows) == h.hex()


IDENTITY_TEXT = st.text(st.sampled_from("ab/#@:.-0123+ _"), max_size=14)


@given(st.one_of(IDENTITY_TEXT, TEXT,
                 st.builds(lambda s, p, o: str(Identity(s, tuple(p), o)), SITE,
                           st.lists(st.integers(0, 99), max_size=3), st.integers(0, 99))))
def test_identity_parsing_equals_identity_parse(text: str) -> None:
    try:
        expected = Identity.parse(text).key
    except ValueError:
        with pytest.raises(ValueError, match="malformed identity"):
            cert_mod.parse_identity(text)
    else:
        assert cert_mod.parse_identity(text) == expected


def test_build_checks_types_before_hashing() -> None:
    bad = SlotRecord("run-p", "orchestrate/#0", (True,), 0, "c", "d", {}, {}, 1)
    with pytest.raises(CertificateCorrupted, match="path must be integers"):
        build([bad], "run-p", 1)
    bad = SlotRecord("run-p", "orchestrate/#0", (), 0, "c", "d", {1.5: object()}, {}, 1)
    with pytest.raises(CertificateCorrupted, match="not JSON"):
        build([bad], "run-p", 1)


def recorded(slots: list[SlotRecord]) -> list[SlotRecord]:
    """The slots as a store returns them: with the digests it recorded at commit time."""
    out = []
    for s in sorted(slots, key=lambda s: (s.site, s.path, s.occurrence)):
        rdigest, edigest = slot_digests(s, deep=True)
        out.append(dataclasses.replace(s, result_digest=rdigest, entry_digest=edigest))
    return out


@given(SLOTS)
def test_building_from_recorded_digests_equals_building_from_results(slots) -> None:
    assert build(recorded(slots), "run-p", 1) == build(slots, "run-p", 1, deep=True)


EDITS = st.sampled_from(["capability", "digest", "attempt", "result_digest", "entry_digest"])


@given(SLOTS, st.data())
def test_the_fast_check_accepts_exactly_what_the_store_recorded(slots, data) -> None:
    stored = recorded(slots)
    cert = build(stored, "run-p", 1)
    assert fast_match(cert, stored) == cert["frozen_sites"]
    assert compare(cert, stored, "run-p")["consistent"]
    # any order of the same slots: the full path sorts them, with the same verdict
    assert compare(cert, list(reversed(stored)), "run-p")["consistent"]
    assume(stored)
    i = data.draw(st.integers(0, len(stored) - 1))
    field = data.draw(EDITS)
    old = getattr(stored[i], field)
    new = old + 1 if isinstance(old, int) else old + "x"
    edited = [*stored[:i], dataclasses.replace(stored[i], **{field: new}), *stored[i + 1:]]
    assert fast_match(cert, edited) is None
    report = compare(cert, edited, "run-p")
    assert not report["consistent"] and report["deep"] is False
    assert [d["identity"] for d in report["differences"]] == [
        str(Identity(stored[i].site, stored[i].path, stored[i].occurrence))]
    assert field in report["differences"][0]["fields"]
    # one slot fewer or one more is seen too
    assert fast_match(cert, stored[:-1]) is None


@given(SLOTS)
def test_a_result_edited_after_commit_is_seen_by_the_deep_check_only(slots) -> None:
    stored = recorded(slots)
    assume(stored and stored[0].result != {"forged": True})
    cert = build(stored, "run-p", 1)
    forged = [dataclasses.replace(stored[0], result={"forged": True}), *stored[1:]]
    assert compare(cert, forged, "run-p")["consistent"]  # fast: the result is not read
    deep = compare(cert, forged, "run-p", deep=True)
    assert not deep["consistent"]
    assert set(deep["differences"][0]["fields"]) <= {"result_digest", "entry_digest"}
