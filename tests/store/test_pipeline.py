"""PostgreSQL's group-commit writer pipelines a batch: BEGIN, the writes' statements and COMMIT
in one round trip, the results read after the COMMIT. Outcomes stay per write: a write that
needs its general path takes it (before later writes are answered), a failing statement sends
the batch through the plain path, where only its own write fails."""

from __future__ import annotations

import threading

import pytest

from frostline.contract.identity import digest
from frostline.errors import FrostlineError, RunNotFound
from frostline.store import open_store
from frostline.store.postgres import PostgresStore
from tests.store.helpers import CAP, Raw, ident, slot_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(pg_url, monkeypatch):
    entered = []
    real = PostgresStore.writer_pipeline

    def counting(self, conn):
        entered.append(threading.get_ident())
        return real(self, conn)

    monkeypatch.setattr(PostgresStore, "writer_pipeline", counting)
    with open_store(pg_url) as store:
        store.create_run("r1", {})
        yield store, entered


def test_a_sequential_call_travels_in_one_pipeline(pg):
    store, entered = pg
    begun = store.write_nowait("begin_call", "r1", 1, ident(0), CAP, digest({"x": 0})).result()
    slot = slot_for("r1", ident(0), {"x": 0}, {"ok": True})
    # the usual pair of a sequential script: this call's commit and the next call's record
    committed = store.write_nowait("commit_call", begun, slot, event=("executed", {"n": 0}))
    nxt = store.write_nowait("begin_call", "r1", 1, ident(1), CAP, digest({"x": 1}))
    assert committed.result().result == {"ok": True} and nxt.result() > begun
    seqs = store.write_nowait("append_event", "r1", "note", {"k": 1}).result()
    assert len(entered) >= 3
    assert [e.kind for e in store.list_events("r1")] == ["executed", "note"]
    assert store.list_events("r1")[-1].seq == seqs
    assert store.get_slot("r1", ident(0)).result == {"ok": True}


def test_a_write_needing_its_general_path_takes_it_in_order(pg):
    store, _ = pg
    failed = store.begin_call("r1", 1, ident(0), CAP, digest({"x": 0}))
    store.fail_call(failed, {"code": "provider"})
    slot = slot_for("r1", ident(0), {"x": 0}, {"ok": True})
    refused = store.write_nowait("commit_call", failed, slot)
    after = store.write_nowait("begin_call", "r1", 1, ident(1), CAP, digest({"x": 1}))
    with pytest.raises(FrostlineError, match="recorded as failed"):
        refused.result()
    assert after.result() > failed
    assert store.get_slot("r1", ident(0)) is None


def test_a_failing_statement_fails_only_its_own_write(pg):
    store, _ = pg
    first = store.write_nowait("begin_call", "r1", 1, ident(0), CAP, digest({"x": 0}))
    missing = store.write_nowait("begin_call", "nope", 1, ident(0), CAP, digest({"x": 0}))
    last = store.write_nowait("append_event", "r1", "note", {})
    with pytest.raises(RunNotFound):
        missing.result()
    assert first.result() > 0 and last.result() > 0
    assert [c.call_id for c in store.list_calls("r1")] == [first.result()]


def test_an_event_batch_travels_in_the_pipeline_of_the_record_it_precedes(pg, monkeypatch):
    """A graph's ledger batch (or a replay batch), then the next call's attempt record: one
    pipeline, one transaction, the events in order with ascending seqs."""
    store, entered = pg
    from frostline.store import groupcommit

    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)  # the batch waits for the record
    before, pipelines = store.group_commit_stats[0], len(entered)
    events = [("graph.state_entered", {"seq": i, "state": "S", "it's": "a\\b%s"})
              for i in range(1, 6)]
    batch = store.write_nowait("append_events", "r1", events)
    call_id = store.write_nowait("begin_call", "r1", 1, ident(0), CAP, digest({"x": 0})).result()
    seqs = batch.result()
    assert store.group_commit_stats[0] - before == 1 and len(entered) - pipelines == 1
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    stored = store.list_events("r1")
    assert [(e.kind, e.data) for e in stored] == events and [e.seq for e in stored] == seqs
    assert [c.call_id for c in store.list_calls("r1")] == [call_id]


def test_a_pipelined_batch_is_one_transaction(pg, monkeypatch):
    """No BEGIN or COMMIT is sent: the pipeline's statements up to its Sync are one
    transaction, so every row a batch writes carries the same transaction id."""
    store, entered = pg
    from frostline.store import groupcommit

    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)
    first = store.write_nowait("begin_call", "r1", 1, ident(0), CAP, digest({"x": 0})).result()
    pipelines = len(entered)
    commit = store.write_nowait("commit_call", first, slot_for("r1", ident(0), {"x": 0}, 1),
                                event=("executed", {"n": 0}))
    events = store.write_nowait("append_events", "r1", [("a", {}), ("b", {})])
    nxt = store.write_nowait("begin_call", "r1", 1, ident(1), CAP, digest({"x": 1})).result()
    assert commit.result().result == 1 and len(events.result()) == 2
    assert len(entered) - pipelines == 1
    raw = Raw(store.url)
    xids = {row[0] for row in raw.execute(
        "SELECT xmin::text FROM slots WHERE run_id = 'r1' UNION ALL "
        "SELECT xmin::text FROM events WHERE run_id = 'r1' UNION ALL "
        f"SELECT xmin::text FROM calls WHERE call_id IN ({first}, {nxt})")}
    raw.close()
    # the first record's own transaction came before; its commit update shares the batch's
    assert len(xids) == 1


def test_an_error_between_two_writes_commits_nothing_of_the_pipeline(pg, monkeypatch):
    """A Python error while a batch is being sent (after a first write's statements went out)
    sends the batch through the plain path; the pipeline's Sync must not have committed the
    first write already, or the plain path would write it twice."""
    from frostline.store import groupcommit

    store, _ = pg
    real = PostgresStore._append_event_pipe

    def failing(self, run_id, kind, data):
        send = real(self, run_id, kind, data)
        if kind != "boom":
            return send

        def raising(conn):
            raise RuntimeError("a write that cannot be sent")

        return raising

    monkeypatch.setattr(PostgresStore, "_append_event_pipe", failing)
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)  # both writes in one batch
    first = store.write_nowait("append_event", "r1", "first", {})
    boom = store.write_nowait("append_event", "r1", "boom", {})
    assert boom.result(timeout=60) > first.result(timeout=60)
    assert [e.kind for e in store.list_events("r1")] == ["first", "boom"]
