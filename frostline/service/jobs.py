"""How the API answers for a job it accepted: `202 Accepted` with the run, the job and the
attempt it will open, and a `Location` to poll; or, when the client asked to `?wait=SECONDS`
and the job ended in time, `200` with its outcome.

Routes never run a script: they hand the job to the queue (the in-process pool on the embedded
default, Procrastinate's queue for the workers of a PostgreSQL store) and return.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Annotated, Any

from fastapi import Header, Query
from fastapi.responses import JSONResponse

from frostline.contract.records import RunRecord
from frostline.embedded.jobs import JobSpec, Submission, queued_submission, wait_job
from frostline.embedded.tickets import ticket_for
from frostline.service.dependencies import ServiceState
from frostline.service.operations import public

MAX_WAIT_S = 300.0

Wait = Annotated[float, Query(ge=0, le=MAX_WAIT_S, description=(
    "Seconds to wait for the job's outcome before answering; 0 answers 202 at once"))]

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", max_length=200, description=(
        "A key the client chose for this submission: sent again (after a timeout or an "
        "error), it answers for the job the first one queued instead of queueing another"))]

ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"description": "Accepted: the job is queued; poll `Location` or follow the run's "
                         "events"},
    200: {"description": "The job ended within `?wait=` seconds: its state and outcome"},
}


def accept(state: ServiceState, who: str, run: RunRecord, spec: JobSpec,
           wait: float, key: str | None = None) -> JSONResponse:
    """Queue `spec` for `who`'s `run` in one of `who`'s executing slots (429 when they are
    all taken; see `frostline.service.limits`) and answer for it. With an idempotency `key`,
    a job already queued under it is answered for instead."""
    if key:
        spec = replace(spec, ticket=ticket_for(run.run_id, key))
        known = queued_submission(state.store, run.run_id, spec.ticket)
        if known is not None:
            return answer(state, run, spec, known, wait)
    with job_slot(state, who):
        submission = state.queue.submit(state.store, spec)
    return answer(state, run, spec, submission, wait)


def job_slot(state: ServiceState, who: str) -> AbstractContextManager[None]:
    """One of `who`'s executing slots for the job the block queues (held by the job after)."""
    return state.limits.job_slot(who, lambda: state.queue.owned_jobs(who))


def answer(state: ServiceState, run: RunRecord, spec: JobSpec, submission: Submission,
           wait: float) -> JSONResponse:
    """The answer for a queued job: 202, or 200 once it ended within `wait` seconds. The
    request waits outside any slot: the job holds its own. Bodies and the Location name the
    run as its owner does."""
    location = job_location(run, submission.ticket)
    headers = {"Location": location}
    body = {**submission.to_dict(), "location": location}
    if wait > 0:
        done = wait_job(state.store, spec.run_id, submission.ticket, wait)
        if done is not None and done.done:
            return JSONResponse(public(run, done.to_dict()), status_code=200, headers=headers)
        if done is not None:
            body["state"] = done.state
    return JSONResponse(public(run, body), status_code=202, headers=headers)


def job_location(run: RunRecord, ticket: str) -> str:
    return f"/v1/runs/{run.name}/jobs/{ticket}"
