"""`Store.submit`: the broker's typed writes, queued without waiting, durable in queue order."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from frostline.contract.identity import digest
from frostline.contract.records import CallStatus
from frostline.errors import FrostlineError, RunNotFound, StoreUnavailable
from frostline.store import Store, open_store
from frostline.store.writes import (
    WRITES,
    AppendEvent,
    AppendEvents,
    BeginCall,
    CommitCall,
    Decide,
    FailCall,
    FinishAttempt,
    PutCertificate,
    SetRunStatus,
    Write,
)
from frostline.testing import FaultyStore

from .helpers import CAP, ident, slot_for


def test_writes_resolve_with_what_the_blocking_methods_return(store: Store) -> None:
    store.create_run("r1", {})
    begin = store.submit(BeginCall("r1", 1, ident(), CAP, digest({"p": 1})))
    call_id = begin.result(timeout=30)
    assert [c.call_id for c in store.unresolved_calls("r1")] == [call_id]
    commit = store.submit(CommitCall(call_id, slot_for("r1", ident(), {"p": 1},
                                                                  {"v": 1}),
                                event=("executed", {"n": 1})))
    assert commit.result(timeout=30) == store.get_slot("r1", ident())
    seq = store.submit(AppendEvent("r1", "note", {"x": 1})).result(timeout=30)
    seqs = store.submit(AppendEvents("r1", [("a", {}), ("b", {})])).result(timeout=30)
    assert seqs == [seq + 1, seq + 2]
    assert store.submit(Decide("r1", "race:#0", 2)).result(timeout=30) == 2
    assert store.submit(Decide("r1", "race:#0", 5)).result(timeout=30) == 2
    failed = store.submit(BeginCall("r1", 1, ident(1), CAP, digest({})))
    store.submit(FailCall(failed.result(timeout=30), {"code": "x"})).result(timeout=30)
    assert {c.status for c in store.list_calls("r1")} == {CallStatus.COMMITTED,
                                                          CallStatus.FAILED}


def test_writes_become_durable_in_the_order_they_were_queued(store: Store) -> None:
    store.create_run("r1", {})
    futures = [store.submit(AppendEvent("r1", "n", {"i": i})) for i in range(200)]
    seqs = [f.result(timeout=30) for f in futures]
    assert seqs == sorted(seqs) and len(set(seqs)) == 200
    assert [e.data["i"] for e in store.list_events("r1")] == list(range(200))


def test_a_bad_write_fails_its_future_not_the_caller(store: Store) -> None:
    store.create_run("r1", {})
    not_json = store.submit(AppendEvent("r1", "n", {"x": object()}))
    with pytest.raises(FrostlineError, match="not JSON"):
        not_json.result(timeout=30)
    no_run = store.submit(BeginCall("nope", 1, ident(), CAP, digest({})))
    with pytest.raises(RunNotFound):
        no_run.result(timeout=30)
    # The writer carries on with the next write.
    assert store.submit(AppendEvent("r1", "ok", {})).result(timeout=30) > 0


@pytest.mark.parametrize("faulty", [False, True], ids=["sql", "ordered-thread"])
def test_an_attempts_end_can_be_queued_and_each_write_keeps_its_outcome(
        store: Store, faulty: bool) -> None:
    target: Store = FaultyStore(store, fail_reads=False, fail_writes=False) if faulty else store
    store.create_run("r1", {})
    store.start_attempt("r1", source="s", annotated="s", report={})
    cert = target.submit(PutCertificate("r1", 1, {"entries": 0}))
    finished = target.submit(FinishAttempt("r1", 1, status="succeeded",
                                   result={"x": 1}, stats={"executed": 0}))
    missing = target.submit(FinishAttempt("r1", 9, status="failed"))
    status = target.submit(SetRunStatus("r1", "succeeded"))
    assert cert.result(timeout=30) is None and status.result(timeout=30) is None
    record = finished.result(timeout=30)
    assert (record.status, record.result, record.stats) == ("succeeded", {"x": 1},
                                                            {"executed": 0})
    with pytest.raises(RunNotFound, match="no attempt 9"):
        missing.result(timeout=30)
    assert store.get_run("r1").status == "succeeded"
    assert store.list_certificates("r1") == [{"entries": 0}]
    assert store.get_attempt("r1", 1) == record


def test_only_a_write_object_can_be_submitted(store: Store) -> None:
    # What the type checker refuses, a caller without one is told about at once.
    with pytest.raises(TypeError, match=r"takes a write \(BeginCall, CommitCall.*not str"):
        store.submit("create_run")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes a write \(.*not tuple"):
        FaultyStore(store, fail_reads=False, fail_writes=False).submit(
            ("begin_call", "r1"))  # type: ignore[arg-type]


def test_a_closed_store_fails_the_future(store_url: str) -> None:
    store = open_store(store_url)
    store.create_run("r1", {})
    store.close()
    future = store.submit(AppendEvent("r1", "n", {}))
    with pytest.raises(StoreUnavailable, match="closed"):
        future.result(timeout=30)


def test_faulty_store_refuses_queued_writes_through_its_own_methods(store: Store) -> None:
    store.create_run("r1", {})
    faulty = FaultyStore(store, fail_reads=False, fail_writes=True)
    future: Future[int] = faulty.submit(BeginCall("r1", 1, ident(), CAP, digest({})))
    with pytest.raises(StoreUnavailable, match="injected write failure"):
        future.result(timeout=30)
    assert faulty.faults == 1 and store.list_calls("r1") == []
    faulty.fail_writes = False
    assert faulty.submit(BeginCall("r1", 1, ident(), CAP, digest({}))).result(timeout=30) > 0


def _every_write(run_id: str, call_id: int, failing_call: int) -> list[Write[Any]]:
    """One of each write class, in an order that lets each succeed on run `run_id`."""
    slot = slot_for(run_id, ident(), {"p": 1}, {"v": [1, "ü", None]})
    return [
        CommitCall(call_id, slot, event=("executed", {"n": 1})),
        FailCall(failing_call, {"code": "provider", "message": "no"}),
        AppendEvent(run_id, "note", {"x": 1.5}),
        AppendEvents(run_id, [("a", {"i": 0}), ("b", {"i": 1})]),
        Decide(run_id, "race:#0", {"winner": 2}),
        PutCertificate(run_id, 1, {"entries": 1}),
        FinishAttempt(run_id, 1, status="succeeded", invoked=["orchestrate/#0@0"],
                      result={"x": 1}, stats={"executed": 1}),
        SetRunStatus(run_id, "succeeded"),
    ]


def _stored(store: Store, run_id: str) -> Any:
    """What a run holds, without what differs between two runs by construction."""
    slots = [(s.identity, s.result, s.usage, s.result_digest) for s in store.list_slots(run_id)]
    calls = [(c.identity, c.status, c.error) for c in store.list_calls(run_id)]
    events = [(e.kind, e.data) for e in store.list_events(run_id)]
    attempt = store.get_attempt(run_id, 1)
    assert attempt is not None
    run = store.get_run(run_id)
    assert run is not None
    return (slots, calls, events, store.list_certificates(run_id),
            (attempt.status, attempt.invoked, attempt.result, attempt.stats), run.status)


def test_each_write_stores_the_same_through_its_sql_and_its_blocking_form(store: Store) -> None:
    """Every write class, submitted to the SQL store (its `sql` form, on the writer) and to a
    store that has only the blocking methods (its `apply` form): the same results, the same
    rows. A write class added without both forms, or with one that writes something else,
    fails here."""
    plain = FaultyStore(store, fail_reads=False, fail_writes=False)
    outcomes = {}
    for run_id, target in (("via-sql", store), ("via-apply", plain)):
        store.create_run(run_id, {})
        store.start_attempt(run_id, source="s", annotated="s", report={})
        call_id = target.submit(BeginCall(run_id, 1, ident(), CAP, digest({"p": 1}))).result(
            timeout=30)
        failing = target.submit(BeginCall(run_id, 1, ident(1), CAP, digest({}))).result(
            timeout=30)
        writes = _every_write(run_id, call_id, failing)
        assert {type(w) for w in writes} | {BeginCall} == set(WRITES)
        (slot, failed, seq, seqs, decided, cert, attempt, status) = [
            target.submit(w).result(timeout=30) for w in writes]
        assert seqs == [seq + 1, seq + 2]  # seqs are global: only their order compares
        outcomes[run_id] = ((slot.identity, slot.result, slot.result_digest), failed, decided,
                            cert, (attempt.status, attempt.result), status,
                            _stored(store, run_id))
    assert outcomes["via-sql"] == outcomes["via-apply"]


def test_the_interfaces_blocking_writes_are_their_write_submitted_and_waited_for(
        store: Store) -> None:
    """`Store`'s own blocking write methods (what a backend with only `submit` gets): each is
    its write, through the backend's `submit`, and returns what it resolves to."""
    store.create_run("r1", {})
    store.start_attempt("r1", source="s", annotated="s", report={})
    call_id = Store.begin_call(store, "r1", 1, ident(), CAP, digest({"p": 1}))
    assert [c.call_id for c in store.unresolved_calls("r1")] == [call_id]
    slot = Store.commit_call(store, call_id, slot_for("r1", ident(), {"p": 1}, {"v": 1}),
                             event=("executed", {"n": 1}))
    assert slot == store.get_slot("r1", ident())
    other = Store.begin_call(store, "r1", 1, ident(1), CAP, digest({}))
    Store.fail_call(store, other, {"code": "x"})
    seq = Store.append_event(store, "r1", "note", {})
    assert Store.append_events(store, "r1", [("a", {})]) == [seq + 1]
    assert Store.decide(store, "r1", "k", 3) == 3 and Store.decide(store, "r1", "k", 4) == 3
    Store.put_certificate(store, "r1", 1, {"entries": 1})
    record = Store.finish_attempt(store, "r1", 1, status="succeeded", result={"x": 1})
    Store.set_run_status(store, "r1", "succeeded")
    assert record == store.get_attempt("r1", 1) and record.result == {"x": 1}
    run = store.get_run("r1")
    assert run is not None and run.status == "succeeded"
    assert [c.status for c in store.list_calls("r1")] == [CallStatus.COMMITTED,
                                                          CallStatus.FAILED]
    assert [e.kind for e in store.list_events("r1")] == ["executed", "note", "a"]
    assert store.list_certificates("r1") == [{"entries": 1}]
    with pytest.raises(RunNotFound):
        Store.set_run_status(store, "nope", "failed")  # its error, raised to the caller
