"""Attempts of a run: a new one from a given script, or one a model writes as a repair.

Both hold the run exclusively while they execute (409 for a second one in this process), and
one of the caller's executing slots (429 beyond its limit, `frostline.service.limits`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from frostline.service import operations
from frostline.service.dependencies import OwnedRun, Principal, State
from frostline.service.schemas import AddAttempt, RepairRequest

router = APIRouter(tags=["runs"])


@router.post("/v1/runs/{run_id}/attempts", status_code=201)
def add_attempt(body: AddAttempt, run: OwnedRun, who: Principal, state: State) -> dict[str, Any]:
    """Gate the script against the frozen prefix, then run it as a new attempt."""
    operations.precheck(body.script, run.envelope, state.catalog)
    operations.precheck_args(body.args)
    with state.limits.executing(who):
        attempt = state.executing.exclusively(run.run_id, lambda: state.services.execute(
            state.store, run.run_id, body.script, body.args))
    return operations.public(run, {"run_id": run.run_id, "attempt": attempt})


@router.post("/v1/runs/{run_id}/repair")
def repair(body: RepairRequest, run: OwnedRun, who: Principal, state: State) -> dict[str, Any]:
    """Ask a model for a repair of the last failed attempt; optionally execute it."""
    with state.limits.executing(who):
        result = state.executing.exclusively(run.run_id, lambda: state.services.repair(
            state.store, run.run_id, body.model, body.max_rewrites, body.execute))
    return operations.public(run, result)
