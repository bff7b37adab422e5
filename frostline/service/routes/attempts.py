"""Attempts of a run: a new one from a given script, or one a model writes as a repair.

Both are queued as jobs; a run has at most one job waiting or running (409 for another). Each
job holds one of the caller's executing slots from the moment it is queued until it ends,
`?wait=` or not: 429 beyond the limit, `frostline.service.limits`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse

from frostline.embedded.jobs import JobSpec
from frostline.errors import RunNotFound
from frostline.service import operations
from frostline.service.dependencies import OwnedRun, Principal, State
from frostline.service.jobs import ACCEPTED, IdempotencyKey, Wait, accept
from frostline.service.schemas import AddAttempt, GateRequest, RepairRequest

router = APIRouter(tags=["runs"])


@router.post("/v1/runs/{run_id}/attempts", status_code=202, responses=ACCEPTED)
def add_attempt(body: AddAttempt, run: OwnedRun, who: Principal, state: State,
                wait: Wait = 0, idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Queue the script as a new attempt (gated against the frozen prefix when it runs)."""
    operations.precheck(body.script, run.envelope, state.catalog, store=state.store,
                        run_id=run.run_id)
    operations.precheck_args(body.args)
    params: dict[str, Any] = {"source": body.script, "args": body.args}
    if body.relocation is not None:
        params["relocation"] = body.relocation
    return accept(state, who, run, JobSpec("attempt", run.run_id, params), wait,
                  idempotency_key)


@router.post("/v1/runs/{run_id}/repair", status_code=202, responses=ACCEPTED)
def repair(body: RepairRequest, run: OwnedRun, who: Principal, state: State,
           wait: Wait = 0, idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Queue a repair: a model rewrites the last failed attempt; optionally execute it."""
    return accept(state, who, run, JobSpec("repair", run.run_id, {
        "model": body.model, "max_rewrites": body.max_rewrites, "execute": body.execute}), wait,
        idempotency_key)


@router.post("/v1/runs/{run_id}/gate", responses={
    200: {"description": "The verdict (`accepted`, counterexamples; `trace` after a dry "
                         "replay), as `frostline gate --json` prints it"},
    422: {"description": "The candidate does not parse, or the body is malformed"}})
def gate(body: GateRequest, run: OwnedRun, state: State) -> dict[str, Any]:
    """Would this script be admitted as the run's next attempt? The gate against the frozen
    prefix and, under relocation `rebind`, the dry replay (in the runner, no provider
    reachable). Spends nothing and records nothing."""
    return operations.public(run, operations.gate_verdict(
        state.store, run.run_id, body.script, runner=state.services.dry_runner(),
        relocation=body.relocation, catalog=state.catalog))


@router.get("/v1/runs/{run_id}/attempts/{number}/result")
def attempt_result(number: Annotated[int, Path(ge=1, le=2**31 - 1)], run: OwnedRun,
                   state: State) -> dict[str, Any]:
    """One attempt's result, whole: what a run's page leaves out when it is large (the page
    gives `result_bytes` and this `result_href` instead)."""
    attempt = state.store.get_attempt(run.run_id, number)
    if attempt is None:
        raise RunNotFound(f"run {run.name!r} has no attempt {number}", run_id=run.name,
                          attempt=number)
    return operations.public(run, {"run_id": run.run_id, "attempt": number,
                                   "status": attempt.status, "result": attempt.result})
