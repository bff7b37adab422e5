"""Idle PostgreSQL sessions for run locks.

A run's lock is a session-level advisory lock (see `PostgresStore.run_lock`): it lives as long
as the session that took it, so each attempt holds a session for its whole length. Opening one
per attempt costs a server process and a few milliseconds; keeping the sessions of finished
attempts idle lets the next attempt lock on one of them instead.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import pq


class LockSessions:
    """Sessions for run locks, kept idle between attempts.

    Usage::

        sessions = LockSessions(connect)
        conn, new = sessions.take()
        ...  # lock, run the attempt, unlock
        sessions.give_back(conn, reuse=unlocked)

    A session goes back only when it holds no lock (its unlock answered true) and is idle
    outside a transaction; anything else is closed, which releases whatever it held.
    """

    IDLE_MAX = 8  # more concurrent attempts than that open (and close) their own

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self, *, new: bool = False) -> tuple[psycopg.Connection[Any], bool]:
        """A session (an idle one unless `new`) and whether it is new."""
        if not new:
            with self._lock:
                if self._idle:
                    return self._idle.pop(), False
        return self._connect(), True

    def give_back(self, conn: psycopg.Connection[Any], *, reuse: bool) -> None:
        if reuse and not (conn.closed or conn.broken) and (
                conn.info.transaction_status == pq.TransactionStatus.IDLE):
            with self._lock:
                if not self._closed and len(self._idle) < self.IDLE_MAX:
                    self._idle.append(conn)
                    return
        with contextlib.suppress(psycopg.Error, OSError):
            conn.close()

    def drop_idle(self) -> None:
        """Close every idle session (one failed: the server may have ended them all)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(psycopg.Error, OSError):
                conn.close()

    def close_all(self) -> None:
        with self._lock:
            self._closed = True
        self.drop_idle()
