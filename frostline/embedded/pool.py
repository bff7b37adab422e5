"""The embedded default's queue: a bounded pool of threads in the serving process.

`frostline serve` on the SQLite default has no job engine to hand work to, yet a request must
never wait for a script (a real image call takes seconds to a minute). The pool runs the same
jobs as a `frostline worker` would, at most `workers` at a time, and records them in the
store the same way, so the API, `?wait=` and the event stream behave alike on both backends.

Queued jobs live in memory: a restart loses them, and says so. When a pool starts it closes
what the previous process left open — every job of the store without a terminal event is
marked `job.interrupted`, and every attempt still marked running (with no live process holding
its run) is closed as interrupted; the calls it dispatched follow the crash rules (a pending
side-effecting call without an idempotency key leaves the run unresolved until reconciled).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from frostline.embedded.jobs import (
    HandBack,
    JobBody,
    JobSpec,
    Observations,
    QueueStats,
    Submission,
    next_attempt,
    open_jobs,
    record_queued,
    run_job,
)
from frostline.errors import AlreadyQueued, RunBusy
from frostline.store.base import Store

log = logging.getLogger("frostline.pool")

DEFAULT_WORKERS = 2
MAX_RUNS_SCANNED = 1_000_000


@dataclass
class _Entry:
    spec: JobSpec
    queued_at: float
    owner: str | None = None  # of the job's run
    started_at: float | None = None


class LocalPool:
    """Runs jobs on at most `workers` threads of this process.

    Usage::

        pool = LocalPool(store, host_body(providers, runner), workers=2)
        submission = pool.submit(store, JobSpec("attempt", "r1", {"source": src}))
    """

    def __init__(self, store: Store, body: JobBody, *, workers: int = DEFAULT_WORKERS,
                 name: str = "serve", clock: Any = time.time) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker thread")
        self.store = store
        self.name = name
        self.size = workers
        self._body = body
        self._clock = clock
        self._lock = threading.Lock()
        self._jobs: dict[str, _Entry] = {}  # run id → its queued or running job
        self._started = Observations()
        self._runs = Observations()
        self._since = clock()
        self.interrupted = close_interrupted(store)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="frostline-pool")

    def submit(self, store: Store, spec: JobSpec) -> Submission:
        run = store.get_run(spec.run_id)
        with self._lock:
            held = self._jobs.get(spec.run_id)
            if held is not None:
                raise AlreadyQueued(
                    f"run {spec.run_id!r} is executing a job ({held.spec.kind} {held.spec.ticket}"
                    "); retry when it has finished", run_id=spec.run_id, job=held.spec.ticket)
            self._jobs[spec.run_id] = _Entry(spec, self._clock(),
                                             None if run is None else run.owner)
        try:
            submission = record_queued(store, spec, attempt=next_attempt(
                store, spec.run_id, spec.kind, spec.params))
            self._executor.submit(self._run, spec)
        except BaseException:
            with self._lock:
                self._jobs.pop(spec.run_id, None)
            raise
        return submission

    def _run(self, spec: JobSpec) -> None:
        with self._lock:
            entry = self._jobs[spec.run_id]
            entry.started_at = self._clock()
            self._started.add(entry.started_at - entry.queued_at)
        try:
            run_job(self.store, spec, self._body, worker=self.name)
        except HandBack as exc:
            self.store.append_event(spec.run_id, "job.interrupted", {
                "job": spec.ticket, "kind": spec.kind, "worker": self.name,
                "error": {"code": "interrupted", "message": str(exc)}})
        except Exception:  # the store failed while recording: logged, the thread lives on
            log.exception("job %s of run %s could not be recorded", spec.ticket, spec.run_id)
        finally:
            with self._lock:
                done = self._jobs.pop(spec.run_id)
                if done.started_at is not None:
                    self._runs.add(self._clock() - done.started_at)

    def owned_jobs(self, owner: str) -> int:
        with self._lock:
            return sum(1 for e in self._jobs.values() if e.owner == owner)

    def workers(self) -> list[dict[str, Any]]:
        with self._lock:
            running = [e for e in self._jobs.values() if e.started_at is not None]
            return [{"name": self.name, "host": "in-process", "concurrency": self.size,
                     "last_heartbeat": self._clock(), "started_at": self._since,
                     "silent_s": 0.0, "state": "live",
                     "jobs": [{"job": e.spec.ticket, "kind": e.spec.kind,
                               "run_id": e.spec.run_id, "started_at": e.started_at}
                              for e in running]}]

    def stats(self) -> QueueStats:
        with self._lock:
            running = sum(1 for e in self._jobs.values() if e.started_at is not None)
            return QueueStats({"queued": len(self._jobs) - running, "running": running},
                              self._started.snapshot(), self._runs.snapshot())

    def close(self) -> None:
        """Finish the running jobs; jobs still waiting are dropped (and interrupted when the
        next pool starts)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def close_interrupted(store: Store) -> int:
    """Close what a previous process left open; return how many jobs were interrupted."""
    count = 0
    for run in store.list_runs(limit=MAX_RUNS_SCANNED):
        for ticket, state in open_jobs(store, run.run_id).items():
            store.append_event(run.run_id, "job.interrupted", {
                "job": ticket, "error": {"code": "interrupted", "message":
                                         f"the server restarted while the job was {state}"}})
            count += 1
        _close_running_attempts(store, run.run_id)
    return count


def _close_running_attempts(store: Store, run_id: str) -> None:
    attempts = store.list_attempts(run_id)
    if not any(a.status == "running" for a in attempts):
        return
    try:
        with store.run_lock(run_id):  # a live process (`frostline run`) still holds it: skip
            for a in store.list_attempts(run_id):
                if a.status == "running":
                    store.finish_attempt(run_id, a.number, status="failed", error={
                        "type": "Interrupted", "code": "interrupted",
                        "message": "the server restarted while this attempt ran; a call it "
                                   "dispatched without a commit is reported as unresolved"})
                    store.append_event(run_id, "attempt_interrupted", {"attempt": a.number})
    except RunBusy:
        return
