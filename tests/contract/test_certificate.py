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
    entry,
    validate,
)
from frostline.contract.certificate_verify import differences
from frostline.contract.identity import Identity, digest
from frostline.contract.records import SlotRecord
from frostline.errors import RunNotFound
from frostline.runtime import certificates as stored
from frostline.store import Store


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
    # one SHA-256 over the domain's digest and every entry's link digest, in order
    links = b"".join(hashlib.sha256(rfc8785.dumps(e)).digest() for e in entries)
    chain = hashlib.sha256(hashlib.sha256(DOMAIN).digest() + links).hexdigest()
    cert = build(SLOTS, "run-1", 2)
    assert cert["chain_digest"] == chain
    assert cert["entries"] == 6
    assert cert["frozen_sites"] == {
        "orchestrate/#0": "storyboard.plan", "orchestrate/#1": "image.generate",
        "orchestrate/for#0.body/#0": "review.visual"}
    assert cert["run_id"] == "run-1" and cert["attempt"] == 2
    assert set(cert["items"]) == {"orchestrate/#0@:0", "orchestrate/#1@0:0", "orchestrate/#1@1:0",
                                  "orchestrate/#1@2:0", "orchestrate/for#0.body/#0@:0",
                                  "orchestrate/for#0.body/#0@:1"}
    assert chain_digest([]) == hashlib.sha256(hashlib.sha256(DOMAIN).digest()).hexdigest()


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
    line = cert_mod.entry_bytes(e["site"], e["path"], e["occurrence"], e["capability"],
                                e["digest"], e["result_digest"], e["attempt"])
    assert line == rfc8785.dumps(e)


JSON_NO_FLOATS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(st.characters(codec="utf-8", max_codepoint=0xFFFF), max_size=6), inner, max_size=4),
    max_leaves=12)


@given(JSON_NO_FLOATS)
def test_result_encoding_is_rfc8785_without_floats(value):
    assert cert_mod.canonical(value) == rfc8785.dumps(value)


def test_entry_types_are_checked():
    with pytest.raises(CertificateCorrupted, match="occurrence must be an integer"):
        cert_mod.entry_bytes("s", [], True, "c", "d", "r", 1)
    with pytest.raises(CertificateCorrupted, match="path must be integers"):
        cert_mod.entry_bytes("s", ["1"], 0, "c", "d", "r", 1)
    with pytest.raises(CertificateCorrupted, match="capability must be a string"):
        cert_mod.entry_bytes("s", [], 0, None, "d", "r", 1)


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
    assert list(diffs[0]["fields"]) == ["result_digest", "entry_digest"]
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


def test_edited_frozen_map_is_corruption():
    bad = copy.deepcopy(build(SLOTS, "run-1", 2))
    bad["frozen_sites"]["orchestrate/#0"] = "echo"
    with pytest.raises(CertificateCorrupted, match="frozen-site map"):
        validate(bad, "run-1")


def test_edited_certificate_entry_breaks_its_own_chain():
    good = build(SLOTS, "run-1", 2)
    bad = copy.deepcopy(good)
    bad["items"]["orchestrate/#0@:0"]["digest"] = "f" * 64
    with pytest.raises(CertificateCorrupted, match="does not match"):
        validate(bad, "run-1")


# ------------------------------------------------------------------------------ against a store


def _commit(store: Store, run_id: str, site: str, path: tuple[int, ...], occ: int,
            payload: dict[str, object], result: object, attempt: int = 1,
            cap: str = "image.generate") -> None:
    ident = Identity(site, path, occ)
    call = store.begin_call(run_id, attempt, ident, cap, digest(payload))
    store.commit_call(call, SlotRecord(run_id, site, path, occ, cap, digest(payload), result,
                                       {"usd": 0.02}, attempt))


def _populate(store: Store, run_id: str = "r1") -> None:
    store.create_run(run_id, {})
    _commit(store, run_id, "orchestrate/#0", (), 0, {"brief": "b"}, {"shots": ["a", "b", "c"]},
            cap="storyboard.plan")
    for i in range(3):
        _commit(store, run_id, "orchestrate/#1", (i,), 0, {"prompt": f"shot {i}"},
                {"ref": f"sha256:{i:064d}", "mime": "image/png", "width": 512, "score": 0.5})


def _raw_exec(store: Store, store_url: str, *statements: str) -> None:
    """Run SQL on the store's database behind its back (what an attacker or a bug would do)."""
    if store_url.startswith("sqlite"):
        import sqlite3

        conn = sqlite3.connect(store.path)  # type: ignore[attr-defined]
        try:
            for sql in statements:
                conn.execute(sql)
            conn.commit()
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)


def test_persist_then_verify_is_consistent(store: Store) -> None:
    _populate(store)
    cert = stored.persist(store, "r1", 1)
    assert cert["entries"] == 4
    assert store.list_certificates("r1")[-1] == cert
    report = stored.verify(store, "r1")
    assert report["consistent"] is True and report["differences"] == []
    assert report["entries"] == 4 and report["chain_digest"] == cert["chain_digest"]
    assert report["certificate"] == cert
    assert report["frozen_sites"] == {"orchestrate/#0": "storyboard.plan",
                                      "orchestrate/#1": "image.generate"}


def test_chain_is_the_same_on_both_backends_and_any_insertion_order(store: Store) -> None:
    store.create_run("r1", {})
    # commit in reverse order: the stored order must not matter
    for i in reversed(range(3)):
        _commit(store, "r1", "orchestrate/#1", (i,), 0, {"prompt": f"shot {i}"},
                {"ref": f"sha256:{i:064d}", "mime": "image/png", "width": 512, "score": 0.5})
    _commit(store, "r1", "orchestrate/#0", (), 0, {"brief": "b"}, {"shots": ["a", "b", "c"]},
            cap="storyboard.plan")
    expected = [
        SlotRecord("r1", "orchestrate/#0", (), 0, "storyboard.plan", digest({"brief": "b"}),
                   {"shots": ["a", "b", "c"]}, {}, 1),
        *[SlotRecord("r1", "orchestrate/#1", (i,), 0, "image.generate",
                     digest({"prompt": f"shot {i}"}),
                     {"ref": f"sha256:{i:064d}", "mime": "image/png", "width": 512, "score": 0.5},
                     {}, 1) for i in range(3)],
    ]
    assert stored.persist(store, "r1", 1)["chain_digest"] == build(expected, "r1", 1)["chain_digest"]


def test_new_commits_after_the_certificate_are_extra(store: Store) -> None:
    _populate(store)
    stored.persist(store, "r1", 1)
    _commit(store, "r1", "orchestrate/#2", (), 0, {"x": 1}, {"ok": True}, attempt=2, cap="echo")
    report = stored.verify(store, "r1")
    assert not report["consistent"]
    assert report["differences"] == [{"kind": "extra", "identity": "orchestrate/#2@:0",
                                      "capability": "echo", "attempt": 2}]
    stored.persist(store, "r1", 2)  # certified per attempt: the newest certificate wins
    assert stored.verify(store, "r1")["consistent"]


def test_run_without_certificate(store: Store) -> None:
    store.create_run("empty", {})
    assert stored.verify(store, "empty")["consistent"]
    _populate(store, "r2")
    report = stored.verify(store, "r2")
    assert not report["consistent"] and report["certificate"] is None
    assert {d["kind"] for d in report["differences"]} == {"extra"}


def test_unknown_run(store: Store) -> None:
    with pytest.raises(RunNotFound):
        stored.verify(store, "nope")
    with pytest.raises(RunNotFound):
        stored.persist(store, "nope", 1)


def test_tampered_slot_is_reported(store: Store, store_url: str) -> None:
    _populate(store)
    stored.persist(store, "r1", 1)
    _raw_exec(store, store_url,
              "DROP TRIGGER IF EXISTS slots_immutable_update"
              + ("" if store_url.startswith("sqlite") else " ON slots"),
              "UPDATE slots SET result = '{\"ref\": \"sha256:forged\"}' "
              "WHERE site = 'orchestrate/#1' AND path = '1'",
              "UPDATE slots SET digest = 'feed' WHERE site = 'orchestrate/#0'")
    # fast: the payload digest the store holds is not the certified one; the result is not
    # read, so its edit is not seen
    fast = stored.verify(store, "r1")
    assert not fast["consistent"] and fast["deep"] is False
    assert [d["identity"] for d in fast["differences"]] == ["orchestrate/#0@:0"]
    assert fast["differences"][0]["fields"] == {"digest": {
        "certified": digest({"brief": "b"}), "store": "feed"}}
    # deep: every result is hashed again, and the edited one differs too
    report = stored.verify(store, "r1", deep=True)
    assert not report["consistent"] and report["deep"] is True
    diffs = {d["identity"]: d for d in report["differences"]}
    assert set(diffs) == {"orchestrate/#0@:0", "orchestrate/#1@1:0"}
    assert list(diffs["orchestrate/#1@1:0"]["fields"]) == ["result_digest", "entry_digest"]
    assert diffs["orchestrate/#0@:0"]["fields"]["digest"] == {
        "certified": digest({"brief": "b"}), "store": "feed"}
    assert report["chain_digest"] != report["certificate"]["chain_digest"]


def test_deleted_slot_is_reported_missing(store: Store, store_url: str) -> None:
    _populate(store)
    stored.persist(store, "r1", 1)
    _raw_exec(store, store_url,
              "DROP TRIGGER IF EXISTS slots_immutable_delete"
              + ("" if store_url.startswith("sqlite") else " ON slots"),
              "DELETE FROM slots WHERE site = 'orchestrate/#1' AND path = '2'")
    report = stored.verify(store, "r1")
    assert report["differences"] == [{"kind": "missing", "identity": "orchestrate/#1@2:0",
                                      "capability": "image.generate", "attempt": 1}]


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', '{"version": 1}'])
def test_corrupted_stored_certificate_is_a_clear_error(store: Store, store_url: str,
                                                       body: str) -> None:
    _populate(store)
    stored.persist(store, "r1", 1)
    _raw_exec(store, store_url, f"UPDATE certificates SET body = '{body}'")
    with pytest.raises(CertificateCorrupted, match="run 'r1' is corrupted"):
        stored.verify(store, "r1")


def test_edited_certificate_is_corruption_not_a_difference(store: Store, store_url: str) -> None:
    _populate(store)
    cert = stored.persist(store, "r1", 1)
    cert["items"]["orchestrate/#0@:0"]["attempt"] = 5  # the certificate lies, the store does not
    body = json.dumps(cert).replace("'", "''")
    _raw_exec(store, store_url, f"UPDATE certificates SET body = '{body}'")
    with pytest.raises(CertificateCorrupted, match="does not match its own"):
        stored.verify(store, "r1")


def test_latest_fetches_one_certificate(store: Store, store_url: str) -> None:
    """`latest` reads the run's newest certificate alone (highest attempt; of one attempt's,
    the last written): an older certificate is never decoded, so one that is broken does not
    stand in the way."""
    _populate(store)
    for attempt in (1, 3, 2):
        stored.persist(store, "r1", attempt)
    _commit(store, "r1", "orchestrate/#2", (), 0, {"x": 1}, {"ok": True}, attempt=3, cap="echo")
    newest = stored.persist(store, "r1", 3)  # a second certificate of attempt 3, written last
    _raw_exec(store, store_url, "UPDATE certificates SET body = '[1]' WHERE attempt <> 3")
    assert stored.latest(store, "r1") == newest
    assert store.latest_certificate("r1") == newest
    assert stored.verify(store, "r1")["consistent"]
    store.create_run("none", {})
    assert stored.latest(store, "none") is None and store.latest_certificate("none") is None


def _v1_certificate(slots: list[SlotRecord], run_id: str, attempt: int) -> dict[str, object]:
    """A certificate as frostline wrote it before link digests (version 1): each link hashed
    the previous one and the entry's canonical JSON itself."""
    h = hashlib.sha256(cert_mod.DOMAIN_V1).digest()
    items: dict[str, dict[str, object]] = {}
    frozen: dict[str, str] = {}
    for s in sorted(slots, key=lambda s: (s.site, s.path, s.occurrence)):
        e = entry(s)
        h = hashlib.sha256(h + rfc8785.dumps(e)).digest()
        items[str(s.identity)] = {k: e[k] for k in ("capability", "digest", "result_digest",
                                                    "attempt")}
        frozen.setdefault(s.site, s.capability)
    return {"version": 1, "run_id": run_id, "attempt": attempt, "frozen_sites": frozen,
            "chain_digest": h.hex(), "entries": len(items), "items": items}


def test_a_version_1_certificate_still_verifies(store: Store, store_url: str) -> None:
    _populate(store)
    store.put_certificate("r1", 1, _v1_certificate(store.list_slots("r1"), "r1", 1))
    assert validate(stored.latest(store, "r1"), "r1")["version"] == 1
    for deep in (False, True):
        assert stored.verify(store, "r1", deep=deep)["consistent"]
    _raw_exec(store, store_url,
              "DROP TRIGGER IF EXISTS slots_immutable_update"
              + ("" if store_url.startswith("sqlite") else " ON slots"),
              "UPDATE slots SET digest = 'feed' WHERE site = 'orchestrate/#0'")
    report = stored.verify(store, "r1")
    assert [(d["identity"], list(d["fields"])) for d in report["differences"]] == [
        ("orchestrate/#0@:0", ["digest"])]
    edited = _v1_certificate(store.list_slots("r1"), "r1", 2)
    edited["items"]["orchestrate/#0@:0"]["attempt"] = 7  # type: ignore[index]
    store.put_certificate("r1", 2, edited)
    with pytest.raises(CertificateCorrupted, match="does not match its own entries"):
        stored.verify(store, "r1")
