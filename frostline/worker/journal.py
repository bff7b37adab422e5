"""A worker's own record of when it held each run: evidence that no run ran on two hosts at once.

Procrastinate's job lock and frostline's advisory run lock keep a run on one worker at a time;
the journal lets anyone check it afterwards without trusting either. Each worker appends a line
when it takes a run's lock and another when it stops acting on the run — before the lock is
released to the database, so the recorded interval always covers the real one. Lines go to a
file local to the worker (one `write` with O_APPEND, never buffered), so a worker that loses its
database still records when it let go; a worker killed outright leaves an `acquire` without a
`release`, and the kill time closes its interval.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from frostline.store.base import Store


class LockJournal:
    """Appends `{"t", "run_id", "event": "acquire"|"release", "worker", "pid"}` lines."""

    def __init__(self, path: str | os.PathLike[str], worker: str) -> None:
        self.path = Path(path)
        self.worker = worker
        self._lock = threading.Lock()

    def record(self, run_id: str, event: str) -> None:
        line = json.dumps({"t": time.time(), "run_id": run_id, "event": event,
                           "worker": self.worker, "pid": os.getpid()}) + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)

    @staticmethod
    def read(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
        try:
            text = Path(path).read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]


class JournaledStore:
    """A store whose run lock is recorded in a `LockJournal`; every other method is the
    wrapped store's own."""

    def __init__(self, inner: Store, journal: LockJournal) -> None:
        self._inner = inner
        self._journal = journal

    @contextlib.contextmanager
    def run_lock(self, run_id: str) -> Iterator[None]:
        with self._inner.run_lock(run_id):
            self._journal.record(run_id, "acquire")
            try:
                yield
            finally:
                self._journal.record(run_id, "release")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
