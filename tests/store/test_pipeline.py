"""PostgreSQL's group-commit writer pipelines a batch: the events lock and the writes'
statements as one transaction in one round trip (libpq's pipeline mode, prepared statements),
the results read after the commit. Outcomes stay per write: a write that needs its general
path takes it (before later writes are answered), a failing statement sends the batch through
the plain path, where only its own write fails; a batch is never written twice."""

from __future__ import annotations

import threading

import psycopg
import pytest

from frostline.contract.identity import digest
from frostline.errors import FrostlineError, RunNotFound, StoreUnavailable
from frostline.store import open_store
from frostline.store.postgres import PostgresStore
from frostline.store.writes import AppendEvent, AppendEvents, BeginCall, CommitCall
from tests.store.helpers import CAP, Raw, eventually, ident, slot_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(pg_url, monkeypatch):
    entered = []
    real = PostgresStore.writer_pipeline

    def counting(self, conn, forms):
        entered.append(threading.get_ident())
        return real(self, conn, forms)

    monkeypatch.setattr(PostgresStore, "writer_pipeline", counting)
    with open_store(pg_url) as store:
        store.create_run("r1", {})
        yield store, entered


def test_a_sequential_call_travels_in_one_pipeline(pg):
    store, entered = pg
    begun = store.submit(BeginCall("r1", 1, ident(0), CAP, digest({"x": 0}))).result()
    slot = slot_for("r1", ident(0), {"x": 0}, {"ok": True})
    # the usual pair of a sequential script: this call's commit and the next call's record
    committed = store.submit(CommitCall(begun, slot, event=("executed", {"n": 0})))
    nxt = store.submit(BeginCall("r1", 1, ident(1), CAP, digest({"x": 1})))
    assert committed.result().result == {"ok": True} and nxt.result() > begun
    seqs = store.submit(AppendEvent("r1", "note", {"k": 1})).result()
    assert len(entered) >= 3
    assert [e.kind for e in store.list_events("r1")] == ["executed", "note"]
    assert store.list_events("r1")[-1].seq == seqs
    assert store.get_slot("r1", ident(0)).result == {"ok": True}


def test_a_write_needing_its_general_path_takes_it_in_order(pg):
    store, _ = pg
    failed = store.begin_call("r1", 1, ident(0), CAP, digest({"x": 0}))
    store.fail_call(failed, {"code": "provider"})
    slot = slot_for("r1", ident(0), {"x": 0}, {"ok": True})
    refused = store.submit(CommitCall(failed, slot))
    after = store.submit(BeginCall("r1", 1, ident(1), CAP, digest({"x": 1})))
    with pytest.raises(FrostlineError, match="recorded as failed"):
        refused.result()
    assert after.result() > failed
    assert store.get_slot("r1", ident(0)) is None


def test_a_failing_statement_fails_only_its_own_write(pg):
    store, _ = pg
    first = store.submit(BeginCall("r1", 1, ident(0), CAP, digest({"x": 0})))
    missing = store.submit(BeginCall("nope", 1, ident(0), CAP, digest({"x": 0})))
    last = store.submit(AppendEvent("r1", "note", {}))
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
    batch = store.submit(AppendEvents("r1", events))
    call_id = store.submit(BeginCall("r1", 1, ident(0), CAP, digest({"x": 0}))).result()
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
    first = store.submit(BeginCall("r1", 1, ident(0), CAP, digest({"x": 0}))).result()
    pipelines = len(entered)
    commit = store.submit(CommitCall(first, slot_for("r1", ident(0), {"x": 0}, 1),
                                event=("executed", {"n": 0})))
    events = store.submit(AppendEvents("r1", [("a", {}), ("b", {})]))
    nxt = store.submit(BeginCall("r1", 1, ident(1), CAP, digest({"x": 1}))).result()
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


class _FailingSends:
    """The writer pipeline's libpq connection, failing its `fail_at`-th statement send."""

    def __init__(self, real, fail_at):
        self._real, self._fail_at, self.sent = real, fail_at, 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def send_query_prepared(self, name, values):
        self.sent += 1
        if self.sent == self._fail_at:
            raise psycopg.OperationalError("the connection broke while sending")
        self._real.send_query_prepared(name, values)


def test_a_failure_while_a_batch_is_sent_commits_nothing_of_it(pg, monkeypatch):
    """Sending fails after the events lock and a first write's statement went out: nothing
    of the batch may be committed, or the plain path (which runs it again) would write the
    first write twice."""
    from frostline.store import groupcommit

    store, _ = pg
    store.submit(AppendEvent("r1", "warm", {})).result()  # the pipeline exists
    pipe = store._hot_pipe
    failing = pipe._pg = _FailingSends(pipe._pg, fail_at=3)
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)  # both writes in one batch
    first = store.submit(AppendEvent("r1", "first", {}))
    second = store.submit(AppendEvent("r1", "second", {}))
    assert second.result(timeout=60) > first.result(timeout=60)
    assert failing.sent == 3
    assert [e.kind for e in store.list_events("r1")] == ["warm", "first", "second"]
    store.submit(AppendEvent("r1", "after", {})).result(timeout=60)
    assert store._hot_pipe is not pipe  # on a new connection


def test_a_connection_the_server_closed_between_batches_is_replaced(pg):
    """A server restart (here: the writer's backend terminated) between two batches shows
    before the next batch sends anything: the batch runs on a new connection, once."""
    store, _ = pg
    store.submit(AppendEvent("r1", "before", {})).result(timeout=60)
    pid = store._writer._conn.info.backend_pid
    raw = Raw(store.url)
    try:
        raw.execute(f"SELECT pg_terminate_backend({pid})")
        eventually(lambda: not raw.execute(
            f"SELECT 1 FROM pg_stat_activity WHERE pid = {pid}"), what="the backend to end")
    finally:
        raw.close()
    assert store.submit(AppendEvent("r1", "after", {})).result(timeout=60) > 0
    assert [e.kind for e in store.list_events("r1")] == ["before", "after"]
    assert store._writer._conn.info.backend_pid != pid


def test_a_parameter_the_pipeline_cannot_send_takes_the_plain_path(pg):
    """Parameters are encoded before anything is sent; one that cannot be sends the batch
    through the plain path, which reports the write's own error (a lone surrogate no store
    keeps: ValueNotStorable, issue 26)."""
    from frostline.errors import ValueNotStorable

    store, _ = pg
    ok = store.submit(AppendEvent("r1", "fine", {}))
    bad = store.submit(BeginCall("r1", 1, ident(0), CAP, "\ud800"))
    with pytest.raises(ValueNotStorable):
        bad.result(timeout=60)
    assert ok.result(timeout=60) > 0 and store.list_calls("r1") == []


def test_a_failure_after_the_commit_was_sent_fails_the_batch_and_writes_nothing_twice(
        pg, monkeypatch):
    """Once the Sync (the commit) is on its way, a failure leaves the outcome unknown: every
    write of the batch fails, and none runs again."""
    from frostline.store import groupcommit
    from frostline.store.pq_pipeline import HotPipeline

    store, _ = pg
    real = HotPipeline._read

    def answer_lost(self, syncs):
        real(self, syncs)  # the server committed and answered; the answer is lost
        raise psycopg.OperationalError("the connection broke while reading")

    monkeypatch.setattr(HotPipeline, "_read", answer_lost)
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)
    event = store.submit(AppendEvent("r1", "once", {}))
    record = store.submit(BeginCall("r1", 1, ident(0), CAP, digest({"x": 0})))
    for future in (event, record):
        with pytest.raises(StoreUnavailable, match="whether it is stored is not known") as err:
            future.result(timeout=60)
        assert err.value.fields["outcome"] == "unknown"
    monkeypatch.setattr(HotPipeline, "_read", real)
    assert [e.kind for e in store.list_events("r1")] == ["once"]
    assert len(store.list_calls("r1")) == 1
    assert store.submit(AppendEvent("r1", "after", {})).result(timeout=60) > 0


def test_the_pipeline_writes_what_the_general_path_writes(pg_url):
    """The same writes through the pipeline (queued) and through the general path (blocking),
    into two runs: every stored column is the same, strings, numbers and JSON included."""
    with open_store(pg_url) as store:
        odd = 'a "quoted" \\ back\\slash, {brace} — ünïcode ✓'
        payload = {"x": 1.5e-7, "s": odd, "big": 2 ** 52, "list": [None, True, {"k": []}]}
        for run_id, queued in (("piped", True), ("general", False)):
            store.create_run(run_id, {})
            store._clock = lambda: 1_700_000_000.123456789  # both forms read it apart

            def write(w, queued=queued):
                if queued:
                    return store.submit(w).result(timeout=60)
                return w.apply(store)  # the blocking method

            ident_ = ident(3, path=(2, 10), site=f"orchestrate/#{odd}")
            call_id = write(BeginCall(run_id, 2, ident_, CAP, digest(payload), odd))
            slot = slot_for(run_id, ident_, payload, payload, attempt=2,
                            usage={"usd": 0.1 + 0.2, "tokens": 7})
            stored = write(CommitCall(call_id, slot, event=(f"executed {odd}",
                                                            {"odd": odd, "n": 2 ** 53 + 1})))
            assert stored.result == payload and stored.usage == slot.usage
            write(AppendEvent(run_id, f"note {odd}", {"f": 0.1}))
            write(AppendEvents(run_id, [(f"batch {odd}", {"i": i}) for i in range(3)]))
        assert store._hot_pipe is not None and store._hot_pipe._prepared >= {
            b"frostline_begin_call", b"frostline_commit_call", b"frostline_insert_event",
            b"frostline_insert_events"}  # the queued writes did go through the pipeline
        raw = Raw(store.url)
        try:
            tables = {
                "calls": "site, path, occurrence, capability, digest, attempt, status, "
                         "idempotency_key, error::text, created_at, updated_at",
                "slots": "site, path, occurrence, capability, digest, result::text, "
                         "usage::text, attempt, committed_at, result_digest, entry_digest",
                "events": "kind, data::text, ts",
            }
            for table, columns in tables.items():
                piped, general = (raw.execute(f"SELECT {columns} FROM {table} WHERE run_id = "
                                              f"'{run_id}' ORDER BY 1, 2")
                                  for run_id in ("piped", "general"))
                assert piped and piped == general, table
        finally:
            raw.close()
