"""Every Store method, on both backends."""

from __future__ import annotations

import hashlib

import pytest

from frostline.contract.identity import digest
from frostline.errors import (
    DefinitionError,
    FrostlineError,
    RunNotFound,
    StoreUnavailable,
)
from frostline.store import CallStatus, Store, open_store

from .helpers import CAP, call_and_commit, ident, slot_for


def test_runs(store: Store) -> None:
    run = store.create_run("r1", {"budget": {"usd": 1.0}}, owner="alice")
    assert (run.name, run.envelope, run.status, run.owner, run.kind) == (
        "r1", {"budget": {"usd": 1.0}}, "created", "alice", "script")
    key = run.run_id  # alice's r1 has a key of its own (names are per principal)
    store.create_run("g1", {}, kind="graph")
    assert store.get_run(key) == run
    assert store.get_run("missing") is None
    assert {r.name for r in store.list_runs()} == {"r1", "g1"}
    assert [r.run_id for r in store.list_runs(owner="alice")] == [key]
    assert len(store.list_runs(limit=1)) == 1
    store.set_run_status(key, "running")
    assert store.get_run(key).status == "running"  # type: ignore[union-attr]
    with pytest.raises(RunNotFound):
        store.set_run_status("nope", "running")
    with pytest.raises(FrostlineError, match="already exists"):
        store.create_run("r1", {}, owner="alice")
    assert store.get_run(key).envelope == {"budget": {"usd": 1.0}}  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["", "has space", "x" * 201, "tab\tid"])
def test_bad_run_ids_are_refused(store: Store, bad: str) -> None:
    with pytest.raises(DefinitionError):
        store.create_run(bad, {})


def test_bad_run_kind_and_envelope(store: Store) -> None:
    with pytest.raises(DefinitionError, match="script, graph"):
        store.create_run("r1", {}, kind="cron")
    with pytest.raises(DefinitionError):
        store.create_run("r1", [])  # type: ignore[arg-type]
    assert store.get_run("r1") is None


def test_attempts(store: Store) -> None:
    store.create_run("r1", {})
    a1 = store.start_attempt("r1", source="src1", annotated="ann1", report={"valid": True})
    a2 = store.start_attempt("r1", source="src2", annotated="ann2", report={"valid": False},
                             args={"brief": "a fox", "n": [1, 2]})
    assert (a1.number, a2.number) == (1, 2)
    assert a1.args is None and a2.args == {"brief": "a fox", "n": [1, 2]}
    assert a1.source_digest == hashlib.sha256(b"src1").hexdigest()
    assert a1.status == "running" and a1.finished_at is None and a1.stats == {}
    done = store.finish_attempt("r1", 1, status="succeeded", gate={"accepted": True},
                                invoked=["s@:0", "s@:1"], orphans=["t@:0"], result={"ok": 1},
                                error=None, stats={"executed": 2})
    assert done.status == "succeeded" and done.invoked == ("s@:0", "s@:1")
    assert done.orphans == ("t@:0",) and done.result == {"ok": 1} and done.gate == {"accepted": True}
    assert done.finished_at is not None and done.stats == {"executed": 2}
    assert store.list_attempts("r1") == [done, a2]
    assert store.get_attempt("r1", 2) == a2
    assert store.get_attempt("r1", 3) is None
    with pytest.raises(RunNotFound):
        store.finish_attempt("r1", 9, status="failed")
    with pytest.raises(RunNotFound):
        store.start_attempt("nope", source="", annotated="", report={})


def test_begin_commit_and_read_slots(store: Store) -> None:
    store.create_run("r1", {})
    i0, i1 = ident(0, (1,)), ident(0, (10,))
    call = store.begin_call("r1", 1, i0, CAP, digest({"p": 0}), idempotency_key="r1/x")
    pending = store.list_calls("r1")
    assert [(c.call_id, c.status, c.identity, c.idempotency_key) for c in pending] == [
        (call, CallStatus.PENDING, i0, "r1/x")]
    assert store.unresolved_calls("r1") == pending
    stored = store.commit_call(call, slot_for("r1", i0, {"p": 0}, {"url": "a"}))
    assert stored.result == {"url": "a"} and stored.identity == i0 and stored.committed_at > 0
    assert store.get_slot("r1", i0) == stored
    assert store.unresolved_calls("r1") == []
    assert store.list_calls("r1")[0].status is CallStatus.COMMITTED
    call_and_commit(store, "r1", i1, {"p": 1}, [1, 2])
    call_and_commit(store, "r1", ident(0, (), "a/#0"), {"p": 2}, None)
    # Sorted as identities: path (10,) after (1,), site "a/#0" first; a null result survives.
    assert [s.identity for s in store.list_slots("r1")] == [ident(0, (), "a/#0"), i0, i1]
    assert store.get_slot("r1", ident(0, (), "a/#0")).result is None  # type: ignore[union-attr]
    assert store.get_slot("r1", ident(5)) is None
    assert store.list_slots("other") == []


def test_begin_call_for_missing_run(store: Store) -> None:
    with pytest.raises(RunNotFound):
        store.begin_call("nope", 1, ident(), CAP, digest({}))


def test_commit_never_overwrites(store: Store) -> None:
    store.create_run("r1", {})
    first = call_and_commit(store, "r1", ident(), {"p": 1}, {"v": "first"})
    # Another call of the same identity (e.g. a concurrent worker) commits another result.
    again = store.begin_call("r1", 2, ident(), CAP, digest({"p": 1}))
    stored = store.commit_call(again, slot_for("r1", ident(), {"p": 1}, {"v": "second"},
                                               attempt=2))
    assert stored == first and stored.result == {"v": "first"} and stored.attempt == 1
    assert store.list_slots("r1") == [first]
    # Committing the same call twice is idempotent.
    assert store.commit_call(again, slot_for("r1", ident(), {"p": 1}, {"v": "third"})) == first


def test_commit_refuses_a_slot_that_is_not_the_calls(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(0), CAP, digest({"p": 1}))
    with pytest.raises(FrostlineError, match="not the call's"):
        store.commit_call(call, slot_for("r1", ident(1), {"p": 1}, 1))
    with pytest.raises(FrostlineError, match="not the call's"):
        store.commit_call(call, slot_for("r1", ident(0), {"p": 2}, 1))
    with pytest.raises(FrostlineError, match="no call"):
        store.commit_call(call + 100, slot_for("r1", ident(0), {"p": 1}, 1))
    assert store.list_slots("r1") == []
    assert store.list_calls("r1")[0].status is CallStatus.PENDING


def test_fail_call(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({}))
    store.fail_call(call, {"type": "ProviderError", "status": 400})
    [rec] = store.list_calls("r1")
    assert rec.status is CallStatus.FAILED and rec.error == {"type": "ProviderError", "status": 400}
    assert store.unresolved_calls("r1") == [] and store.list_slots("r1") == []
    with pytest.raises(FrostlineError, match="failed"):
        store.commit_call(call, slot_for("r1", ident(), {}, 1))
    with pytest.raises(FrostlineError, match="not pending"):
        store.fail_call(call, {})
    with pytest.raises(FrostlineError, match="no call"):
        store.fail_call(call + 100, {})
    # The identity stays outside the prefix and may execute again.
    call_and_commit(store, "r1", ident(), {}, "ok", attempt=2)
    assert store.get_slot("r1", ident()).result == "ok"  # type: ignore[union-attr]


def test_reconcile_abandon(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    rec = store.reconcile_call("r1", ident(), abandon=True)
    assert rec.call_id == call and rec.status is CallStatus.ABANDONED
    assert store.unresolved_calls("r1") == [] and store.list_slots("r1") == []
    [event] = store.list_events("r1")
    assert event.kind == "call.abandoned" and event.data["identity"] == str(ident())
    assert event.data["call_ids"] == [call]
    with pytest.raises(FrostlineError, match="no pending call"):
        store.reconcile_call("r1", ident(), abandon=True)
    # Abandonment permits one re-execution.
    call_and_commit(store, "r1", ident(), {"p": 1}, "again", attempt=2)


def test_reconcile_with_result(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    rec = store.reconcile_call("r1", ident(), abandon=False, result={"url": "known"},
                               usage={"usd": 0.02})
    assert rec.call_id == call and rec.status is CallStatus.RECONCILED
    slot = store.get_slot("r1", ident())
    assert slot is not None and slot.result == {"url": "known"} and slot.usage == {"usd": 0.02}
    assert slot.digest == digest({"p": 1}) and slot.capability == CAP and slot.attempt == 1
    [event] = store.list_events("r1")
    assert event.kind == "call.reconciled" and event.data["digest"] == digest({"p": 1})
    with pytest.raises(DefinitionError, match="not both"):
        store.reconcile_call("r1", ident(1), abandon=True, result=1)
    with pytest.raises(FrostlineError, match="no pending call"):
        store.reconcile_call("r1", ident(1), abandon=False, result=1)


def test_reconcile_resolves_every_pending_call_of_the_identity(store: Store) -> None:
    store.create_run("r1", {})
    a = store.begin_call("r1", 1, ident(), CAP, digest({}))
    b = store.begin_call("r1", 2, ident(), CAP, digest({}))
    other = store.begin_call("r1", 2, ident(1), CAP, digest({}))
    rec = store.reconcile_call("r1", ident(), abandon=False, result="r", attempt=2)
    assert rec.call_id == b
    assert [c.call_id for c in store.unresolved_calls("r1")] == [other]
    assert store.list_events("r1")[0].data["call_ids"] == [a, b]
    assert store.get_slot("r1", ident()).attempt == 2  # type: ignore[union-attr]


def test_artifacts_stored_once_and_byte_identical(store: Store) -> None:
    png = bytes(range(256)) * 40 + b"\x00\xff"
    ref = store.put_artifact(png, "image/png")
    assert ref == "sha256:" + hashlib.sha256(png).hexdigest()
    assert store.put_artifact(bytearray(png), "image/png") == ref
    data, mime = store.get_artifact(ref)  # type: ignore[misc]
    assert data == png and type(data) is bytes and mime == "image/png"
    assert store.get_artifact("sha256:" + "0" * 64) is None
    with pytest.raises(DefinitionError, match="malformed artifact ref"):
        store.get_artifact("md5:abc")
    with pytest.raises(DefinitionError):
        store.put_artifact("text", "text/plain")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError):
        store.put_artifact(b"x", "png")
    assert store.put_artifact(b"", "application/octet-stream").startswith("sha256:")


def test_certificates_and_decisions(store: Store) -> None:
    store.create_run("r1", {})
    store.put_certificate("r1", 1, {"chain": "abc", "entries": 2})
    store.put_certificate("r1", 2, {"chain": "def", "entries": 3})
    assert store.list_certificates("r1") == [{"chain": "abc", "entries": 2},
                                             {"chain": "def", "entries": 3}]
    assert store.list_certificates("r2") == []
    with pytest.raises(RunNotFound):
        store.put_certificate("r2", 1, {})
    assert store.decide("r1", "race:orchestrate/#0@", 2) == 2
    assert store.decide("r1", "race:orchestrate/#0@", 0) == 2  # first decision stands
    assert store.decide("r1", "other", {"w": [1]}) == {"w": [1]}
    with pytest.raises(RunNotFound):
        store.decide("r2", "k", 1)


def test_events_monotonic_and_paged(store: Store) -> None:
    seqs = [store.append_event("r1" if i % 2 else "r2", "tick", {"i": i}) for i in range(10)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 10
    events = store.list_events("r1")
    assert [e.data["i"] for e in events] == [1, 3, 5, 7, 9]
    assert all(e.kind == "tick" and e.run_id == "r1" for e in events)
    assert [e.data["i"] for e in store.list_events("r1", after=events[1].seq, limit=2)] == [5, 7]


def test_non_json_values_are_refused_without_writing(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({}))
    with pytest.raises(FrostlineError, match="not JSON"):
        store.commit_call(call, slot_for("r1", ident(), {}, {"v": float("nan")}))
    with pytest.raises(FrostlineError, match="not JSON"):
        store.append_event("r1", "x", {"b": b"bytes"})
    assert store.list_slots("r1") == [] and store.list_events("r1") == []
    assert store.unresolved_calls("r1")[0].call_id == call


def test_tokens(store: Store) -> None:
    token = store.create_token("alice")
    assert len(token) >= 40
    assert store.principal_for_token(token) == "alice"
    assert store.principal_for_token(token + "x") is None
    assert store.principal_for_token("") is None
    other = store.create_token("bob")
    assert other != token and store.principal_for_token(other) == "bob"
    with pytest.raises(DefinitionError):
        store.create_token(" ")


def test_tokens_are_stored_hashed(sqlite_store: Store) -> None:
    token = sqlite_store.create_token("alice")
    import sqlite3

    with sqlite3.connect(sqlite_store.path) as conn:  # type: ignore[attr-defined]
        rows = conn.execute("SELECT token_hash, principal FROM tokens").fetchall()
    assert rows == [(hashlib.sha256(token.encode()).hexdigest(), "alice")]


def test_closed_store_fails_closed(store_url: str) -> None:
    store = open_store(store_url)
    store.create_run("r1", {})
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreUnavailable, match="closed"):
        store.list_slots("r1")
    with pytest.raises(StoreUnavailable, match="closed"):
        store.begin_call("r1", 1, ident(), CAP, digest({}))
    with open_store(store_url) as again:
        assert again.get_run("r1") is not None


def test_store_is_durable_across_reopen(store_url: str) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {"x": 1})
        call_and_commit(store, "r1", ident(), {"p": 1}, {"url": "u"})
        ref = store.put_artifact(b"png-bytes", "image/png")
    with open_store(store_url) as store:
        assert store.get_slot("r1", ident()).result == {"url": "u"}  # type: ignore[union-attr]
        assert store.get_artifact(ref) == (b"png-bytes", "image/png")
