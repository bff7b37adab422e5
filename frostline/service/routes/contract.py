"""What the revision contract keeps for a run: its certificate, the orphans of each attempt, and
the reconciliation of a call whose outcome the store could not record."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from frostline.service import operations
from frostline.service.dependencies import OwnedRun, State
from frostline.service.schemas import ReconcileRequest

router = APIRouter()


@router.get("/v1/runs/{run_id}/certificate", tags=["contract"])
def certificate(run: OwnedRun, state: State, verify: bool = True,
                deep: bool = False) -> dict[str, Any]:
    """The run's certificate, checked against the store when `verify` is true: against the
    digests the store recorded at commit time, and with `deep` (which implies `verify`) by
    hashing every stored result again, as a periodic audit does."""
    return operations.public(run, operations.certificate(
        state.store, run.run_id, verify=verify or deep, deep=deep))


@router.get("/v1/runs/{run_id}/orphans", tags=["contract"])
def orphans(run: OwnedRun, state: State) -> dict[str, Any]:
    """Committed identities that each attempt did not invoke."""
    return operations.public(run, operations.orphans(state.store, run.run_id))


@router.post("/v1/runs/{run_id}/reconcile", tags=["runs"])
def reconcile(body: ReconcileRequest, run: OwnedRun, state: State) -> dict[str, Any]:
    """Resolve an unresolved call: abandon it, or write back its known result (exactly one;
    a running attempt of the run makes it answer 409 `run_busy`)."""
    given = "result" in body.model_fields_set  # a JSON null is a result too
    return operations.public(run, operations.reconcile(
        state.store, run.run_id, body.identity, abandon=body.abandon,
        result=body.result if given else operations.NOT_GIVEN))
