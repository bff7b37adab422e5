"""Waiting runs go on by themselves: once an answer is in, or a timer (or an event's timeout)
is due, the run's next attempt is queued as a resume job.

`wake` is what an answer does at once (the API routes call it after committing one), for
either queue: the in-process pool of the embedded default, or Procrastinate's, where a worker
runs it. `Resumer` is `frostline serve`'s own sweep on the embedded default: a thread that looks
at the waiting runs every `interval_s` and wakes those that are ready, so a timer is kept
across a restart of the server (its due time is in the store, from the wait's first reach).
Workers schedule a due timer's resume job themselves (`frostline.worker.tasks`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from frostline.embedded.answers import ready
from frostline.embedded.jobs import JobQueue, Submission, resume_spec
from frostline.errors import AlreadyQueued, FrostlineError
from frostline.store.base import Store

log = logging.getLogger("frostline.resumer")


def wake(store: Store, queue: JobQueue, run_id: str, now: float) -> Submission | None:
    """Queue the resume job of `run_id` if it waits and one of its waits is answered or due;
    None when it is not ready, or a job of the run is already queued or running."""
    run = store.get_run(run_id)
    if run is None or run.status != "waiting" or not ready(store, run_id, now):
        return None
    try:
        return queue.submit(store, resume_spec(run_id))
    except AlreadyQueued:
        return None


class Resumer:
    """Wakes the ready waiting runs of a store every `interval_s` seconds, on a thread.

    Example::

        resumer = Resumer(store, queue, interval_s=1.0)
        resumer.start()
        ...
        resumer.stop()
    """

    def __init__(self, store: Store, queue: JobQueue, *, interval_s: float = 1.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._queue = queue
        self._interval_s = interval_s
        self._clock = clock
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> list[str]:
        """Wake every ready waiting run once; returns the runs whose job was queued."""
        woken: list[str] = []
        now = self._clock()
        for run_id in self._store.waiting_runs():
            try:
                if wake(self._store, self._queue, run_id, now) is not None:
                    woken.append(run_id)
            except FrostlineError as exc:  # one run's trouble never stops the others
                log.warning("could not resume run %s: %s", run_id, exc.message)
        return woken

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="frostline-resumer",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stopped.wait(self._interval_s):
            try:
                self.sweep()
            except FrostlineError as exc:  # the store is down: try again next time
                log.warning("resumer sweep failed: %s", exc.message)
