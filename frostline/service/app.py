"""The HTTP API and the web UI, served by one process.

`create_app(store, ...)` wires a FastAPI application over a Store; `frostline serve` runs it with
uvicorn. Every run belongs to the principal whose bearer token created it; another principal
gets 404 for it, its artifacts and its events, exactly as for a run that does not exist.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from frostline import __version__
from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.contract.records import RunRecord
from frostline.errors import (
    DefinitionError,
    FrostlineError,
    RunBusy,
    RunNotFound,
    ScriptRejected,
    StoreUnavailable,
)
from frostline.service import operations
from frostline.service.auth import bearer_token, unauthorized
from frostline.service.schemas import (
    MAX_BODY_BYTES,
    AddAttempt,
    CreateRun,
    ReconcileRequest,
    RepairRequest,
)
from frostline.store.base import Store

_STATUS = {
    RunNotFound: 404,
    ScriptRejected: 422,
    DefinitionError: 400,
    RunBusy: 409,
    StoreUnavailable: 503,
}


class BodySizeLimit:
    """Refuse request bodies above a cap, whether or not Content-Length is honest."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(send, self.limit)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _BodyTooLarge:
            await _too_large(send, self.limit)


class _BodyTooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"error": "too_large", "message": f"request body exceeds {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def create_app(store: Store, *, services: operations.Services | None = None,
               catalog: Catalog = DEFAULT_CATALOG) -> FastAPI:
    """Build the API over `store`. `services` injects providers, runner and model clients."""
    svc = services or operations.Services.default(catalog=catalog)
    app = FastAPI(
        title="frostline",
        version=__version__,
        description="Runs of model-written workflow scripts under a revision contract.",
    )
    app.add_middleware(BodySizeLimit, limit=MAX_BODY_BYTES)
    busy: set[str] = set()
    busy_lock = threading.Lock()

    @app.exception_handler(FrostlineError)
    async def _frostline_error(_: Request, exc: FrostlineError) -> JSONResponse:
        status = next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), 400)
        return JSONResponse(jsonable_encoder({"error": exc.code, "message": exc.message,
                                              "detail": exc.fields}), status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"])
        return JSONResponse({"error": "invalid_request", "message": f"{where}: {first['msg']}",
                             "detail": errors}, status_code=422)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, dict) else {"error": "http", "message": str(exc.detail)}
        return JSONResponse(detail, status_code=exc.status_code, headers=exc.headers)

    def principal(request: Request) -> str:
        token = bearer_token(request)
        if token is None:
            raise unauthorized("missing bearer token; create one with `frostline token create NAME`")
        who = store.principal_for_token(token)
        if who is None:
            raise unauthorized("unknown token")
        return who

    def owned_run(run_id: str, who: str) -> RunRecord:
        run = store.get_run(run_id)
        if run is None or run.owner != who:
            raise RunNotFound(f"no run {run_id!r}", run_id=run_id)
        return run

    def exclusively(run_id: str, action: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run `action` while this process marks the run as executing (409 if it already is;
        the store's run lock still guards against other processes)."""
        with busy_lock:
            if run_id in busy:
                raise RunBusy(f"run {run_id!r} is executing; retry when it has finished", run_id=run_id)
            busy.add(run_id)
        try:
            return action()
        finally:
            with busy_lock:
                busy.discard(run_id)

    # ---------------------------------------------------------------- runs
    @app.post("/v1/runs", status_code=201, tags=["runs"])
    def create_run(body: CreateRun, who: str = Depends(principal)) -> dict[str, Any]:
        """Create a run with a script, args and envelope, and execute its first attempt."""
        run_id = body.run_id or f"run-{secrets.token_hex(6)}"
        operations.precheck(body.script, body.envelope, catalog)
        if store.get_run(run_id) is not None:
            raise HTTPException(409, {"error": "exists", "message": f"run {run_id!r} already exists"})
        store.create_run(run_id, operations.envelope_dict(body.envelope, catalog), owner=who)
        attempt = exclusively(run_id, lambda: svc.execute(store, run_id, body.script, body.args))
        return {"run_id": run_id, "attempt": attempt}

    @app.get("/v1/runs", tags=["runs"])
    def list_runs(who: str = Depends(principal)) -> dict[str, Any]:
        """The caller's runs, newest first."""
        return {"runs": [operations.run_summary(store, r) for r in store.list_runs(owner=who)]}

    @app.get("/v1/runs/{run_id}", tags=["runs"])
    def get_run(run_id: str, who: str = Depends(principal)) -> dict[str, Any]:
        """A run with its attempts and the identity timeline across attempts."""
        return operations.run_detail(store, owned_run(run_id, who), executing=run_id in busy)

    @app.post("/v1/runs/{run_id}/attempts", status_code=201, tags=["runs"])
    def add_attempt(run_id: str, body: AddAttempt, who: str = Depends(principal)) -> dict[str, Any]:
        """Gate the script against the frozen prefix, then run it as a new attempt."""
        run = owned_run(run_id, who)
        operations.precheck(body.script, run.envelope, catalog)
        attempt = exclusively(run_id, lambda: svc.execute(store, run_id, body.script, body.args))
        return {"run_id": run_id, "attempt": attempt}

    @app.post("/v1/runs/{run_id}/repair", tags=["runs"])
    def repair(run_id: str, body: RepairRequest, who: str = Depends(principal)) -> dict[str, Any]:
        """Ask a model for a repair of the last failed attempt; optionally execute it."""
        owned_run(run_id, who)
        return exclusively(
            run_id, lambda: svc.repair(store, run_id, body.model, body.max_rewrites, body.execute))

    @app.get("/v1/runs/{run_id}/certificate", tags=["contract"])
    def certificate(run_id: str, verify: bool = True, who: str = Depends(principal)) -> dict[str, Any]:
        """The run's certificate, recomputed against the store when `verify` is true."""
        owned_run(run_id, who)
        return operations.certificate(store, run_id, verify=verify)

    @app.get("/v1/runs/{run_id}/orphans", tags=["contract"])
    def orphans(run_id: str, who: str = Depends(principal)) -> dict[str, Any]:
        """Committed identities that each attempt did not invoke."""
        owned_run(run_id, who)
        return operations.orphans(store, run_id)

    @app.post("/v1/runs/{run_id}/reconcile", tags=["runs"])
    def reconcile(run_id: str, body: ReconcileRequest, who: str = Depends(principal)) -> dict[str, Any]:
        """Resolve an unresolved call: abandon it, or write back its known result."""
        owned_run(run_id, who)
        return operations.reconcile(store, run_id, body.identity, abandon=body.abandon, result=body.result)

    @app.get("/v1/runs/{run_id}/artifacts/{ref}", tags=["runs"],
             responses={200: {"content": {"application/octet-stream": {}}}})
    def artifact(run_id: str, ref: str, who: str = Depends(principal)) -> Response:
        """Download an artifact that this run produced (byte-identical on every replay)."""
        owned_run(run_id, who)
        if ref not in operations.run_artifacts(store, run_id):
            raise RunNotFound(f"run {run_id!r} has no artifact {ref!r}", run_id=run_id)
        found = store.get_artifact(ref)
        if found is None:
            raise RunNotFound(f"artifact {ref!r} is missing from the store", run_id=run_id)
        data, mime = found
        return Response(content=data, media_type=mime,
                        headers={"Cache-Control": "private, max-age=31536000, immutable"})

    @app.get("/v1/runs/{run_id}/events", tags=["runs"],
             responses={200: {"content": {"text/event-stream": {}}}})
    async def events(run_id: str, request: Request, after: int = 0, follow: bool = True,
                     who: str = Depends(principal)) -> StreamingResponse:
        """The run's audit events as server-sent events; `follow=false` returns the backlog only."""
        owned_run(run_id, who)
        if after < 0:
            raise HTTPException(422, {"error": "invalid_request", "message": "after must be >= 0"})

        async def stream() -> AsyncIterator[bytes]:
            cursor = after
            idle = 0.0
            while True:
                batch = await asyncio.to_thread(store.list_events, run_id, after=cursor, limit=500)
                for ev in batch:
                    cursor = ev.seq
                    data = json.dumps({"seq": ev.seq, "ts": ev.ts, "kind": ev.kind, "data": ev.data},
                                      default=str)
                    yield f"id: {ev.seq}\nevent: {ev.kind}\ndata: {data}\n\n".encode()
                if not follow and len(batch) < 500:
                    return
                if batch:
                    idle = 0.0
                    continue
                if await request.is_disconnected() or idle > 600:
                    return
                yield b": keep-alive\n\n"
                await asyncio.sleep(0.5)
                idle += 0.5

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    @app.get("/v1/catalog", tags=["meta"])
    def get_catalog() -> dict[str, Any]:
        """The capability catalog (no authentication needed: it is public data)."""
        return {"capabilities": [c.to_dict() for c in catalog]}

    # ---------------------------------------------------------------- UI
    ui = resources.files("frostline.service").joinpath("ui")

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(ui.joinpath("index.html").read_text(encoding="utf-8"))

    @app.get("/ui/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        kinds = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
        suffix = name[name.rfind("."):] if "." in name else ""
        if suffix not in kinds or "/" in name or ".." in name:
            raise HTTPException(404, {"error": "not_found", "message": name})
        path = ui.joinpath(name)
        if not path.is_file():
            raise HTTPException(404, {"error": "not_found", "message": name})
        return Response(path.read_bytes(), media_type=kinds[suffix])

    return app


def serve(store_url: str | None, host: str, port: int,
          make_services: Callable[[], operations.Services] | None = None) -> None:
    """Run the API with uvicorn (blocking)."""
    import uvicorn

    from frostline.store import open_store

    store = open_store(store_url)
    app = create_app(store, services=make_services() if make_services else None)
    uvicorn.run(app, host=host, port=port, log_level="info")
