"""How the API answers for a job it accepted: `202 Accepted` with the run, the job and the
attempt it will open, and a `Location` to poll; or, when the client asked to `?wait=SECONDS`
and the job ended in time, `200` with its outcome.

Routes never run a script: they hand the job to the queue (the in-process pool on the embedded
default, Procrastinate's queue for the workers of a PostgreSQL store) and return.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from fastapi.responses import JSONResponse

from frostline.contract.records import RunRecord
from frostline.embedded.jobs import JobSpec, wait_job
from frostline.service.dependencies import ServiceState
from frostline.service.operations import public

MAX_WAIT_S = 300.0

Wait = Annotated[float, Query(ge=0, le=MAX_WAIT_S, description=(
    "Seconds to wait for the job's outcome before answering; 0 answers 202 at once"))]

ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"description": "Accepted: the job is queued; poll `Location` or follow the run's "
                         "events"},
    200: {"description": "The job ended within `?wait=` seconds: its state and outcome"},
}


def accept(state: ServiceState, run: RunRecord, spec: JobSpec, wait: float) -> JSONResponse:
    """Queue `spec` for `run` and answer for it (202, or 200 once it ended within `wait`
    seconds). Bodies and the Location name the run as its owner does."""
    submission = state.queue.submit(state.store, spec)
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
