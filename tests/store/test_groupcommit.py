"""Group commit: concurrent writes share transactions; each caller gets its own outcome."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from frostline.contract.identity import digest
from frostline.errors import FrostlineError, RunNotFound, StoreUnavailable
from frostline.store import CallStatus, Store, open_store
from frostline.store.sql import SqlStore

from .helpers import CAP, Raw, eventually, ident, slot_for

THREADS = 32


class HeldWriter:
    """Park the writer thread inside a transaction so that writes pile up behind it."""

    def __init__(self, store: Store) -> None:
        assert isinstance(store, SqlStore)
        self.store = store
        self.release = threading.Event()
        self.thread = threading.Thread(target=store._write, args=("hold", self._hold))

    def _hold(self, conn: Any) -> None:
        self.release.wait(60)

    def __enter__(self) -> HeldWriter:
        self.batches_before = self.store.group_commit_stats[0]
        self.thread.start()
        eventually(lambda: self.store._writer._queue.qsize() == 0, what="writer to take the hold")
        return self

    def wait_queued(self, n: int) -> None:
        eventually(lambda: self.store._writer._queue.qsize() >= n, what=f"{n} queued writes")

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.thread.join()


def run_all(fns: list[Callable[[], Any]]) -> list[tuple[bool, Any]]:
    def wrap(fn: Callable[[], Any]) -> tuple[bool, Any]:
        try:
            return True, fn()
        except Exception as exc:
            return False, exc

    with ThreadPoolExecutor(len(fns)) as pool:
        futures = [pool.submit(wrap, fn) for fn in fns]
        return [f.result() for f in futures]


def test_queued_writes_share_one_transaction(store: Store) -> None:
    store.create_run("r1", {})
    with HeldWriter(store) as held, ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(store.begin_call, "r1", 1, ident(i), CAP, digest({"i": i}))
                   for i in range(THREADS)]
        held.wait_queued(THREADS)
        held.release.set()
        ids = [f.result() for f in futures]
    assert isinstance(store, SqlStore)
    # The hold's own transaction, then one transaction for all 32 writes.
    assert store.group_commit_stats[0] == held.batches_before + 2
    assert len(set(ids)) == THREADS
    calls = {c.call_id: c for c in store.list_calls("r1")}
    assert [calls[cid].identity for cid in ids] == [ident(i) for i in range(THREADS)]


def test_errors_reach_only_their_own_caller(store: Store) -> None:
    store.create_run("r1", {})
    ok_call = store.begin_call("r1", 1, ident(100), CAP, digest({}))
    fns: list[Callable[[], Any]] = []
    for i in range(THREADS):
        kind = i % 4
        if kind == 0:
            fns.append(lambda i=i: store.begin_call("r1", 1, ident(i), CAP, digest({"i": i})))
        elif kind == 1:
            fns.append(lambda i=i: store.begin_call(f"missing{i}", 1, ident(i), CAP, "d"))
        elif kind == 2:
            fns.append(lambda i=i: store.fail_call(10_000 + i, {}))
        else:
            fns.append(lambda i=i: store.append_event("r1", "tick", {"i": i}))
    fns.append(lambda: store.commit_call(ok_call, slot_for("r1", ident(100), {}, "won")))
    with HeldWriter(store) as held:
        results: list[tuple[bool, Any]] = []
        runner = threading.Thread(target=lambda: results.extend(run_all(fns)))
        runner.start()
        held.wait_queued(len(fns))
        held.release.set()
        runner.join()
    assert isinstance(store, SqlStore)
    assert store.group_commit_stats[0] == held.batches_before + 2
    for i, (ok, value) in enumerate(results[:THREADS]):
        kind = i % 4
        if kind == 1:
            assert not ok and isinstance(value, RunNotFound) and value.fields["run_id"] == f"missing{i}"
        elif kind == 2:
            assert not ok and isinstance(value, FrostlineError) and value.fields["call_id"] == 10_000 + i
        else:
            assert ok, value
    assert results[-1][0] and results[-1][1].result == "won"
    # Every successful write is durable and visible; nothing of the failed ones is.
    with open_store(store.url) as again:
        calls = again.list_calls("r1")
        assert sorted(c.identity for c in calls if c.status is CallStatus.PENDING) == sorted(
            ident(i) for i in range(0, THREADS, 4))
        assert sorted(e.data["i"] for e in again.list_events("r1")) == list(range(3, THREADS, 4))
        assert again.get_slot("r1", ident(100)).result == "won"  # type: ignore[union-attr]
        assert again.list_runs() == [again.get_run("r1")]


def test_32_threads_of_mixed_writes_are_all_durable(store: Store) -> None:
    store.create_run("r1", {})
    per_thread = 10

    def worker(t: int) -> list[int]:
        seqs = []
        for k in range(per_thread):
            i = ident(k, (t,))
            call = store.begin_call("r1", 1, i, CAP, digest({"t": t, "k": k}))
            if k % 3 == 0:
                store.fail_call(call, {"k": k})
            else:
                store.commit_call(call, slot_for("r1", i, {"t": t, "k": k}, {"t": t, "k": k}))
            seqs.append(store.append_event("r1", "done", {"t": t, "k": k}))
        return seqs

    with ThreadPoolExecutor(THREADS) as pool:
        seqs = [s for f in [pool.submit(worker, t) for t in range(THREADS)] for s in f.result()]
    assert len(set(seqs)) == THREADS * per_thread
    assert isinstance(store, SqlStore)
    _, writes = store.group_commit_stats
    assert writes >= THREADS * per_thread * 3
    with open_store(store.url) as again:
        slots = again.list_slots("r1")
        committed = [(t, k) for t in range(THREADS) for k in range(per_thread) if k % 3]
        assert sorted((s.path[0], s.occurrence) for s in slots) == committed
        assert all(s.result == {"t": s.path[0], "k": s.occurrence} for s in slots)
        statuses = [c.status for c in again.list_calls("r1")]
        assert statuses.count(CallStatus.FAILED) == THREADS * 4
        assert statuses.count(CallStatus.COMMITTED) == len(committed)
        events = again.list_events("r1")
        assert [e.seq for e in events] == sorted(seqs)


def test_concurrent_commits_of_one_identity(store: Store) -> None:
    store.create_run("r1", {})
    calls = [store.begin_call("r1", 1, ident(), CAP, digest({"p": 1})) for _ in range(THREADS)]
    barrier = threading.Barrier(THREADS)

    def commit(n: int) -> Any:
        barrier.wait()
        return store.commit_call(calls[n], slot_for("r1", ident(), {"p": 1}, {"winner": n}))

    results = run_all([lambda n=n: commit(n) for n in range(THREADS)])
    stored = [v for ok, v in results if ok]
    assert len(stored) == THREADS and len({repr(s) for s in stored}) == 1
    winner = stored[0]
    assert store.list_slots("r1") == [winner]
    assert winner.result == {"winner": winner.result["winner"]}
    assert {c.status for c in store.list_calls("r1")} == {CallStatus.COMMITTED}


def test_concurrent_commits_of_one_identity_from_two_stores(store_url: str) -> None:
    """Two store objects (two writer threads, two connections) race on one identity."""
    with open_store(store_url) as a, open_store(store_url) as b:
        a.create_run("r1", {})
        ids = [(s, s.begin_call("r1", 1, ident(), CAP, digest({}))) for s in (a, b) * 8]
        barrier = threading.Barrier(len(ids))

        def commit(n: int) -> Any:
            s, cid = ids[n]
            barrier.wait()
            return s.commit_call(cid, slot_for("r1", ident(), {}, n))

        results = run_all([lambda n=n: commit(n) for n in range(len(ids))])
        assert all(ok for ok, _ in results), results
        assert len({v.result for _, v in results}) == 1
        assert a.list_slots("r1") == b.list_slots("r1") == [results[0][1]]


def test_lost_writer_connection_fails_closed_then_recovers(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, SqlStore)
        store.create_run("r1", {})
        pid = store._writer._conn.info.backend_pid  # type: ignore[union-attr]
        raw = Raw(pg_url)
        try:
            raw.execute(f"SELECT pg_terminate_backend({pid})")
        finally:
            raw.close()
        with pytest.raises(StoreUnavailable) as info:
            store.begin_call("r1", 1, ident(), CAP, digest({}))
        assert info.value.fields["operation"] == "begin_call"
        assert info.value.fields["backend"] == "postgres"
        assert info.value.__cause__ is not None
        assert store.list_calls("r1") == []  # nothing was recorded
        # The next write reconnects.
        call = store.begin_call("r1", 1, ident(), CAP, digest({}))
        assert [c.call_id for c in store.unresolved_calls("r1")] == [call]


def test_lost_writer_connection_fails_a_whole_batch(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, SqlStore)
        store.create_run("r1", {})
        inside, release = threading.Event(), threading.Event()

        def park(conn: Any) -> None:  # the last write of the batch: the others ran before it
            inside.set()
            release.wait(60)

        with HeldWriter(store) as held:
            results: list[tuple[bool, Any]] = []
            fns: list[Callable[[], Any]] = [
                lambda i=i: store.begin_call("r1", 1, ident(i), CAP, digest({}))
                for i in range(8)]
            runner = threading.Thread(target=lambda: results.extend(run_all(fns)))
            runner.start()
            held.wait_queued(8)
            parker = threading.Thread(target=lambda: results.append(run_all(
                [lambda: store._write("park", park)])[0]))
            parker.start()
            held.wait_queued(9)
            held.release.set()  # the nine writes now run as one batch, up to the parked one
            assert inside.wait(30)
            pid = store._writer._conn.info.backend_pid  # type: ignore[union-attr]
            raw = Raw(pg_url)
            try:
                raw.execute(f"SELECT pg_terminate_backend({pid})")
            finally:
                raw.close()
            release.set()
            runner.join()
            parker.join()
        assert len(results) == 9
        assert all(not ok and isinstance(v, StoreUnavailable) for ok, v in results), results
        assert {v.fields["operation"] for _, v in results} == {"begin_call", "park"}
        assert store.list_calls("r1") == []  # the eight inserts did not outlive the batch
        # The next write reconnects.
        store.begin_call("r1", 1, ident(99), CAP, digest({}))
        assert len(store.list_calls("r1")) == 1


def test_a_poller_sees_every_event_exactly_once(store_url: str) -> None:
    """Readers page with after=seq while two stores append: no event may be skipped."""
    writers, per_writer = 4, 40
    with open_store(store_url) as a, open_store(store_url) as b:
        stop = threading.Event()
        seen: list[int] = []

        def poll() -> None:
            last = 0
            while True:
                done = stop.is_set()
                for event in a.list_events("r1", after=last):
                    seen.append(event.data["n"])
                    last = event.seq
                if done:
                    return

        def write(w: int) -> None:
            s = a if w % 2 else b
            for k in range(per_writer):
                s.append_event("r1", "tick", {"n": w * per_writer + k})

        poller = threading.Thread(target=poll)
        poller.start()
        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, range(writers)))
        stop.set()
        poller.join()
    assert sorted(seen) == list(range(writers * per_writer))


def test_a_write_from_inside_a_write_is_refused(sqlite_store: Store) -> None:
    assert isinstance(sqlite_store, SqlStore)
    inner: list[BaseException] = []

    def nested(conn: Any) -> None:
        try:
            sqlite_store.append_event("r1", "nested", {})
        except RuntimeError as exc:
            inner.append(exc)

    sqlite_store._write("outer", nested)
    assert "wait for itself" in str(inner[0])


def test_a_forked_child_cannot_use_the_parents_store(sqlite_store: Store) -> None:
    import os

    sqlite_store.create_run("r1", {})
    pid = os.fork()
    if pid == 0:  # the child: both a read and a write must refuse
        code = 0
        for op in (lambda: sqlite_store.get_run("r1"), lambda: sqlite_store.append_event("r1", "x", {})):
            try:
                op()
                code = 1
            except StoreUnavailable as exc:
                code |= 0 if "before a fork" in exc.message else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sqlite_store.list_events("r1") == []


def test_a_bug_in_one_write_reaches_its_caller_and_the_writer_lives_on(store: Store) -> None:
    assert isinstance(store, SqlStore)
    store.create_run("r1", {})
    with pytest.raises(ZeroDivisionError):
        store._write("buggy", lambda conn: 1 / 0)
    assert store.append_event("r1", "after", {}) > 0
    assert [e.kind for e in store.list_events("r1")] == ["after"]
