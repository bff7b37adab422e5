"""The embedded default's queue: a bounded pool of threads in the serving process.

`frostline serve` on the SQLite default has no job engine to hand work to, yet a request must
never wait for a script (a real image call takes seconds to a minute). The pool runs the same
jobs as a `frostline worker` would, at most `workers` at a time, and records them in the
store the same way, so the API, `?wait=` and the event stream behave alike on both backends.

Queued jobs live in memory: a restart loses them, and says so. A free thread takes the queued
job of the owner with the fewest jobs running, the oldest first among equals, so one
principal's backlog never holds every thread while another principal's job waits: the other
job starts as soon as one thread frees up. The owner cancels a queued job (it never starts) or
a running one (its attempt is stopped as a worker stops one, and ends `cancelled`); a
cancellation asked by another process on the same store (`frostline cancel`, a
`job.cancel_requested` event) is picked up within `watch_s`. When a pool starts it closes
what the previous process left open — every job of the store without a terminal event is
marked `job.interrupted`, and every attempt still marked running (with no live process holding
its run) is closed as interrupted; the calls it dispatched follow the crash rules (a pending
side-effecting call without an idempotency key leaves the run unresolved until reconciled).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from frostline.contract.status import AttemptStatus
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import (
    FAILED_SHOWN,
    HandBack,
    JobBody,
    JobSpec,
    Submission,
    next_attempt,
    open_jobs,
    record_cancelled,
    record_queued,
    run_job,
)
from frostline.embedded.queue_stats import Observations, QueueStats
from frostline.embedded.tickets import job_stream
from frostline.errors import AlreadyQueued, FrostlineError, Interrupted, RunBusy, StoreUnavailable
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
    cursor: int = 0  # the run's events read for a cancellation asked elsewhere
    cancelling: bool = False


class LocalPool:
    """Runs jobs on at most `workers` threads of this process.

    Usage::

        pool = LocalPool(store, host_body(providers, runner), workers=2)
        submission = pool.submit(store, JobSpec("attempt", "r1", {"source": src}))
    """

    def __init__(self, store: Store, body: JobBody, *, workers: int = DEFAULT_WORKERS,
                 name: str = "serve", clock: Any = time.time,
                 interrupts: Interrupts | None = None, watch_s: float = 0.5,
                 fair: bool = True) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker thread")
        self.store = store
        self.name = name
        self.size = workers
        self._body = body
        self._clock = clock
        self._lock = threading.Lock()
        self._jobs: dict[str, _Entry] = {}  # run id → its queued or running job
        self._queued: list[str] = []  # run ids of the queued jobs, oldest first
        self._fair = fair  # False: first come, first served (the benchmark's baseline)
        # What stops a running attempt: the one the body runs its attempts under.
        self._interrupts = interrupts if interrupts is not None else Interrupts()
        self._started = Observations()
        self._runs = Observations()
        self._failed: deque[dict[str, Any]] = deque(maxlen=FAILED_SHOWN)
        self._since = clock()
        self.interrupted = close_interrupted(store)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="frostline-pool")
        self._closed = threading.Event()
        self._watch_s = watch_s
        self._watcher = threading.Thread(target=self._watch, name="frostline-pool-cancel",
                                         daemon=True)
        self._watcher.start()

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
            with self._lock:
                entry = self._jobs.get(spec.run_id)
                if entry is None or entry.cancelling:  # cancelled while it was recorded
                    return submission
                entry.cursor = submission.queued_seq
                self._queued.append(spec.run_id)
            # Each task takes whichever queued job is fairest when a thread frees up.
            self._executor.submit(self._take)
        except BaseException:
            with self._lock:
                self._jobs.pop(spec.run_id, None)
                if spec.run_id in self._queued:
                    self._queued.remove(spec.run_id)
            raise
        return submission

    def _next(self) -> _Entry | None:
        """The queued job a free thread starts: its owner has the fewest jobs running, and
        it is the oldest among those (the caller holds the lock)."""
        if not self._queued:
            return None  # cancelled while it waited
        running = Counter(e.owner for e in self._jobs.values() if e.started_at is not None)
        chosen = min(range(len(self._queued)),
                     key=lambda i: (running[self._jobs[self._queued[i]].owner] * self._fair, i))
        entry = self._jobs[self._queued.pop(chosen)]
        entry.started_at = self._clock()
        self._started.add(entry.started_at - entry.queued_at)
        return entry

    def _take(self) -> None:
        with self._lock:
            entry = self._next()
        if entry is not None:
            self._run(entry.spec)

    def _run(self, spec: JobSpec) -> None:
        try:
            outcome = run_job(self.store, spec, self._guarded, worker=self.name)
            error = outcome.get("error")
            if isinstance(error, dict) and error.get("code") == "store_refused":
                self._gave_up(spec, error)
        except HandBack as exc:
            self.store.append_event(spec.stream, "job.interrupted", {
                "job": spec.ticket, "kind": spec.kind, "worker": self.name,
                "error": {"code": "interrupted", "message": str(exc)}})
        except Exception as exc:  # the store failed while recording: logged, the thread lives on
            log.exception("job %s of run %s could not be recorded", spec.ticket, spec.run_id)
            self._gave_up(spec, exc.to_dict() if isinstance(exc, FrostlineError) else {
                "code": "internal", "message": f"{type(exc).__name__}: the job failed"})
        finally:
            self._interrupts.forget(spec.run_id)
            with self._lock:
                done = self._jobs.pop(spec.run_id)
                if done.started_at is not None:
                    self._runs.add(self._clock() - done.started_at)

    def cancel(self, store: Store, run_id: str, by: str) -> list[dict[str, Any]]:
        """Cancel the run's job here: a queued one is dropped (`job.cancelled` at once), a
        running one's attempt is stopped and ends `cancelled` (see `Interrupts`)."""
        found = self._stop(run_id, by, ask=True)
        return [] if found is None else [found]

    def _stop(self, run_id: str, by: str | None, *, ask: bool) -> dict[str, Any] | None:
        with self._lock:
            entry = self._jobs.get(run_id)
            if entry is None or entry.cancelling:
                return None if entry is None else {"job": entry.spec.ticket, "state": "running"}
            entry.cancelling = True
            queued = entry.started_at is None
            if queued:
                if run_id in self._queued:  # else its submission is still being recorded
                    self._queued.remove(run_id)
                del self._jobs[run_id]
        spec = entry.spec
        if queued:
            record_cancelled(self.store, spec, by=by, worker=self.name, state="queued")
            return {"job": spec.ticket, "state": "queued"}
        if ask:
            self.store.append_event(spec.stream, "job.cancel_requested", {
                "job": spec.ticket, "kind": spec.kind, "by": by})
        self._interrupts.cancel(run_id, by)
        return {"job": spec.ticket, "state": "running"}

    def _watch(self) -> None:
        """Act on cancellations another process asked for (a `job.cancel_requested`)."""
        while not self._closed.wait(self._watch_s):
            with self._lock:
                entries = [(e.spec, e.cursor) for e in self._jobs.values() if not e.cancelling]
            for spec, cursor in entries:
                try:
                    events = self.store.list_events(spec.stream, after=cursor, limit=1000)
                except Exception:  # the store is down: look again next time
                    log.warning("cannot read run %s for cancellations", spec.run_id)
                    continue
                asked = [e for e in events if e.kind == "job.cancel_requested"
                         and e.data.get("job") == spec.ticket]
                with self._lock:
                    entry = self._jobs.get(spec.run_id)
                    if entry is not None and events:
                        entry.cursor = events[-1].seq
                if asked:
                    self._stop(spec.run_id, asked[-1].data.get("by"), ask=False)

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

    def failed_jobs(self, limit: int = FAILED_SHOWN) -> list[dict[str, Any]]:
        """The jobs that failed for good in this pool since it started, most recent first: the
        store failed under one (the pool does not retry), refused what its attempt wrote, or
        failed while the job was recorded (the next pool marks that one interrupted)."""
        with self._lock:
            return list(self._failed)[:limit]

    def _guarded(self, store: Store, spec: JobSpec) -> dict[str, Any]:
        """The job's body; a store failure under it fails the job for good (the pool does
        not hand jobs back), so it is listed with the pool's failed jobs."""
        try:
            return self._body(store, spec)
        except StoreUnavailable as exc:
            self._gave_up(spec, exc.to_dict())
            raise

    def _gave_up(self, spec: JobSpec, error: dict[str, Any]) -> None:
        with self._lock:
            self._failed.appendleft({"job": spec.ticket, "kind": spec.kind,
                                     "run_id": spec.run_id, "worker": self.name,
                                     "failed_at": self._clock(), "tries": 1, "error": error})

    def stats(self) -> QueueStats:
        with self._lock:
            running = sum(1 for e in self._jobs.values() if e.started_at is not None)
            return QueueStats({"queued": len(self._jobs) - running, "running": running},
                              self._started.snapshot(), self._runs.snapshot())

    def close(self) -> None:
        """Finish the running jobs; jobs still waiting are dropped (and interrupted when the
        next pool starts)."""
        self._closed.set()
        with self._lock:
            self._queued.clear()
        self._executor.shutdown(wait=True, cancel_futures=True)


def close_interrupted(store: Store) -> int:
    """Close what a previous process left open; return how many jobs were interrupted. A run
    still being authored (no draft was accepted before the restart) is removed, so its name
    is free again, and its job says so."""
    count = 0
    for run in store.list_authoring(limit=MAX_RUNS_SCANNED):
        removed = store.discard_authoring(run.run_id)
        for ticket, state in open_jobs(store, run.run_id).items():
            store.append_event(job_stream(run.run_id, ticket), "job.interrupted", {
                "job": ticket, "error": {"code": "interrupted", "removed": removed, "message":
                                         f"the server restarted while the job was {state}, "
                                         "before the model's script was accepted: nothing "
                                         "was stored as a run; submit the task again"}})
            count += 1
    for run in store.list_runs(limit=MAX_RUNS_SCANNED):
        for ticket, state in open_jobs(store, run.run_id).items():
            store.append_event(job_stream(run.run_id, ticket), "job.interrupted", {
                "job": ticket, "error": {"code": "interrupted", "message":
                                         f"the server restarted while the job was {state}"}})
            count += 1
        _close_running_attempts(store, run.run_id)
    return count


def _close_running_attempts(store: Store, run_id: str) -> None:
    attempts = store.list_attempts(run_id)
    if not any(a.status == AttemptStatus.RUNNING for a in attempts):
        return
    try:
        with store.run_lock(run_id):  # a live process (`frostline run`) still holds it: skip
            for a in store.list_attempts(run_id):
                if a.status == AttemptStatus.RUNNING:
                    store.finish_attempt(
                        run_id, a.number, status=AttemptStatus.FAILED, error=Interrupted(
                            "the server restarted while this attempt ran; a call it "
                            "dispatched without a commit is reported as unresolved").to_dict())
                    store.append_event(run_id, "attempt_interrupted", {"attempt": a.number})
    except RunBusy:
        return
