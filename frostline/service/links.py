"""OpenAPI links from the run a client creates to every operation on that run.

A client (or a stateful fuzzer) that creates a run learns from the description where the new
run's id goes next: every operation whose path takes `{run_id}` is linked from the creating
operation's success responses, with the id read from the response body.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

CREATES_RUN = ("/v1/runs", "post")


def with_run_links(app: FastAPI) -> None:
    """Make `app.openapi()` describe the links (computed once, like FastAPI's own)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version,
                                 description=app.description, routes=app.routes)
            add_run_links(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def add_run_links(schema: dict[str, Any]) -> None:
    paths = schema.get("paths", {})
    path, method = CREATES_RUN
    creator = paths.get(path, {}).get(method)
    if creator is None:
        return
    links = {
        op["operationId"]: {"operationId": op["operationId"],
                            "parameters": {"run_id": "$response.body#/run_id"}}
        for target, ops in paths.items() if "{run_id}" in target
        for op in ops.values() if isinstance(op, dict) and "operationId" in op
        and _only_run_id(op)
    }
    for code, response in creator.get("responses", {}).items():
        if code.startswith("2"):
            response["links"] = links


def _only_run_id(op: dict[str, Any]) -> bool:
    """Operations that need nothing from the path but the run id (an artifact also needs a
    ref, which a creation does not return)."""
    names = {p["name"] for p in op.get("parameters", []) if p.get("in") == "path"}
    return names == {"run_id"}
