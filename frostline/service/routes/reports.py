"""An A/B report run (`frostline ab --store`): the arms with their nine instruments, the
decisions, and the files the driver wrote (served as the run's artifacts)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from frostline.coding.recorded import KIND, latest_report
from frostline.errors import RunNotFound
from frostline.service.dependencies import OwnedRun, State

router = APIRouter(tags=["runs"])


@router.get("/v1/runs/{run_id}/report")
def ab_report(run_id: str, run: OwnedRun, state: State) -> dict[str, Any]:
    """The latest report of an A/B run: `report` (arms, decisions) and `files`."""
    if run.kind != KIND:
        raise RunNotFound(f"run {run_id!r} is a {run.kind} run, not an A/B report",
                          run_id=run_id, kind=run.kind)
    found = latest_report(state.store, run.run_id)
    if found is None:
        raise RunNotFound(f"A/B run {run_id!r} has no finished report", run_id=run_id)
    return {"run_id": run_id, **found}
