"""Jobs: an attempt, a repair, an authoring or a durable graph run, accepted now and executed by whoever
takes it — a `frostline worker` on any host (Procrastinate over PostgreSQL) or the server's
bounded in-process pool (the embedded SQLite default).

The store is a job's record, whichever host runs it: its life is appended to the run's audit
events (`job.queued`, `job.started`, `job.requeued`, `job.finished`, `job.interrupted`,
`job.cancel_requested`, `job.cancelled`, each carrying the job's ticket), so a client follows a job on the run's event stream, and a waiting
caller (`?wait=`, `frostline submit --wait`) reads the outcome back from the store. The queue
only decides who runs what and when.

One job per run at a time: a run's job is refused (`AlreadyQueued`) while another one of the
same run waits or runs, so "the same attempt" can never be queued twice, and the attempt number
a submission announces is the one the job opens.

Each job's life is recorded on its stream (`frostline.embedded.tickets`): the run's events, or
an author job's own; every reader here follows the ticket to it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.contract.status import AttemptStatus, RunStatus
from frostline.embedded.queue_stats import QueueStats
from frostline.embedded.tickets import author_stream, job_stream, new_ticket
from frostline.errors import DefinitionError, FrostlineError
from frostline.store.base import Store
from frostline.store.writes import AppendEvent

log = logging.getLogger("frostline.jobs")

JOB_KINDS = ("attempt", "repair", "graph", "author")
EVENT_PREFIX = "job."
TERMINAL = ("finished", "interrupted", "cancelled")
FAILED_SHOWN = 20  # jobs that failed for good, as `frostline workers` and /v1/workers list them


@dataclass(frozen=True)
class JobSpec:
    """What to run: `kind` (attempt, repair, graph) on `run_id` with its `params`.

    Example: ``JobSpec("attempt", "r1", {"source": src, "args": {"n": 2}})``
    """

    kind: str
    run_id: str
    params: dict[str, Any] = field(default_factory=dict)
    ticket: str = ""  # default: a new one, `a-…` for an author job, `j-…` for any other

    def __post_init__(self) -> None:
        from frostline.contract.jsonshape import check_storable

        if self.kind not in JOB_KINDS:
            raise DefinitionError(f"a job kind is one of {', '.join(JOB_KINDS)}, not "
                                  f"{self.kind!r}")
        if not self.ticket:
            object.__setattr__(self, "ticket", new_ticket(self.kind))
        # A queue stores its jobs too (Procrastinate's jsonb): what no store can hold is
        # refused here, before a run or a job exists, on every surface that submits.
        check_storable(self.params.get("args"), "args")
        check_storable(self.params, "the job's parameters")

    @property
    def stream(self) -> str:
        """The events key the job's life is recorded on (`job_stream`)."""
        return job_stream(self.run_id, self.ticket)

    def to_args(self) -> dict[str, Any]:
        """The job as JSON data (what a queue stores)."""
        return {"kind": self.kind, "run_id": self.run_id, "params": self.params,
                "ticket": self.ticket}

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> JobSpec:
        try:
            return cls(str(args["kind"]), str(args["run_id"]), dict(args.get("params") or {}),
                       str(args["ticket"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DefinitionError(f"malformed job arguments ({exc}): {sorted(args)}") from None


@dataclass(frozen=True)
class Submission:
    """A job the queue accepted: where to follow it and the attempt it will open."""

    run_id: str
    ticket: str
    kind: str
    attempt: int | None
    queued_seq: int
    queue_job_id: int | None = None

    @property
    def location(self) -> str:
        return f"/v1/runs/{self.run_id}/jobs/{self.ticket}"

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "job": self.ticket, "kind": self.kind,
                "attempt": self.attempt, "state": "queued", "location": self.location,
                "queue_job_id": self.queue_job_id}


@dataclass(frozen=True)
class JobState:
    """Where a job stands, read from the run's events."""

    run_id: str
    ticket: str
    kind: str | None
    state: str  # queued | running | finished | interrupted | cancelled
    worker: str | None = None
    outcome: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    attempt: int | None = None

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "job": self.ticket, "kind": self.kind,
                "state": self.state, "worker": self.worker, "attempt": self.attempt,
                "outcome": self.outcome, "error": self.error}


class JobQueue(Protocol):
    """Where a job goes once accepted: Procrastinate's queue, or the in-process pool."""

    def submit(self, store: Store, spec: JobSpec) -> Submission: ...

    def owned_jobs(self, owner: str) -> int:
        """How many jobs of `owner`'s runs are waiting or running."""

    def cancel(self, store: Store, run_id: str, by: str) -> list[dict[str, Any]]:
        """Cancel the run's queued job (it never starts) and stop its running one (its
        attempt ends `cancelled`); one entry per job: its ticket and the state it was in."""

    def workers(self) -> list[dict[str, Any]]: ...

    def failed_jobs(self, limit: int = FAILED_SHOWN) -> list[dict[str, Any]]:
        """Jobs that failed for good, newest first (job, kind, run_id, worker, tries, error)."""

    def stats(self) -> QueueStats: ...

    def close(self) -> None: ...


JobBody = Callable[[Store, JobSpec], dict[str, Any]]


class HandBack(Exception):
    """Raised by a job body that stopped before finishing (shutdown, lost database): the queue
    must run the job again, on this worker or another. Nothing is lost: what the attempt
    committed replays, and a call it dispatched without a commit follows the crash rules."""


class JobCancelled(Exception):
    """Raised by a job body whose attempt was stopped because the run's owner (`by`) cancelled
    it: the job ends `cancelled`, and is not run again."""

    def __init__(self, by: str | None = None) -> None:
        super().__init__(f"cancelled by {by}" if by else "cancelled")
        self.by = by


class StoreHandBack(HandBack):
    """A HandBack because the store failed in a way that may pass (a lost connection, a
    serialization failure, a server restart): the queue runs the job again a bounded number
    of times, further apart each time, then fails it (`frostline.worker.tasks`). A store that
    refuses a write for good (StoreRefused) fails the attempt instead and is never retried."""


def resume_spec(run_id: str) -> JobSpec:
    """The job that resumes a waiting run: an attempt with the script of its latest attempt,
    chosen when the job runs (`frostline.embedded.resume`)."""
    return JobSpec("attempt", run_id, {"resume": True})


def precheck_script(script: str, envelope: dict[str, Any], catalog: Catalog = DEFAULT_CATALOG,
                    *, store: Store | None = None, run_id: str | None = None) -> None:
    """Refuse a script the checker rejects before anything is queued or recorded. For an
    existing run (`store` and `run_id`), the spend the script can add beyond its frozen
    prefix is bounded against what is left of the budget, as the attempt itself will be."""
    from frostline.capabilities.envelope import Envelope
    from frostline.errors import ScriptRejected
    from frostline.runtime.spent import run_prior
    from frostline.script import check

    prior = run_prior(store, run_id, catalog) if store is not None and run_id else None
    report = check(script, Envelope.from_dict(envelope, catalog), catalog=catalog, prior=prior)
    if not report.valid:
        errors = [v for v in report.to_dict()["violations"] if v["severity"] == "error"]
        first = errors[0]
        raise ScriptRejected(
            f"the checker rejected the script: {first['rule']} line {first['line']}: "
            f"{first['message']}", report=report.to_dict())


def next_attempt(store: Store, run_id: str, kind: str, params: dict[str, Any]) -> int | None:
    """The number of the attempt a job will open (None when it may open none)."""
    if kind == "repair" and not params.get("execute"):
        return None
    attempts = store.list_attempts(run_id)
    return (attempts[-1].number if attempts else 0) + 1


def queued_submission(store: Store, run_id: str, ticket: str) -> Submission | None:
    """The submission recorded for job `ticket` of `run_id` (its `job.queued`), if any: what a
    retried submission with the same ticket gets back."""
    for ev in _job_events(store, job_stream(run_id, ticket), 0):
        if ev.kind == "job.queued" and ev.data.get("job") == ticket:
            return submission_of(run_id, ev.seq, ev.data)
    return None


def submission_of(run_id: str, seq: int, data: dict[str, Any]) -> Submission:
    """The Submission a `job.queued` event (its seq and data) records."""
    attempt, job_id = data.get("attempt"), data.get("queue_job_id")
    return Submission(run_id, str(data["job"]), str(data.get("kind")),
                      attempt if isinstance(attempt, int) else None, seq,
                      job_id if isinstance(job_id, int) else None)


def queued_event(spec: JobSpec, attempt: int | None, queue_job_id: int | None) -> dict[str, Any]:
    """The data of a job's `job.queued` event."""
    return {"job": spec.ticket, "kind": spec.kind, "attempt": attempt,
            "queue_job_id": queue_job_id}


def record_queued(store: Store, spec: JobSpec, *, attempt: int | None,
                  queue_job_id: int | None = None) -> Submission:
    """Append `job.queued` and return the submission a caller follows."""
    seq = store.append_event(spec.stream, "job.queued", queued_event(spec, attempt, queue_job_id))
    return Submission(spec.run_id, spec.ticket, spec.kind, attempt, seq, queue_job_id)


def run_job(store: Store, spec: JobSpec, body: JobBody, *, worker: str) -> dict[str, Any]:
    """Run `spec` with `body`, recording `job.started` and `job.finished` on the run.

    `HandBack` propagates (the caller hands the job back to its queue); any other error ends
    the job, recorded with the error, and is not raised again.
    """
    from frostline.runtime import tracing

    # Not waited for: durable with the job's first write (queue order), checked at its end.
    started = store.submit(AppendEvent(spec.stream, "job.started", {
        "job": spec.ticket, "kind": spec.kind, "worker": worker}))
    with tracing.span("frostline.job", run_id=spec.run_id, job=spec.ticket, kind=spec.kind,
                      worker=worker):
        try:
            outcome: dict[str, Any] = body(store, spec)
            error = None
        except HandBack:
            raise
        except JobCancelled as exc:
            started.result()
            return record_cancelled(store, spec, by=exc.by, worker=worker, state="running")
        except FrostlineError as exc:
            outcome, error = {}, exc.to_dict()
        except Exception as exc:  # a job never takes its worker down with it
            # Its text may be a driver's (naming the database's host): the run's owner reads
            # this event, so the detail goes to the operator's log only.
            log.exception("job %s of run %s failed", spec.ticket, spec.run_id)
            outcome, error = {}, {
                "type": type(exc).__name__, "code": "job_error", "message": "the job failed "
                f"unexpectedly ({type(exc).__name__}); the operator's log has the detail"}
    attempt = outcome.get("attempt")
    if isinstance(attempt, dict):  # a repair that executed its candidate
        attempt = attempt.get("attempt")
    started.result()
    record_finished(store, spec, worker, attempt=attempt if isinstance(attempt, int) else None,
                    status="failed" if error else outcome_status(outcome), outcome=outcome,
                    error=error)
    return outcome


def record_finished(store: Store, spec: JobSpec, worker: str, *, attempt: int | None,
                    status: str | None, outcome: dict[str, Any],
                    error: dict[str, Any] | None) -> int:
    """Append the job's `job.finished`: what its error quotes is kept storable, and an
    attempt's result is left to its attempt record (stored once)."""
    from frostline.contract.jsonshape import storable_copy

    kept = _without_results(outcome)
    return store.append_event(spec.stream, "job.finished", storable_copy({
        "job": spec.ticket, "kind": spec.kind, "worker": worker, "attempt": attempt,
        "status": status, "outcome": kept, "error": error, "result_in_attempt": kept != outcome}))


def _without_results(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome as `job.finished` keeps it: an attempt's result is stored once, in its
    attempt record, and `job_state` reads it from there (a repair nests its attempt)."""
    kept = {k: v for k, v in outcome.items() if k != "result" or not _is_attempt(outcome)}
    nested = kept.get("attempt")
    if isinstance(nested, dict) and _is_attempt(nested):
        kept["attempt"] = {k: v for k, v in nested.items() if k != "result"}
    return kept


def _is_attempt(outcome: dict[str, Any]) -> bool:
    return isinstance(outcome.get("attempt"), int) and "result" in outcome


def _with_results(store: Store, run_id: str, outcome: Any) -> Any:
    """`outcome` as the job returned it: each attempt's result read back from its record."""
    if not isinstance(outcome, dict):
        return outcome
    nested = outcome.get("attempt")
    if isinstance(nested, dict):
        return {**outcome, "attempt": _with_results(store, run_id, nested)}
    if isinstance(nested, int) and "status" in outcome and "result" not in outcome:
        record = store.get_attempt(run_id, nested)
        return {**outcome, "result": record.result if record is not None else None}
    return outcome


def record_cancelled(store: Store, spec: JobSpec, *, by: str | None, worker: str | None,
                     state: str) -> dict[str, Any]:
    """End job `spec` cancelled (it was `state`: queued or running): its attempt still marked
    running is closed `cancelled`, and `job.cancelled` names who cancelled it (`by`, else the
    principal of its `job.cancel_requested`)."""
    from frostline.errors import RunBusy

    who = by or cancel_requested_by(store, spec.run_id, spec.ticket)
    attempt: int | None = None
    try:
        with store.run_lock(spec.run_id):  # the stopped attempt released it
            attempt = close_cancelled(store, spec.run_id, who, running=state == "running")
    except RunBusy:  # another process holds the run: its own attempt is not this job's
        pass
    if spec.kind == "author":  # cancelled before a draft was accepted: the name is free again
        store.discard_authoring(spec.run_id)
    store.append_event(spec.stream, "job.cancelled", {
        "job": spec.ticket, "kind": spec.kind, "worker": worker, "by": who, "state": state,
        "attempt": attempt, "error": {"code": "cancelled", "by": who, "message":
                                      f"the job was cancelled while {state}"
                                      + (f" by {who}" if who else "")}})
    return {"run_id": spec.run_id, "status": RunStatus.CANCELLED, "attempt": attempt, "by": who}


def close_cancelled(store: Store, run_id: str, by: str | None, *,
                    running: bool = True) -> int | None:
    """Close the run's latest attempt as `cancelled` if it waits (nothing resumes it then),
    or, with `running`, if it is marked running (the job's own attempt, stopped); return its
    number (None when there was none). The caller holds the run lock."""
    last = next(reversed(store.list_attempts(run_id)), None)
    closable = {AttemptStatus.WAITING, AttemptStatus.RUNNING} if running else {AttemptStatus.WAITING}
    if last is None or last.status not in closable:
        return None
    store.finish_attempt(run_id, last.number, status=AttemptStatus.CANCELLED, error={
        "type": "JobCancelled", "code": "cancelled", "by": by,
        "message": f"cancelled by {by}; every call it dispatched completed and was committed "
                   "first" if by else "cancelled"})
    store.set_run_status(run_id, RunStatus.CANCELLED)
    store.append_event(run_id, "attempt_cancelled", {"attempt": last.number, "by": by})
    return last.number


def cancel_requested_by(store: Store, run_id: str, ticket: str) -> str | None:
    """Who asked to cancel job `ticket` (its latest `job.cancel_requested`), if anyone did."""
    by: str | None = None
    for ev in _job_events(store, job_stream(run_id, ticket), 0):
        if ev.kind == "job.cancel_requested" and ev.data.get("job") == ticket:
            by = ev.data.get("by")
    return by


def outcome_status(outcome: dict[str, Any]) -> str | None:
    """The status a job's outcome reports: its attempt's, or a repair's verdict."""
    if isinstance(outcome.get("status"), str):
        return str(outcome["status"])
    nested = outcome.get("attempt")
    if isinstance(nested, dict) and isinstance(nested.get("status"), str):
        return str(nested["status"])
    if "accepted" in outcome:
        return "repaired" if outcome["accepted"] else "not_repaired"
    return None


def _job_events(store: Store, run_id: str, after: int) -> Iterator[Any]:
    cursor = after
    while True:
        batch = store.list_events(run_id, after=cursor, limit=1000)
        for ev in batch:
            cursor = ev.seq
            if ev.kind.startswith(EVENT_PREFIX):
                yield ev
        if len(batch) < 1000:
            return


def job_state(store: Store, run_id: str, ticket: str, *, after: int = 0) -> JobState | None:
    """The state of job `ticket` of `run_id` (None if the run never queued it)."""
    state: JobState | None = None
    for ev in _job_events(store, job_stream(run_id, ticket), after):
        if ev.data.get("job") != ticket:
            continue
        what = ev.kind[len(EVENT_PREFIX):]
        kind = ev.data.get("kind", state.kind if state else None)
        if what == "queued" and state is not None:
            continue  # the worker was quicker than the submitter's own record
        if what in ("queued", "requeued"):
            state = JobState(run_id, ticket, kind, "queued",
                             attempt=ev.data.get("attempt", state.attempt if state else None))
        elif what == "started":
            state = JobState(run_id, ticket, kind, "running", worker=ev.data.get("worker"),
                             attempt=state.attempt if state else None)
        elif what == "cancel_requested":
            continue  # the job goes on until its host stops it
        elif what in TERMINAL:
            attempt = ev.data.get("attempt")
            state = JobState(run_id, ticket, kind, what, worker=ev.data.get("worker"),
                             outcome=_with_results(store, run_id, ev.data.get("outcome"))
                             if ev.data.get("result_in_attempt") else ev.data.get("outcome"),
                             error=ev.data.get("error"),
                             attempt=attempt if attempt is not None else
                             (state.attempt if state else None))
    return state


def wait_job(store: Store, run_id: str, ticket: str, timeout_s: float, *, after: int = 0,
             clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep) -> JobState | None:
    """Poll the store until job `ticket` is finished or interrupted, or `timeout_s` passed;
    return its latest state either way."""
    deadline = clock() + max(0.0, timeout_s)
    pause = 0.01
    while True:
        state = job_state(store, run_id, ticket, after=after)
        if (state is not None and state.done) or clock() >= deadline:
            return state
        sleep(min(pause, max(0.0, deadline - clock())))
        pause = min(pause * 2, 0.25)


def open_jobs(store: Store, run_id: str) -> dict[str, str]:
    """Tickets of `run_id` (its author jobs' too) whose last job event is not terminal → their
    state."""
    states: dict[str, str] = {}
    for stream in (run_id, author_stream(run_id)):
        for ev in _job_events(store, stream, 0):
            ticket = ev.data.get("job")
            if isinstance(ticket, str) and ev.kind != "job.cancel_requested":
                states[ticket] = ev.kind[len(EVENT_PREFIX):]
    return {t: s for t, s in states.items() if s not in TERMINAL}
