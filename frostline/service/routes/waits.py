"""Answers to a run's waits over HTTP: approve or reject an approval, send an event, list the
waits. Owner-scoped like every run route (another principal's run is a 404), with the one
error shape: an unknown wait is a 404, a second answer or a finished run a 409 (the first
answer stands, nothing changes), a malformed answer a 400/422.

An answer is committed here; the run goes on in its next attempt, which the service starts
itself (`frostline.service.resumer`) or a worker runs as a queued resume job, in one of the
owner's executing slots. Signals and approvals count against the caller's answers per minute
(429 and Retry-After beyond, nothing committed).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from frostline.embedded.answers import approve, signal, waits_of
from frostline.service import operations
from frostline.service.dependencies import OwnedRun, Principal, State
from frostline.service.resumer import wake
from frostline.service.schemas import ApprovalAnswer, SignalBody

router = APIRouter(tags=["waits"])


@router.get("/v1/runs/{run_id}/waits")
def list_waits(run: OwnedRun, state: State) -> dict[str, Any]:
    """The waits the run reached, each with its answer (null while it waits)."""
    return operations.public(run, {"run_id": run.run_id, "status": run.status,
                                   "waits": waits_of(state.store, run.run_id)})


@router.post("/v1/runs/{run_id}/approvals/{identity:path}")
def answer_approval(identity: str, body: ApprovalAnswer, run: OwnedRun, who: Principal,
                    state: State) -> dict[str, Any]:
    """Approve (or, with `approved: false`, reject) the approval the run waits for at
    `identity` (URL-encode it: `orchestrate%2F%231%40%3A0`)."""
    state.limits.admit_answer(who)
    answer = approve(state.store, run.run_id, identity, by=who, approved=body.approved,
                     reason=body.reason)
    wake(state.store, state.queue, run.run_id, time.time(), limits=state.limits)
    return operations.public(run, {"run_id": run.run_id, **answer})


@router.post("/v1/runs/{run_id}/signals/{name}")
def send_signal(name: str, body: SignalBody, run: OwnedRun, who: Principal,
                state: State) -> dict[str, Any]:
    """Send the event `name` with its JSON body: delivered to the earliest wait for it, or
    kept until one is reached."""
    state.limits.admit_answer(who)
    sent = signal(state.store, run.run_id, name, body.data)
    wake(state.store, state.queue, run.run_id, time.time(), limits=state.limits)
    return operations.public(run, sent)
