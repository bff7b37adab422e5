"""Answers to a run's waits over HTTP: approve or reject an approval, send an event, list the
waits. Owner-scoped like every run route (another principal's run is a 404), with the one
error shape: an unknown wait is a 404, a second answer or a finished run a 409 (the first
answer stands, nothing changes), a malformed answer a 400/422.

Approvals are the exception to owner scope (docs/approvals.md): they are answered by a second
party. `GET /v1/approvals` lists those the caller may answer, and the answer names the run's
owner (`?owner=alice`); the run's owner answering its own approval, where self_approval is
not configured, is a 403 that says who may.

An answer is committed here; the run goes on in its next attempt, which the service starts
itself (`frostline.service.resumer`) or a worker runs as a queued resume job, in one of the
owner's executing slots. Signals and approvals count against the caller's answers per minute
(429 and Retry-After beyond, nothing committed).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from frostline.contract.records import RunRecord
from frostline.embedded.answers import approvals_for, approve, signal, waits_of
from frostline.errors import RunNotFound
from frostline.service import operations
from frostline.service.dependencies import OwnedRun, Principal, Roles, State
from frostline.service.resumer import wake
from frostline.service.schemas import ApprovalAnswer, SignalBody

router = APIRouter(tags=["waits"])


@router.get("/v1/runs/{run_id}/waits")
def list_waits(run: OwnedRun, state: State) -> dict[str, Any]:
    """The waits the run reached, each with its answer (null while it waits)."""
    return operations.public(run, {"run_id": run.run_id, "status": run.status,
                                   "waits": waits_of(state.store, run.run_id)})


@router.get("/v1/approvals")
def list_approvals(who: Principal, held: Roles, state: State) -> dict[str, Any]:
    """The approvals waiting for an answer that the caller may give, oldest first: each with
    the run's `owner`, its `run_id`, the wait's `identity` and what it asks (`payload`)."""
    return {"approvals": approvals_for(state.store, state.approvals, who, held)}


def approvable_run(run_id: str, who: Principal, held: Roles, state: State,
                   owner: str | None = None) -> RunRecord:
    """The run `run_id` of `owner` (the caller's own without one), or 404 like any missing
    run, also for a caller who approves nothing (so no body it sends tells it which of another
    principal's runs exist); whether it may answer this approval is decided with the answer."""
    run = state.store.find_run(owner or who, run_id)
    if run is None or (run.owner != who and not state.approvals.approves_anything(who, held)):
        raise RunNotFound(f"no run {run_id!r}", run_id=run_id)
    return run


@router.post("/v1/runs/{run_id}/approvals/{identity:path}")
def answer_approval(identity: str, body: ApprovalAnswer,
                    run: Annotated[RunRecord, Depends(approvable_run)], who: Principal,
                    held: Roles, state: State) -> dict[str, Any]:
    """Approve (or, with `approved: false`, reject) the approval the run waits for at
    `identity` (URL-encode it: `orchestrate%2F%231%40%3A0`). `owner` names the run's owner
    when it is not the caller; who may answer is configured (403 otherwise, saying who)."""
    state.limits.admit_answer(who)
    answer = approve(state.store, run.run_id, identity, by=who, approved=body.approved,
                     reason=body.reason, policy=state.approvals, roles=held)
    wake(state.store, state.queue, run.run_id, time.time(), limits=state.limits)
    return operations.public(run, {"run_id": run.run_id, "owner": run.owner, **answer})


@router.post("/v1/runs/{run_id}/signals/{name}")
def send_signal(name: str, body: SignalBody, run: OwnedRun, who: Principal,
                state: State) -> dict[str, Any]:
    """Send the event `name` with its JSON body: delivered to the earliest wait for it, or
    kept until one is reached."""
    state.limits.admit_answer(who)
    sent = signal(state.store, run.run_id, name, body.data, by=who)
    wake(state.store, state.queue, run.run_id, time.time(), limits=state.limits)
    return operations.public(run, sent)
