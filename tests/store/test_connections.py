"""Per-thread read connections: one per live thread, closed after their thread exits."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from frostline.store.connections import ThreadConnections


def test_one_connection_per_thread_and_dead_threads_are_cleaned_up(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    conns = ThreadConnections(lambda: sqlite3.connect(db, check_same_thread=False),
                              lambda c: c.close())
    mine = conns.get()
    assert conns.get() is mine
    theirs: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: theirs.append(conns.get()))
    worker.start()
    worker.join()
    assert theirs[0] is not mine
    theirs[0].execute("SELECT 1")  # still open: nobody asked for a connection since
    done = threading.Thread(target=conns.get)  # the next new connection reaps the dead one
    done.start()
    done.join()
    with pytest.raises(sqlite3.ProgrammingError):
        theirs[0].execute("SELECT 1")
    mine.execute("SELECT 1")
    conns.discard()
    with pytest.raises(sqlite3.ProgrammingError):
        mine.execute("SELECT 1")
    again = conns.get()
    assert again is not mine
    conns.close_all()
    with pytest.raises(sqlite3.ProgrammingError):
        again.execute("SELECT 1")
