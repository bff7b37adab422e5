"""Waiting runs go on by themselves: once an answer is in, or a timer (or an event's timeout)
is due, the run's next attempt is queued as a resume job.

`wake` is what an answer does at once (the API routes call it after committing one), for
either queue: the in-process pool of the embedded default, or Procrastinate's, where a worker
runs it. `Resumer` is `frostline serve`'s own sweep: a thread that looks at the waiting runs
every `interval_s` and wakes those that are ready, so a timer is kept across a restart of the
server (its due time is in the store, from the wait's first reach). Workers also schedule a
due timer's resume job themselves (`frostline.worker.tasks`), with their fair priority; when it
is due it starts only while its owner is within the configuration's executing limit, and is
scheduled again a moment later otherwise.

A resume is admitted under its owner's limits like any attempt: it takes one of the owner's
executing slots, and when they are all taken nothing is queued now — the run stays ready, and
the sweep queues its resume once a slot is free. So answers (however many) never give one
principal more jobs than its limit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.contract.status import RunStatus
from frostline.embedded.answers import ready
from frostline.embedded.jobs import JobQueue, Submission, resume_spec
from frostline.embedded.limits import LimitExceeded, PrincipalLimits
from frostline.errors import AlreadyQueued, FrostlineError
from frostline.store.base import Store

log = logging.getLogger("frostline.resumer")


def wake(store: Store, queue: JobQueue, run_id: str, now: float, *,
         limits: PrincipalLimits | None = None) -> Submission | None:
    """Queue the resume job of `run_id` if it waits and one of its waits is answered or due,
    in one of its owner's executing slots under `limits`; None when it is not ready, a job of
    the run is already queued or running, or the owner has no free slot (the sweep tries
    again)."""
    run = store.get_run(run_id)
    if run is None or run.status != RunStatus.WAITING or not ready(store, run_id, now):
        return None
    try:
        if limits is None:
            return queue.submit(store, resume_spec(run_id))
        owner = run.owner or LOCAL_PRINCIPAL
        with limits.job_slot(owner, lambda: queue.owned_jobs(owner)):
            return queue.submit(store, resume_spec(run_id))
    except (AlreadyQueued, LimitExceeded):
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
                 clock: Callable[[], float] = time.time,
                 limits: PrincipalLimits | None = None) -> None:
        self._store = store
        self._queue = queue
        self._limits = limits
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
                if wake(self._store, self._queue, run_id, now,
                        limits=self._limits) is not None:
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
