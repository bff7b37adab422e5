"""Which runs this process is executing right now.

An attempt or a repair holds its run for as long as it runs; a second one for the same run is
refused at once with 409 instead of queueing behind the store's run lock, and the run's detail
reports `executing`. The store's lock still guards against other processes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from frostline.errors import RunBusy

T = TypeVar("T")


class ExecutingRuns:
    """The set of run ids with an attempt or repair in flight in this process."""

    def __init__(self) -> None:
        self._runs: set[str] = set()
        self._lock = threading.Lock()

    def __contains__(self, run_id: object) -> bool:
        with self._lock:
            return run_id in self._runs

    def exclusively(self, run_id: str, action: Callable[[], T]) -> T:
        """Run `action` while `run_id` is marked executing; RunBusy if it already is."""
        with self._lock:
            if run_id in self._runs:
                raise RunBusy(f"run {run_id!r} is executing; retry when it has finished", run_id=run_id)
            self._runs.add(run_id)
        try:
            return action()
        finally:
            with self._lock:
                self._runs.discard(run_id)
