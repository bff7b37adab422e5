"""PostgreSQL run locks on idle sessions: an attempt takes its run's lock on a session another
attempt gave back (no new server process per attempt), and a session goes back only when it
holds nothing. Another store (another process, in effect) always sees the lock as it is."""

from __future__ import annotations

import psycopg
import pytest

from frostline.errors import RunBusy, StoreUnavailable
from frostline.store import open_store
from frostline.store.lock_sessions import LockSessions
from frostline.store.postgres import PostgresStore


def backend_pids(store: PostgresStore) -> set[int]:
    return {conn.info.backend_pid for conn in store._lock_sessions._idle}


def lockable(url: str, run_id: str) -> bool:
    """Whether another store can take `run_id`'s lock right now."""
    with open_store(url) as other:
        try:
            with other.run_lock(run_id):
                return True
        except RunBusy:
            return False


def test_a_released_lock_leaves_its_session_idle_for_the_next_attempt(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        with store.run_lock("r1"):
            assert not lockable(pg_url, "r1")
        first = backend_pids(store)
        assert len(first) == 1
        assert lockable(pg_url, "r1")  # the idle session holds nothing
        with store.run_lock("r2"):
            assert backend_pids(store) == set()  # the same session, taken again
            assert not lockable(pg_url, "r2")
        assert backend_pids(store) == first


def test_concurrent_locks_take_distinct_sessions(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        with store.run_lock("r1"), store.run_lock("r2"), store.run_lock("r3"):
            pass
        assert len(backend_pids(store)) == 3
        with store.run_lock("r1"), pytest.raises(RunBusy), store.run_lock("r1"):
            pass
        assert len(backend_pids(store)) == 3  # a refused try holds nothing: it went back
        assert lockable(pg_url, "r1")


def test_a_failing_attempt_closes_its_session_and_releases_the_lock(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        with pytest.raises(KeyError), store.run_lock("r1"):
            raise KeyError("the attempt failed")
        assert backend_pids(store) == set()
        assert lockable(pg_url, "r1")


def test_an_idle_session_the_server_ended_is_replaced(pg_url: str) -> None:
    with open_store(pg_url) as store, psycopg.connect(pg_url, autocommit=True) as admin:
        assert isinstance(store, PostgresStore)
        with store.run_lock("a"), store.run_lock("b"):  # two sessions go back idle
            pass
        ended = backend_pids(store)
        assert len(ended) == 2
        for pid in ended:  # what a server restart does to idle sessions
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with store.run_lock("r1"):
            assert not lockable(pg_url, "r1")
        assert lockable(pg_url, "r1")
        assert not backend_pids(store) & ended


def test_closing_the_store_closes_idle_sessions(pg_url: str) -> None:
    store = open_store(pg_url)
    assert isinstance(store, PostgresStore)
    with store.run_lock("r1"):
        pass
    idle = list(store._lock_sessions._idle)
    store.close()
    assert idle and all(conn.closed for conn in idle)
    with pytest.raises(StoreUnavailable, match="closed"), store.run_lock("r1"):
        pass


def test_idle_sessions_are_bounded(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        runs = [f"r{i}" for i in range(LockSessions.IDLE_MAX + 3)]
        held = [store.run_lock(run) for run in runs]
        for lock in held:
            lock.__enter__()
        for lock in reversed(held):
            lock.__exit__(None, None, None)
        assert len(backend_pids(store)) == LockSessions.IDLE_MAX
        assert all(lockable(pg_url, run) for run in runs)
