"""The Procrastinate application of a store: one task, `frostline.job`, that runs any job kind.

A job's arguments are its `JobSpec` (kind, run id, ticket, params); its Procrastinate `lock`
is the run id, so one run never executes on two workers at once (frostline's advisory run lock
stays as the second guard), and its `queueing_lock` is the run id too, so a run has at most one
job waiting (frostline's submission also refuses one while another runs: see `queue`).

A job that could not finish here goes back to the queue, for this worker or another, and
whatever the attempt committed replays there: a `HandBack` of a shutdown (or of a worker that
lost its database) at once, `RunBusy` (the previous holder of the run has not released it
yet) after a second. A store failure that may pass (`StoreHandBack`, `StoreUnavailable`: a
lost connection, a serialization failure, a server restart) is retried a bounded number of
times (`RETRIES`), further apart each time (`BACKOFF_S` doubled, at most `BACKOFF_CAP_S`);
after the last, the job fails, and so does the attempt it left open, with the reason. A
refusal for good (`StoreRefused`: a data error) is never retried: it already failed the
attempt, like any other error. `FROSTLINE_JOB_RETRIES` and `FROSTLINE_JOB_BACKOFF_S` set the
bound and the first delay of a worker process.

A job whose run's owner cancels it while it runs (Procrastinate's abort request, see
`queue.ProcrastinateQueue.cancel`) has its attempt stopped as on a shutdown; it ends
`cancelled` and Procrastinate records it aborted, never to be retried.
"""

from __future__ import annotations

import datetime
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import procrastinate
from procrastinate.retry import BaseRetryStrategy, RetryDecision
from psycopg_pool import AsyncConnectionPool

from frostline.contract.status import AttemptStatus, RunStatus
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import HandBack, JobBody, JobSpec, StoreHandBack, run_job
from frostline.errors import (
    DefinitionError,
    FrostlineError,
    RetriesExhausted,
    RunBusy,
    StoreRefused,
    StoreUnavailable,
)
from frostline.store.base import Store
from frostline.store.url import redact_text

log = logging.getLogger("frostline.worker")

TASK = "frostline.job"
QUEUE = "frostline"
CONTEXT_KEY = "frostline"
BUSY_RETRY_S = 1
POOL_TIMEOUT_S = 5.0
ABORT_POLL_S = 0.2  # how often a running job looks at Procrastinate's abort flag
RESUME_DEFER_S = 2.0  # a scheduled resume over its owner's limit looks again this much later
# A store failure that may pass: retried this many times, after 1 s, 2 s, 4 s … (at most 60 s).
RETRIES = 6
BACKOFF_S = 1.0
BACKOFF_CAP_S = 60.0
RETRIES_ENV = "FROSTLINE_JOB_RETRIES"
BACKOFF_ENV = "FROSTLINE_JOB_BACKOFF_S"


@dataclass
class HostContext:
    """What the task needs from the worker process that runs it."""

    store: Store
    body: JobBody
    interrupts: Interrupts
    name: str
    # Queue a job to start at a time (POSIX seconds): a waiting run's resume at its timer.
    schedule: Callable[[JobSpec, float], object] | None = None
    # A scheduled resume starts only while its owner has at most this many jobs (None: no
    # bound); `jobs(owner)` counts them (waiting and due, or running, on every worker).
    resume_limit: int | None = None
    jobs: Callable[[str], int] | None = None


class HandBackStrategy(BaseRetryStrategy):
    """Retry jobs that stopped before finishing; a store failure only `retries` times, with
    exponential backoff from `backoff_s`; let every other failure stand.

    Example: ``HandBackStrategy(retries=3, backoff_s=0.1).delay(StoreHandBack("x"), 0)``
    is 0.1 (seconds), and None from the fourth try on.
    """

    def __init__(self, *, retries: int = RETRIES, backoff_s: float = BACKOFF_S,
                 backoff_cap_s: float = BACKOFF_CAP_S) -> None:
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> HandBackStrategy:
        """The strategy with FROSTLINE_JOB_RETRIES and FROSTLINE_JOB_BACKOFF_S applied."""
        try:
            return cls(retries=int(environ.get(RETRIES_ENV, RETRIES)),
                       backoff_s=float(environ.get(BACKOFF_ENV, BACKOFF_S)))
        except ValueError as exc:
            raise DefinitionError(f"{RETRIES_ENV} must be an integer and {BACKOFF_ENV} a "
                                  f"number of seconds: {exc}") from None

    def delay(self, exception: BaseException, attempts: int) -> float | None:
        """Seconds until a job that raised `exception`, after `attempts` earlier tries, runs
        again (0: at once), or None: it fails."""
        if isinstance(exception, StoreRefused):
            return None
        if isinstance(exception, StoreHandBack | StoreUnavailable):
            if attempts >= self.retries:
                return None
            return float(min(self.backoff_cap_s, self.backoff_s * 2 ** attempts))
        if isinstance(exception, HandBack):
            return 0.0
        if isinstance(exception, RunBusy):
            return float(BUSY_RETRY_S)
        return None

    def get_retry_decision(self, *, exception: BaseException,
                           job: procrastinate.jobs.Job) -> RetryDecision | None:
        seconds = self.delay(exception, job.attempts)
        if seconds is None:
            return None
        if seconds <= 0:
            return RetryDecision(retry_at=_now())
        return RetryDecision(retry_at=_now() + datetime.timedelta(seconds=seconds))


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def make_app(conninfo: str, *, pool_size: int = 4) -> procrastinate.App:
    """The Procrastinate app over the jobs schema at `conninfo`, with the frostline task."""
    connector = procrastinate.PsycopgConnector(conninfo=conninfo, min_size=1,
                                               max_size=max(2, pool_size),
                                               kwargs={"connect_timeout": 5},
                                               pool_factory=_pool)
    app = procrastinate.App(connector=connector)
    app.task(name=TASK, queue=QUEUE, pass_context=True,
             retry=HandBackStrategy.from_env())(job_task)
    return app


def _pool(**options: Any) -> AsyncConnectionPool[Any]:
    # Procrastinate asks the pool to check every connection it hands out: one more round trip
    # before each fetch, finish and heartbeat. A worker notices a broken connection anyway
    # (the query fails, its session ends and starts over on a fresh pool, see `host`).
    options.pop("check", None)
    # A connection is waited for at most this long (psycopg's default is 30 s): every query of
    # the worker retries a failure (frostline.worker.liveness), and a status save must find
    # out soon whether the database is gone.
    options.setdefault("timeout", POOL_TIMEOUT_S)
    return AsyncConnectionPool(**options)


def job_task(context: procrastinate.JobContext, job: dict[str, Any]) -> dict[str, Any]:
    """Run one job on this worker (a thread of its own; the worker's loop stays free)."""
    host: HostContext = context.additional_context[CONTEXT_KEY]
    spec = JobSpec.from_args(job)
    if _defer_resume(host, spec):
        return {"status": None, "attempt": None, "deferred": True}
    done = threading.Event()
    watcher = threading.Thread(target=_watch_abort, args=(context, host, spec, done),
                               name="frostline-abort", daemon=True)
    watcher.start()
    try:
        outcome = run_job(host.store, spec, host.body, worker=host.name)
    except (HandBack, RunBusy, StoreUnavailable) as exc:
        strategy = context.task.retry_strategy
        attempts = context.job.attempts
        if isinstance(strategy, HandBackStrategy) and strategy.delay(exc, attempts) is None:
            _record_given_up(host, spec, exc, attempts + 1)
        else:
            _record_requeue(host, spec, exc)
        raise
    finally:
        done.set()
        watcher.join()
        host.interrupts.forget(spec.run_id)
    if outcome.get("status") == RunStatus.CANCELLED and _cancelled(context):
        raise procrastinate.exceptions.JobAborted(f"cancelled by {outcome.get('by')}")
    if outcome.get("status") == AttemptStatus.WAITING:
        _schedule_wake(host, spec)
    return {"status": outcome.get("status"), "attempt": outcome.get("attempt")
            if isinstance(outcome.get("attempt"), int) else None}


def _defer_resume(host: HostContext, spec: JobSpec) -> bool:
    """A due timer's resume (scheduled by a worker, see `_schedule_wake`) is admitted under
    its owner's limit like any attempt: while the owner has more jobs than `resume_limit`
    (this one included), it is scheduled again a little later under the same ticket, holding
    no slot meanwhile (a resume scheduled for later counts for nothing until it is due)."""
    if (host.resume_limit is None or host.jobs is None or host.schedule is None
            or not spec.params.get("scheduled")):
        return False
    run = host.store.get_run(spec.run_id)
    if run is None or run.owner is None or host.jobs(run.owner) <= host.resume_limit:
        return False
    host.schedule(spec, time.time() + RESUME_DEFER_S)
    return True


def _watch_abort(context: procrastinate.JobContext, host: HostContext, spec: JobSpec,
                 done: threading.Event) -> None:
    """Stop the job's attempt once its owner cancelled it (Procrastinate's abort flag)."""
    while not done.wait(ABORT_POLL_S):
        if _cancelled(context):
            host.interrupts.cancel(spec.run_id)
            return


def _cancelled(context: procrastinate.JobContext) -> bool:
    # A shutdown's abort is the host's business (it hands the job back); only a user's is a
    # cancellation.
    from procrastinate.job_context import AbortReason

    return context.abort_reason() == AbortReason.USER_REQUEST


def _schedule_wake(host: HostContext, spec: JobSpec) -> None:
    """A run that ended waiting on a timer (or an event's timeout) is resumed when it is
    due; an answer, by contrast, queues its resume when it is committed."""
    from frostline.embedded.answers import next_due_at
    from frostline.embedded.jobs import resume_spec

    if host.schedule is None:
        return
    try:
        due = next_due_at(host.store, spec.run_id)
        if due is not None:
            resume = resume_spec(spec.run_id)
            host.schedule(JobSpec(resume.kind, resume.run_id,
                                  {**resume.params, "scheduled": True}), due)
    except StoreUnavailable as exc:  # the serve sweep or `frostline resume` still can
        log.warning("could not schedule the resume of run %s: %s", spec.run_id, exc.message)


def _record_given_up(host: HostContext, spec: JobSpec, exc: BaseException, tries: int) -> None:
    """The queue will not run the job again: end it failed, and the attempt it left open
    with it, so `runs`, `show`, the API and the UI say why (best effort: the store may still
    be failing, and then the next attempt of the run closes that one as crashed)."""
    from frostline.embedded.jobs import record_finished
    from frostline.runtime.recovery import fail_open_attempts

    # The run's error is its owner's to read: a store failure's detail stays in the log.
    reason = (str(exc.to_dict()["message"]) if isinstance(exc, FrostlineError)
              else redact_text(str(exc)))
    if isinstance(exc, StoreRefused):
        error = exc.to_dict()
    else:
        error = RetriesExhausted(
            f"the job was tried {tries} time(s) and the store failed each time; it is not "
            f"tried again. The last failure: {reason}. Check the database, then submit the "
            "run again", tries=tries, last=_code(exc)).to_dict()
    try:
        closed: list[int] = []
        if spec.kind == "author":  # still being authored: no run is left behind
            host.store.discard_authoring(spec.run_id)
        with host.store.run_lock(spec.run_id):
            closed = fail_open_attempts(host.store, spec.run_id, error, run_status=RunStatus.FAILED)
        record_finished(host.store, spec, host.name, attempt=closed[-1] if closed else None,
                        status="failed", outcome={}, error=error)
    except (RunBusy, StoreUnavailable) as again:
        log.warning("job %s of run %s failed for good (%s); the store did not take its "
                    "record: %s", spec.ticket, spec.run_id, reason, again)


def _code(exc: BaseException) -> str:
    if isinstance(exc, FrostlineError):
        return exc.code
    return "store_unavailable" if isinstance(exc, StoreHandBack) else "interrupted"


def _record_requeue(host: HostContext, spec: JobSpec, exc: BaseException) -> None:
    # The event is the run owner's to read: a store failure's detail (which may name the
    # database's host) goes to the worker's log only.
    reason = (str(exc.to_dict()["message"]) if isinstance(exc, StoreUnavailable)
              else exc.message if isinstance(exc, RunBusy) else redact_text(str(exc)))
    if isinstance(exc, StoreUnavailable):
        log.warning("job %s of run %s handed back: %s", spec.ticket, spec.run_id,
                    redact_text(exc.message))
    try:
        host.store.append_event(spec.stream, "job.requeued", {
            "job": spec.ticket, "kind": spec.kind, "worker": host.name, "reason": reason})
    except StoreUnavailable:  # the queue still gets it back once the database answers
        log.warning("job %s of run %s handed back (%s); the store did not take the event",
                    spec.ticket, spec.run_id, reason)
