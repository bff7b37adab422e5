"""Cancelling a run: the one place every surface (`frostline cancel`, `POST
/v1/runs/{id}/cancel`, the MCP tool `cancel_run`) stops a run its owner no longer wants.

A queued job is taken out of its queue and never starts; a running one has its attempt stopped
the way a worker stops one on shutdown — the script is killed, every call already dispatched
completes and commits (the fail-closed rules hold: no paid call is left half-done), the run
lock is released — and the attempt ends `cancelled`. A waiting run is cancelled too: its
waiting attempt ends `cancelled` and nothing resumes it. Each step is recorded with who asked
(`by`): `job.cancel_requested`, `job.cancelled`, `attempt_cancelled`. A run that has finished
has nothing to cancel (NothingToCancel, HTTP 409).

Who stops a running job depends on where it runs: the queue that holds it (the serving
process's pool, or Procrastinate's abort request to a worker), this process's own `Interrupts`
(an MCP server's `run_script`), or — asked with no queue at hand — the process that runs it,
which reads the `job.cancel_requested` event (`frostline.embedded.pool`).
"""

from __future__ import annotations

import time
from typing import Any

from frostline.contract.status import RunStatus
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import JobQueue, close_cancelled, open_jobs, wait_job
from frostline.embedded.tickets import job_stream
from frostline.errors import NothingToCancel, RunBusy, RunNotFound
from frostline.store.base import Store


def cancel_run(store: Store, run_id: str, *, by: str, queue: JobQueue | None = None,
               local: Interrupts | None = None) -> dict[str, Any]:
    """Cancel the queued or running job of `run_id` (its store key) for `by`; return the jobs
    it found, each with the state it was in (queued or running).

    Example: ``cancel_run(store, "r1", by="alice", queue=pool)``
    """
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r}", run_id=run_id)
    jobs: list[dict[str, Any]] = []
    if local is not None and local.running(run_id):
        local.cancel(run_id, by)
        jobs.append({"job": None, "state": "running"})
    open_ = open_jobs(store, run_id)
    handled = queue.cancel(store, run_id, by) if open_ and queue is not None else []
    jobs.extend(handled)
    seen = {j["job"] for j in handled}
    for ticket, state in open_.items():
        if ticket not in seen:  # held by another process: it reads the request and stops it
            store.append_event(job_stream(run_id, ticket), "job.cancel_requested",
                               {"job": ticket, "by": by})
            jobs.append({"job": ticket, "state": "queued" if state == "queued" else "running"})
    attempt = None
    if not jobs and run.status == RunStatus.WAITING:
        try:
            with store.run_lock(run_id):
                attempt = close_cancelled(store, run_id, by, running=False)
        except RunBusy:  # a resume took the run this instant: cancel that one instead
            raise NothingToCancel(f"run {run.name!r} is being resumed right now; cancel it "
                                  "again", run_id=run.name, status=run.status) from None
    if not jobs and attempt is None:
        raise NothingToCancel(
            f"run {run.name!r} is {run.status} with no job queued or running: there is "
            "nothing to cancel (a finished run stays as it is; start a new attempt instead)",
            run_id=run.name, status=run.status)
    return {"run_id": run_id, "by": by, "jobs": jobs, "attempt": attempt}


def settled(store: Store, found: dict[str, Any], wait_s: float, *,
            local: Interrupts | None = None) -> dict[str, Any]:
    """`cancel_run`'s answer once each job it found has stopped, or `wait_s` passed: every
    job with the state it was in (`was`) and its state now; the run's status."""
    run_id = found["run_id"]
    jobs = []
    deadline = time.monotonic() + wait_s
    for job in found["jobs"]:
        ticket = job["job"]
        if ticket is None and local is not None:  # an attempt this process runs itself
            # until it has stopped and been closed (its caller forgets the cancellation then)
            while local.cancelling(run_id) and time.monotonic() < deadline:
                time.sleep(0.02)
            jobs.append({"job": None, "was": job["state"],
                         "state": "running" if local.cancelling(run_id) else "cancelled"})
            continue
        now = wait_job(store, run_id, ticket, max(0.0, deadline - time.monotonic()))
        jobs.append({"job": ticket, "was": job["state"],
                     "state": now.state if now is not None else job["state"]})
    run = store.get_run(run_id)
    return {"run_id": run_id, "by": found["by"], "status": run.status if run else None,
            "attempt": found.get("attempt"), "jobs": jobs}
