"""Per-thread read connections.

Neither sqlite3 nor psycopg connections should be shared by threads that query concurrently,
and the group-commit writer owns the only write connection. Readers therefore get one
connection per thread, opened on first use; connections of threads that have exited are closed
when the next one is opened, and `close_all` closes the rest when the store closes.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

C = TypeVar("C")


class ThreadConnections(Generic[C]):
    """One lazily opened connection per live thread.

    Usage::

        readers = ThreadConnections(connect=open_reader, close=lambda c: c.close())
        rows = readers.get().execute("SELECT 1").fetchall()
    """

    def __init__(self, connect: Callable[[], C], close: Callable[[C], None]) -> None:
        self._connect = connect
        self._close = close
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[tuple[weakref.ref[threading.Thread], C]] = []

    def get(self) -> C:
        """The calling thread's connection, opened on first use."""
        conn: C | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        conn = self._connect()
        self._local.conn = conn
        dead: list[C] = []
        with self._lock:
            keep = []
            for ref, other in self._all:
                thread = ref()
                if thread is None or not thread.is_alive():
                    dead.append(other)
                else:
                    keep.append((ref, other))
            keep.append((weakref.ref(threading.current_thread()), conn))
            self._all = keep
        for other in dead:
            self._quiet_close(other)
        return conn

    def discard(self) -> None:
        """Close the calling thread's connection (after an error); the next get reconnects."""
        conn: C | None = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            self._all = [(r, c) for r, c in self._all if c is not conn]
        self._quiet_close(conn)

    def close_all(self) -> None:
        with self._lock:
            conns, self._all = [c for _, c in self._all], []
        for conn in conns:
            self._quiet_close(conn)
        self._local = threading.local()

    def _quiet_close(self, conn: C) -> None:
        # Closing a broken connection must not mask the error that broke it.
        with contextlib.suppress(Exception):
            self._close(conn)
