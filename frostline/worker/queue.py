"""Submitting jobs to Procrastinate, and reading its queue back: who works, on what, how fast.

`frostline submit`, the HTTP API on a PostgreSQL store, and any program that wants a run
executed elsewhere use `ProcrastinateQueue.submit`. It refuses a job for a run that already has
one waiting or running (`AlreadyQueued`): Procrastinate's own `queueing_lock` covers a waiting
job; a running one is checked in the same transaction, under a transaction lock on the run, so
two submitters cannot both pass the check. The job's `job.queued` event is written in that
transaction too: a submission is stored whole or not at all, and one whose commit was lost is
looked up rather than guessed.

Fair scheduling: a job's Procrastinate priority is minus the number of its owner's jobs already
waiting or running when it is queued, so workers (which take the highest priority first, the
oldest among equals) start every owner's first job before anyone's second: a principal with a
long backlog never holds every worker slot while another principal's job waits longer than
one job takes.

`cancel` cancels a run's waiting jobs in the queue (they never start, a timer's scheduled
resume included) and asks Procrastinate to abort a running one: its worker stops the attempt
as it stops one on shutdown, and the job ends `cancelled` (`frostline.worker.tasks`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from frostline.embedded.jobs import (
    FAILED_SHOWN,
    JobSpec,
    Submission,
    next_attempt,
    queued_event,
    record_cancelled,
    submission_of,
)
from frostline.embedded.queue_stats import LATENCY_BUCKETS, Histogram, QueueStats
from frostline.embedded.tickets import AUTHOR_STREAM
from frostline.errors import AlreadyQueued, StoreUnavailable
from frostline.store.base import Store
from frostline.store.jsontext import json_text
from frostline.store.url import redact
from frostline.worker import schema
from frostline.worker.tasks import QUEUE, TASK, make_app

_OPEN = "('todo', 'doing')"

_WORKERS = """
SELECT w.id, extract(epoch FROM w.last_heartbeat), f.name, f.host, f.pid, f.concurrency,
       f.queues, f.sandbox, f.started_at, extract(epoch FROM now() - w.last_heartbeat),
       f.stalled_after
  FROM procrastinate_workers w LEFT JOIN frostline_workers f ON f.worker_id = w.id
 ORDER BY w.id"""
# A registration without its own `stalled_after` (an older worker) is judged by the default.
DEFAULT_STALLED_AFTER_S = 30.0

_RUNNING = """
SELECT j.worker_id, j.id, j.lock, j.args, extract(epoch FROM (
       SELECT max(e.at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'started'))
  FROM procrastinate_jobs j WHERE j.status = 'doing' ORDER BY j.id"""

# Jobs that failed for good, among the queue's latest finished jobs, newest first: the queue
# gave them up (retries exhausted, a bug: status 'failed'), or the store refused what the
# attempt wrote (the job ended, its attempt failed `store_refused`).
RECENT_JOBS = 500
_FAILED = """
SELECT j.id, j.lock, j.args, j.attempts, ev.data, extract(epoch FROM (
       SELECT max(e.at) FROM procrastinate_events e WHERE e.job_id = j.id
          AND e.type IN ('failed', 'succeeded')))
  FROM (SELECT * FROM procrastinate_jobs WHERE queue_name = %s
           AND status IN ('failed', 'succeeded') ORDER BY id DESC LIMIT {recent}) j
  LEFT JOIN LATERAL (SELECT data FROM {events} e
          WHERE e.run_id IN (j.lock, {author_stream} || j.lock) AND e.kind = 'job.finished' AND e.data->>'job' = j.args->'job'->>'ticket'
         ORDER BY e.seq DESC LIMIT 1) ev ON true
 WHERE j.status = 'failed' OR ev.data->'error'->>'code' = 'store_refused'
    OR ev.data->'outcome'->'error'->>'code' = 'store_refused'
 ORDER BY j.id DESC LIMIT %s"""


def _latencies(column: str) -> str:
    counts = ", ".join(f"count(*) FILTER (WHERE {column} <= {le})"
                       for le in LATENCY_BUCKETS if le != float("inf"))
    return (f"SELECT {counts}, count({column}), COALESCE(sum({column}), 0) FROM ("
            "SELECT extract(epoch FROM min(at) FILTER (WHERE type = 'started') - "
            "min(at) FILTER (WHERE type = 'deferred')) AS wait, "
            "extract(epoch FROM max(at) FILTER (WHERE type IN ('succeeded', 'failed')) - "
            "max(at) FILTER (WHERE type = 'started')) AS run "
            "FROM procrastinate_events GROUP BY job_id) AS t")


class ProcrastinateQueue:
    """The job queue of a PostgreSQL store, shared by every worker and submitter.

    Usage::

        with PostgresStore(url) as store:
            queue = ProcrastinateQueue(store)
            queue.submit(store, JobSpec("attempt", "r1", {"source": src}))
    """

    def __init__(self, store: Store, *, queue: str = QUEUE, fair: bool = True) -> None:
        store_schema = getattr(store, "schema_name", None)
        if store_schema is None:
            raise StoreUnavailable(
                "jobs run on workers only with a PostgreSQL store; the embedded SQLite default "
                "runs them in the serving process", backend="sqlite", operation="submit")
        self.queue = queue
        self.fair = fair  # False: first come, first served (the benchmark's baseline)
        self.store_schema = str(store_schema)
        self.conninfo = schema.ensure_jobs_schema(store.url, str(store_schema))
        self.jobs_schema = schema.jobs_schema_of(str(store_schema))
        self._events = sql.Identifier(self.store_schema, "events")
        self.app = make_app(self.conninfo)
        self._pool: ConnectionPool[Any] | None = None
        self._guard = threading.Lock()
        self._where = redact(store.url)

    def _connections(self) -> ConnectionPool[Any]:
        with self._guard:
            if self._pool is None:
                # No check per checkout (a round trip per submission): a connection that
                # broke fails its submission with StoreUnavailable and leaves the pool.
                self._pool = ConnectionPool(self.conninfo, min_size=1, max_size=4, open=True,
                                            kwargs={"connect_timeout": schema.CONNECT_TIMEOUT_S})
            return self._pool

    def submit(self, store: Store, spec: JobSpec) -> Submission:
        """Queue `spec`; AlreadyQueued if its run has a job waiting or running.

        The job and its `job.queued` event commit in one transaction (the store's schema and
        the jobs schema share the database), so a caller never gets an error for a job that
        was queued. A submission again with the same ticket (`ticket_for(run, key)`) returns
        the Submission of the first, whether or not its job has run since."""
        attempt = next_attempt(store, spec.run_id, spec.kind, spec.params)
        return self._queue(spec, "submit", lambda conn: self._submit_in(conn, spec, attempt))

    def _submit_in(self, conn: psycopg.Connection[Any], spec: JobSpec,
                   attempt: int | None) -> Submission:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key(spec.run_id),))
        known = self._queued(conn, spec)
        if known is not None:
            return known
        row = conn.execute(
            "SELECT id, status, args->'job'->>'ticket' FROM procrastinate_jobs WHERE "
            f"queueing_lock = %s AND status IN {_OPEN} ORDER BY id LIMIT 1",
            (spec.run_id,)).fetchone()
        if row is not None:
            state = "waiting" if row[1] == "todo" else "running"
            raise AlreadyQueued(
                f"run {spec.run_id!r} already has a job {state} ({row[2]}); follow it "
                f"on /v1/runs/{spec.run_id}/events and submit again when it has "
                "finished", run_id=spec.run_id, job=row[2])
        job_id = self.app.configure_task(
            TASK, lock=spec.run_id, queueing_lock=spec.run_id, queue=self.queue,
            priority=self._fair_priority(conn, spec.run_id),
            connection=conn).defer(job=spec.to_args())
        return self._record(conn, spec, attempt, job_id)

    def _queue(self, spec: JobSpec, operation: str,
               queue_in: Callable[[psycopg.Connection[Any]], Submission]) -> Submission:
        """Run `queue_in` in one transaction; on a lost connection, learn from a fresh one
        whether it committed, and try once more when nothing of it was stored (a connection
        the pool kept after the database ended it)."""
        for tries_left in (1, 0):
            try:
                with self._connections().connection() as conn, conn.transaction():
                    return queue_in(conn)
            except psycopg.OperationalError as exc:
                try:
                    with schema.connect(self.conninfo) as fresh:
                        known = self._queued(fresh, spec)
                except psycopg.Error as again:
                    raise StoreUnavailable(
                        f"cannot tell whether job {spec.ticket} of run {spec.run_id!r} was "
                        f"queued at {self._where} ({exc}; then {again}); submit again with the "
                        "same ticket (`--key`, `Idempotency-Key`) to learn it without queueing "
                        "twice", backend="postgres", operation=operation,
                        job=spec.ticket) from exc
                if known is not None:
                    return known
                self._connections().check()  # drop every connection the database ended
                if not tries_left:
                    raise StoreUnavailable(
                        f"cannot queue a job at {self._where}: {exc}; nothing of it is stored",
                        backend="postgres", operation=operation) from exc
            except psycopg.Error as exc:
                raise StoreUnavailable(f"cannot queue a job at {self._where}: {exc}",
                                       backend="postgres", operation=operation) from exc
        raise AssertionError("unreachable")

    def _queued(self, conn: psycopg.Connection[Any], spec: JobSpec) -> Submission | None:
        """The Submission already recorded for `spec`'s ticket, read on `conn`."""
        row = conn.execute(sql.SQL(
            "SELECT seq, data FROM {} WHERE run_id = %s AND kind = 'job.queued' AND "
            "data->>'job' = %s ORDER BY seq LIMIT 1").format(self._events),
            (spec.stream, spec.ticket)).fetchone()
        return None if row is None else submission_of(spec.run_id, int(row[0]), row[1])

    def _record(self, conn: psycopg.Connection[Any], spec: JobSpec, attempt: int | None,
                job_id: int | None) -> Submission:
        """Append `job.queued` to the run's events in the transaction that queued the job."""
        data = queued_event(spec, attempt, job_id)
        row = conn.execute(sql.SQL(
            "INSERT INTO {} (run_id, ts, kind, data) VALUES (%s, %s, 'job.queued', "
            "%s::jsonb) RETURNING seq").format(self._events),
            (spec.stream, time.time(), json_text(data, "event"))).fetchone()
        assert row is not None
        return Submission(spec.run_id, spec.ticket, spec.kind, attempt, int(row[0]), job_id)

    def schedule(self, store: Store, spec: JobSpec, at: float) -> Submission:
        """Queue `spec` to start at `at` (POSIX seconds): a waiting run's resume when its
        timer is due. Unlike `submit` it takes no queueing lock (the job that schedules it
        still holds it); the run lock still serializes it, and a run that no longer waits
        when it starts ends it without an attempt."""
        when = datetime.datetime.fromtimestamp(at, datetime.UTC)

        def schedule_in(conn: psycopg.Connection[Any]) -> Submission:
            job_id = self.app.configure_task(
                TASK, lock=spec.run_id, queue=self.queue, schedule_at=when,
                priority=self._fair_priority(conn, spec.run_id),
                connection=conn).defer(job=spec.to_args())
            return self._record(conn, spec, None, job_id)

        return self._queue(spec, "schedule", schedule_in)

    def _fair_priority(self, conn: psycopg.Connection[Any], run_id: str) -> int:
        """Minus the jobs the run's owner has waiting or running (see the module's note)."""
        if not self.fair:
            return 0
        runs = sql.Identifier(self.store_schema, "runs")
        query = sql.SQL("SELECT count(*) FROM procrastinate_jobs j JOIN {} r ON r.run_id = j.lock "
                        f"WHERE j.status IN {_OPEN} AND r.owner = (SELECT owner FROM {{}} WHERE "
                        "run_id = %s)").format(runs, runs)
        row = conn.execute(query, (run_id,)).fetchone()
        return -int(row[0]) if row is not None else 0

    def cancel(self, store: Store, run_id: str, by: str) -> list[dict[str, Any]]:
        """Cancel the run's waiting jobs (`job.cancelled` at once) and ask its running job's
        worker to stop it (`job.cancel_requested`; the worker records `job.cancelled`)."""
        found: list[tuple[JobSpec, str]] = []
        try:
            with self._connections().connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key(run_id),))
                rows = conn.execute(
                    f"SELECT id, status, args->'job' FROM procrastinate_jobs WHERE lock = %s "
                    f"AND status IN {_OPEN} ORDER BY id", (run_id,)).fetchall()
                for job_id, status, args in rows:
                    conn.execute("SELECT procrastinate_cancel_job_v1(%s, %s, false)",
                                 (job_id, status == "doing"))
                    try:
                        spec = JobSpec.from_args(args or {})
                    except Exception:  # not one of ours: cancelled in the queue all the same
                        continue
                    found.append((spec, "queued" if status == "todo" else "running"))
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot cancel a job at {self._where}: {exc}",
                                   backend="postgres", operation="cancel") from exc
        for spec, state in found:
            if state == "queued":
                record_cancelled(store, spec, by=by, worker=None, state="queued")
            else:
                store.append_event(spec.stream, "job.cancel_requested", {
                    "job": spec.ticket, "kind": spec.kind, "by": by})
        return [{"job": spec.ticket, "state": state} for spec, state in found]

    def owned_jobs(self, owner: str) -> int:
        """Jobs of `owner`'s runs waiting or running, whoever queued them (every server and
        `frostline submit` of this database). A resume scheduled for later (a waiting run's
        timer) holds nothing until it is due."""
        runs = sql.Identifier(self.store_schema, "runs")
        query = sql.SQL("SELECT count(*) FROM procrastinate_jobs j JOIN {} r ON r.run_id = j.lock "
                        f"WHERE j.status IN {_OPEN} AND r.owner = %s AND "
                        "(j.scheduled_at IS NULL OR j.scheduled_at <= now())").format(runs)
        row = self._read(lambda c: c.execute(query, (owner,)).fetchone())
        return int(row[0])

    def workers(self) -> list[dict[str, Any]]:
        """Registered workers, with their last heartbeat and the jobs they run. A worker
        silent for longer than its `stalled_after` is `stalled` (its jobs are being taken
        back); a live worker deletes its registration once it is silent for `forget_after`."""
        rows, running = self._read(lambda c: (c.execute(_WORKERS).fetchall(),
                                              c.execute(_RUNNING).fetchall()))
        jobs: dict[Any, list[dict[str, Any]]] = {}
        for worker_id, job_id, lock, args, started in running:
            jobs.setdefault(worker_id, []).append({
                "job": (args or {}).get("job", {}).get("ticket"), "queue_job_id": job_id,
                "kind": (args or {}).get("job", {}).get("kind"), "run_id": lock,
                "started_at": None if started is None else float(started)})
        out = []
        for r in rows:
            silent, limit = float(r[9]), float(r[10] or DEFAULT_STALLED_AFTER_S)
            out.append({"worker_id": r[0], "last_heartbeat": float(r[1]), "name": r[2],
                        "host": r[3], "pid": r[4], "concurrency": r[5], "queues": r[6],
                        "sandbox": r[7], "started_at": r[8], "silent_s": round(silent, 3),
                        "stalled_after_s": limit,
                        "state": "stalled" if silent > limit else "live",
                        "jobs": jobs.get(r[0], [])})
        return out

    def failed_jobs(self, limit: int = FAILED_SHOWN) -> list[dict[str, Any]]:
        """Jobs that failed for good among the queue's latest `RECENT_JOBS` finished ones,
        newest first, with the error and the worker their `job.finished` event recorded
        (`retries_exhausted`, `store_refused`, …)."""
        query = sql.SQL(_FAILED).format(recent=sql.Literal(RECENT_JOBS), events=self._events,
                                        author_stream=sql.Literal(AUTHOR_STREAM))
        rows = self._read(lambda c: c.execute(query, (self.queue, limit)).fetchall())
        out = []
        for job_id, lock, args, tries, data, failed_at in rows:
            job, finished = (args or {}).get("job", {}), _as_dict(data)
            error = finished.get("error") or _as_dict(finished.get("outcome")).get("error")
            out.append({"job": job.get("ticket"), "queue_job_id": job_id,
                        "kind": job.get("kind"), "run_id": lock,
                        "worker": finished.get("worker"),
                        "failed_at": None if failed_at is None else float(failed_at),
                        "tries": int(tries), "error": error or {
                            "code": "internal", "message": "the job failed; see the worker's log"}})
        return out

    def stats(self) -> QueueStats:
        def read(conn: psycopg.Connection[Any]) -> QueueStats:
            depth = {"queued": 0, "running": 0}
            for status, count in conn.execute(
                    "SELECT status, count(*) FROM procrastinate_jobs WHERE queue_name = %s "
                    f"AND status IN {_OPEN} GROUP BY status", (self.queue,)).fetchall():
                depth["queued" if status == "todo" else "running"] = int(count)
            return QueueStats(depth, _histogram(conn, "wait"), _histogram(conn, "run"))

        stats: QueueStats = self._read(read)
        return stats

    def _read(self, fn: Any) -> Any:
        try:
            with self._connections().connection() as conn:
                return fn(conn)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot read the job queue at {self._where}: {exc}",
                                   backend="postgres", operation="queue") from exc

    def close(self) -> None:
        with self._guard:
            if self._pool is not None:
                self._pool.close()
                self._pool = None


def _histogram(conn: psycopg.Connection[Any], column: str) -> Histogram:
    row = conn.execute(_latencies(column)).fetchone()  # type: ignore[call-overload,unused-ignore]
    assert row is not None
    finite = [le for le in LATENCY_BUCKETS if le != float("inf")]
    count = int(row[len(finite)])
    buckets = (*zip(finite, (int(v) for v in row[:len(finite)]), strict=True),
               (float("inf"), count))
    return Histogram(tuple(buckets), count, float(row[len(finite) + 1]))


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


def _key(run_id: str) -> int:
    digest = hashlib.sha256(f"frostline\0submit\0{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)

