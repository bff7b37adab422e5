"""The capability catalog: public data, so the one route that needs no token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from frostline.service.dependencies import State

router = APIRouter(tags=["meta"])


@router.get("/v1/catalog")
def get_catalog(state: State) -> dict[str, Any]:
    """The capability catalog (no authentication needed: it is public data)."""
    return {"capabilities": [c.to_dict() for c in state.catalog]}
