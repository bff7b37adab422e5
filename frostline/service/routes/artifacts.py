"""Artifacts of a run: the bytes a capability produced, served only to the run's owner, only
if one of the run's committed results refers to them, and only if that owner produced them (a
script chooses its own results, so naming a ref proves nothing: bob's run that echoes alice's
ref gets the same 404 as a ref that does not exist)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from frostline.errors import RunNotFound
from frostline.service import operations
from frostline.service.dependencies import OwnedRun, State

router = APIRouter(tags=["runs"])


@router.get("/v1/runs/{run_id}/artifacts/{ref}",
            responses={200: {"content": {"application/octet-stream": {}}}})
def artifact(run_id: str, ref: str, run: OwnedRun, state: State) -> Response:
    """Download an artifact that this run produced (byte-identical on every replay)."""
    if ref not in operations.run_artifacts(state.store, run.run_id):
        raise RunNotFound(f"run {run_id!r} has no artifact {ref!r}", run_id=run_id)
    found = state.store.get_artifact(ref, owner=run.owner)
    if found is None:
        raise RunNotFound(f"run {run_id!r} has no artifact {ref!r}", run_id=run_id)
    data, mime = found
    # content-addressed: the bytes behind a ref never change
    return Response(content=data, media_type=mime,
                    headers={"Cache-Control": "private, max-age=31536000, immutable"})
