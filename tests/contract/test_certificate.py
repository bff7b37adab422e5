"""The certificate hash chain: determinism, order independence, differences, corruption."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract import certificate as cert_mod
from frostline.contract.certificate import (
    DOMAIN,
    CertificateCorrupted,
    build,
    chain_digest,
    differences,
    entry,
    validate,
)
from frostline.store.records import SlotRecord


def slot(site: str, path: tuple[int, ...] = (), occ: int = 0, cap: str = "image.generate",
         result: object = None, attempt: int = 1, digest: str | None = None) -> SlotRecord:
    return SlotRecord("run-1", site, path, occ, cap,
                      digest or hashlib.sha256(f"{site}{path}{occ}".encode()).hexdigest(),
                      result if result is not None else {"ref": f"sha256:{'a' * 64}", "n": occ},
                      {"usd": 0.02}, attempt)


SLOTS = [
    slot("orchestrate/#0", cap="storyboard.plan", result={"shots": ["a", "b"]}),
    slot("orchestrate/#1", (0,), 0),
    slot("orchestrate/#1", (1,), 0),
    slot("orchestrate/#1", (2,), 0, attempt=2),
    slot("orchestrate/for#0.body/#0", (), 0, cap="review.visual"),
    slot("orchestrate/for#0.body/#0", (), 1, cap="review.visual"),
]


def test_chain_matches_its_definition():
    entries = [entry(s) for s in SLOTS]  # SLOTS is already in (σ, π, ω) order
    h = hashlib.sha256(DOMAIN).digest()
    for e in entries:
        h = hashlib.sha256(h + rfc8785.dumps(e)).digest()
    cert = build(SLOTS, "run-1", 2)
    assert cert["chain_digest"] == h.hex()
    assert cert["entries"] == 6
    assert cert["frozen_sites"] == {
        "orchestrate/#0": "storyboard.plan", "orchestrate/#1": "image.generate",
        "orchestrate/for#0.body/#0": "review.visual"}
    assert cert["run_id"] == "run-1" and cert["attempt"] == 2
    assert set(cert["items"]) == {"orchestrate/#0@:0", "orchestrate/#1@0:0", "orchestrate/#1@1:0",
                                  "orchestrate/#1@2:0", "orchestrate/for#0.body/#0@:0",
                                  "orchestrate/for#0.body/#0@:1"}
    assert chain_digest([]) == hashlib.sha256(DOMAIN).hexdigest()


def test_chain_is_deterministic_and_json_round_trips():
    a = build(SLOTS, "run-1", 2)
    b = build(list(SLOTS), "run-1", 2)
    assert a == b
    assert validate(json.loads(json.dumps(a)), "run-1") == a


@given(st.permutations(SLOTS))
def test_order_of_storage_does_not_matter(perm):
    assert build(perm, "run-1", 2) == build(SLOTS, "run-1", 2)


def test_path_order_is_numeric_not_textual():
    slots = [slot("s/#0", (10,)), slot("s/#0", (2,))]
    cert = build(slots, "r", 1)
    entries = [entry(slots[1]), entry(slots[0])]
    assert cert["chain_digest"] == chain_digest(entries)


def test_every_field_changes_the_chain():
    base = build(SLOTS, "run-1", 2)["chain_digest"]
    s = SLOTS[1]
    variants = [
        SlotRecord(s.run_id, s.site, s.path, s.occurrence, "image.edit", s.digest, s.result, s.usage, s.attempt),
        SlotRecord(s.run_id, s.site, s.path, s.occurrence, s.capability, "0" * 64, s.result, s.usage, s.attempt),
        SlotRecord(s.run_id, s.site, s.path, s.occurrence, s.capability, s.digest, {"other": 1}, s.usage, s.attempt),
        SlotRecord(s.run_id, s.site, s.path, s.occurrence, s.capability, s.digest, s.result, s.usage, 9),
        SlotRecord(s.run_id, s.site, (7,), s.occurrence, s.capability, s.digest, s.result, s.usage, s.attempt),
    ]
    for v in variants:
        changed = [*SLOTS[:1], v, *SLOTS[2:]]
        assert build(changed, "run-1", 2)["chain_digest"] != base
    # usage and commit time are not part of the chain (they are bookkeeping, not the prefix)
    same = SlotRecord(s.run_id, s.site, s.path, s.occurrence, s.capability, s.digest, s.result,
                      {"usd": 9.0}, s.attempt, committed_at=123.0)
    assert build([*SLOTS[:1], same, *SLOTS[2:]], "run-1", 2)["chain_digest"] == base


TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


@given(st.builds(dict, site=TEXT, path=st.lists(st.integers(0, 10**6), max_size=4),
                 occurrence=st.integers(0, 10**9), capability=TEXT, digest=TEXT,
                 result_digest=TEXT, attempt=st.integers(0, 10**6)))
def test_entry_encoding_is_rfc8785(e):
    assert cert_mod._canonical(e) == rfc8785.dumps(e)


def test_result_digest_ignores_key_order():
    assert cert_mod.result_digest({"a": 1, "b": [1, 2]}) == cert_mod.result_digest({"b": [1, 2], "a": 1})
    assert cert_mod.result_digest({"a": 1}) != cert_mod.result_digest({"a": 2})
    with pytest.raises(CertificateCorrupted):
        cert_mod.result_digest({"a": float("nan")})


def test_differences_name_identity_and_field():
    certified = build(SLOTS, "run-1", 2)
    s = SLOTS[2]
    tampered = SlotRecord(s.run_id, s.site, s.path, s.occurrence, s.capability, s.digest,
                          {"ref": "sha256:" + "b" * 64}, s.usage, s.attempt)
    now = [*SLOTS[:2], tampered, *SLOTS[3:5], slot("orchestrate/#2", attempt=3)]  # one dropped
    diffs = differences(certified, build(now, "run-1", 2))
    assert [(d["kind"], d["identity"]) for d in diffs] == [
        ("changed", "orchestrate/#1@1:0"),
        ("extra", "orchestrate/#2@:0"),
        ("missing", "orchestrate/for#0.body/#0@:1"),
    ]
    assert list(diffs[0]["fields"]) == ["result_digest"]
    assert diffs[1]["capability"] == "image.generate" and diffs[1]["attempt"] == 3
    assert differences(certified, build(SLOTS, "run-1", 2)) == []


@pytest.mark.parametrize("mutate, why", [
    (lambda c: "not a dict", "expected a JSON object"),
    (lambda c: [c], "expected a JSON object"),
    (lambda c: {k: v for k, v in c.items() if k != "chain_digest"}, "missing field"),
    (lambda c: {**c, "version": 99}, "unknown version"),
    (lambda c: {**c, "run_id": "other"}, "belongs to run"),
    (lambda c: {**c, "entries": 5}, "counts 5 entries"),
    (lambda c: {**c, "items": []}, "must be an object"),
    (lambda c: {**c, "chain_digest": "0" * 64}, "does not match"),
    (lambda c: {**c, "items": {**c["items"], "no-identity": {}}}, "malformed entry"),
    (lambda c: {**c, "items": {"orchestrate/#0@:0": "x"}, "entries": 1}, "malformed entry"),
])
def test_corrupted_certificates_are_clear_errors(mutate, why):
    good = build(SLOTS, "run-1", 2)
    bad = mutate(copy.deepcopy(good))
    with pytest.raises(CertificateCorrupted, match=why) as info:
        validate(bad, "run-1")
    assert "frostline cert" in info.value.message


def test_edited_certificate_entry_breaks_its_own_chain():
    good = build(SLOTS, "run-1", 2)
    bad = copy.deepcopy(good)
    bad["items"]["orchestrate/#0@:0"]["digest"] = "f" * 64
    with pytest.raises(CertificateCorrupted, match="does not match"):
        validate(bad, "run-1")
