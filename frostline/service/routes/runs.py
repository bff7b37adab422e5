"""Runs: create one (its first attempt is queued as a job), list the caller's, read one in
detail, cancel one (`frostline.embedded.cancel`).

Creating a run counts against the caller's runs per minute, and its first attempt's job holds
one of the caller's executing slots from the moment it is queued until it ends, `?wait=` or
not; see `frostline.service.limits`.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import JSONResponse

from frostline.contract.records import RunRecord, run_key
from frostline.contract.status import RunStatus
from frostline.embedded.authoring import author_params
from frostline.embedded.cancel import cancel_run
from frostline.embedded.jobs import (
    JobSpec,
    job_state,
    open_jobs,
    queued_submission,
    wait_job,
)
from frostline.embedded.tickets import new_ticket, ticket_for
from frostline.service import operations
from frostline.service.dependencies import OwnedOrAuthoring, OwnedRun, Principal, State
from frostline.service.jobs import ACCEPTED, MAX_WAIT_S, IdempotencyKey, Wait, answer, job_slot
from frostline.service.schemas import CreateRun

router = APIRouter(tags=["runs"])


@router.post("/v1/runs", status_code=202, responses={
    **ACCEPTED, 422: {"description": "The script was rejected (or the body is malformed)"}})
def create_run(body: CreateRun, who: Principal, state: State, wait: Wait = 0,
               idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Create a run with a script, args and envelope, and queue its first attempt. Sent again
    with the same `Idempotency-Key`, it answers for the run and job the first one made.

    With `task` and `model` instead of `script`, the job queued is an authoring
    (docs/authoring.md): a model endpoint configured where the job runs (this server, or the
    workers) writes the script, and an accepted one runs as the run's first attempt. The
    job's outcome is that attempt's, with `author` (every draft's verdict); when no draft is
    accepted its status is `not_authored`, and a model that fails or answers garbage ends the
    job with its error (code `model`, the drafts so far under `author`): either way nothing is
    stored as a run (`removed: true`: the name is free again), and the job's answer stays
    readable at its Location. Until a draft is accepted the run is listed nowhere and its
    routes answer 409; only its job and `cancel` answer for it."""
    store, catalog = state.store, state.catalog
    name = body.run_id or _run_name(who, idempotency_key)
    kind = "attempt" if body.script is not None else "author"
    if body.script is not None:
        operations.precheck(body.script, body.envelope, catalog)
    envelope = operations.envelope_dict(body.envelope, catalog)
    operations.precheck_args(body.args)
    # Names are per principal: only the caller's own runs can be in the way.
    existing = store.find_run(who, name)
    if idempotency_key and (existing is not None or kind == "author"):
        # An authoring that failed removed its run, yet its job answers for the key.
        key = existing.run_id if existing is not None else run_key(who, name)
        ticket = ticket_for(key, idempotency_key, kind)
        known = queued_submission(store, key, ticket)
        if known is not None:
            run = existing or RunRecord(key, envelope, "removed", who, "script", 0.0, name)
            return answer(state, run, JobSpec(known.kind, key, {}, ticket), known, wait)
    if existing is not None:
        raise HTTPException(409, {"code": "exists", "message": f"run {name!r} already exists"
                                  + (" (a model is writing its script)"
                                     if existing.status == RunStatus.AUTHORING else "")})
    # Both limits are checked before anything is stored: a refused run leaves no trace.
    with job_slot(state, who):
        state.limits.admit_run(who)
        # A task's run only holds the name until a draft is accepted (embedded.authoring).
        run = store.create_run(name, envelope, owner=who, authoring=kind == "author")
        ticket = (ticket_for(run.run_id, idempotency_key, kind) if idempotency_key
                  else new_ticket(kind))
        if body.script is not None:
            spec = JobSpec("attempt", run.run_id, {"source": body.script, "args": body.args},
                           ticket)
        else:
            assert body.task is not None and body.model is not None
            spec = JobSpec("author", run.run_id, author_params(
                body.task, body.model, max_rewrites=body.max_rewrites, args=body.args),
                ticket)
        try:
            submission = state.queue.submit(store, spec)
        except BaseException:
            if kind == "author":  # not queued: the name is not held for nothing
                store.discard_authoring(run.run_id)
            raise
    return answer(state, run, spec, submission, wait)


def _run_name(who: str, key: str | None) -> str:
    """A new run's name: from the idempotency key when there is one (a retry names the same
    run), else random."""
    if key:
        return "run-" + hashlib.sha256(f"{who}\0{key}".encode()).hexdigest()[:12]
    return f"run-{secrets.token_hex(6)}"


@router.get("/v1/runs")
def list_runs(who: Principal, state: State) -> dict[str, Any]:
    """The caller's runs, newest first."""
    return {"runs": [operations.public(r, operations.run_summary(state.store, r))
                     for r in state.store.list_runs(owner=who)]}


@router.get("/v1/runs/{run_id}")
def get_run(run: OwnedRun, state: State) -> dict[str, Any]:
    """A run with its attempts and the identity timeline across attempts."""
    return operations.public(run, operations.run_detail(
        state.store, run, executing=bool(open_jobs(state.store, run.run_id))))


CancelWait = Annotated[float, Query(ge=0, le=MAX_WAIT_S, description=(
    "Seconds to wait for a running job to stop before answering; 0 answers 202 at once"))]


@router.post("/v1/runs/{run_id}/cancel", responses={
    200: {"description": "Cancelled: every job of the run ended (its attempt `cancelled`)"},
    202: {"description": "A running job is still stopping; follow it on `jobs[].location`"},
    409: {"description": "The run has finished: nothing is queued, running or waiting"}})
def cancel(run: OwnedOrAuthoring, who: Principal, state: State,
           wait: CancelWait = 30) -> JSONResponse:
    """Cancel the run's queued job (it never starts) or running job (its attempt is stopped
    and ends `cancelled`; a call already dispatched completes and commits first); a waiting
    run is cancelled too. Each job is reported with its state now."""
    store = state.store
    found = cancel_run(store, run.run_id, by=who, queue=state.queue)
    jobs, stopping = [], False
    for job in found["jobs"]:
        ticket = job["job"]
        now = (wait_job(store, run.run_id, ticket, wait) if job["state"] == "running"
               else job_state(store, run.run_id, ticket))
        current = now.state if now is not None else job["state"]
        stopping = stopping or current not in ("cancelled", "finished", "interrupted")
        jobs.append({"job": ticket, "was": job["state"], "state": current,
                     "location": f"/v1/runs/{run.name}/jobs/{ticket}"})
    latest = store.get_run(run.run_id)
    body = {"run_id": run.name, "by": who, "status": latest.status if latest else None,
            "jobs": jobs}
    return JSONResponse(body, status_code=202 if stopping else 200)
