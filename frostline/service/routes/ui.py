"""The web UI: one HTML page and its static files, served from the package, outside the OpenAPI
description. The page talks to the API with the token the user signs in with."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

UI_FILES = resources.files("frostline.service").joinpath("ui")
# Only these kinds are served, and only by plain file name: no directories, no way up.
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


@router.get("/")
def index() -> HTMLResponse:
    return HTMLResponse(UI_FILES.joinpath("index.html").read_text(encoding="utf-8"))


@router.get("/ui/{name}")
def static(name: str) -> Response:
    suffix = name[name.rfind("."):] if "." in name else ""
    if suffix not in MEDIA_TYPES or "/" in name or ".." in name:
        raise HTTPException(404, {"code": "not_found", "message": name})
    path = UI_FILES.joinpath(name)
    if not path.is_file():
        raise HTTPException(404, {"code": "not_found", "message": name})
    return Response(path.read_bytes(), media_type=MEDIA_TYPES[suffix])
