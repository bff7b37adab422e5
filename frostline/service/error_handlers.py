"""How an exception becomes an HTTP answer: every error leaves the API as one JSON shape,
`{"error": {"code", "message", …fields}}` (the object the command line prints with --json),
with a status chosen by the kind of error. `create_app` hands `HANDLERS` to FastAPI.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from frostline.contract.status import http_of_error
from frostline.errors import (
    FrostlineError,
    StoreUnavailable,
)
from frostline.service.auth import bearer_token, unauthorized
from frostline.service.dependencies import principal
from frostline.service.limits import LimitExceeded
from frostline.store.url import redact_text

log = logging.getLogger("frostline.service")

def error_body(code: str, message: str, **fields: Any) -> dict[str, Any]:
    """The body of every error answer."""
    return {"error": {"code": code, "message": message, **fields}}


async def frostline_error(request: Request, exc: FrostlineError) -> JSONResponse:
    status = http_of_error(exc)  # the one table: frostline.contract.status.ERRORS
    body = exc.to_dict()
    if isinstance(exc, StoreUnavailable):
        # The client gets the generic message and an id to quote; the detail (the driver's
        # words, which may name the database's host) goes to the operator's log, redacted.
        body["request_id"] = request_id = secrets.token_hex(8)
        log.error("request %s (%s %s) answered 503: %s", request_id, request.method,
                  request.url.path, redact_text(exc.message))
    return JSONResponse(jsonable_encoder({"error": body}), status_code=status)


async def too_many_requests(_: Request, exc: LimitExceeded) -> JSONResponse:
    return JSONResponse(jsonable_encoder({"error": exc.to_dict()}), status_code=429,
                        headers={"Retry-After": str(exc.retry_after_s)})


async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    # Authenticate first: FastAPI parses a JSON body before it resolves the route's
    # dependencies, so a malformed body from a caller without a valid token would get a 422
    # describing the route's input. Such a caller gets the 401 every other request gets.
    refused = await _unauthenticated(request)
    if refused is not None:
        return await http_error(request, refused)
    errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    return JSONResponse(error_body("invalid_request", f"{where}: {first['msg']}",
                                   errors=errors), status_code=422)


async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    # Raised with a {"code", "message"} detail by frostline's routes; a plain string (routing's
    # 404 and 405, FastAPI's own checks) becomes the message.
    detail = exc.detail if isinstance(exc.detail, dict) else {
        "code": "http_" + str(exc.status_code), "message": str(exc.detail)}
    return JSONResponse({"error": detail}, status_code=exc.status_code, headers=exc.headers)


async def _unauthenticated(request: Request) -> StarletteHTTPException | None:
    """The 401 for a request to a route that needs a principal and has none, else None."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not _depends_on_principal(route.dependant):
        return None
    token = bearer_token(request)
    if token is None:
        return unauthorized("missing bearer token; create one with `frostline token create NAME`")
    store = request.app.state.service.store
    if await run_in_threadpool(store.principal_for_token, token) is None:
        return unauthorized("unknown token")
    return None


def _depends_on_principal(dependant: Dependant) -> bool:
    return any(d.call is principal or _depends_on_principal(d) for d in dependant.dependencies)


async def internal_error(request: Request, exc: Exception) -> JSONResponse:
    # Anything else a route raised: the one error shape, never a plain-text page; the detail
    # goes to the operator's log, not to the client.
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__,
              exc, exc_info=exc)
    return JSONResponse(error_body("internal", "the server failed to answer this request; "
                                   "the operator's log has the detail"), status_code=500)


# Starlette picks the handler of the nearest class in the exception's MRO, so LimitExceeded
# (a FrostlineError) gets its own. Starlette's HTTPException is the base of FastAPI's: routing's
# 404 and 405 answer in the same shape as every other error.
HANDLERS: dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    FrostlineError: frostline_error,
    LimitExceeded: too_many_requests,
    RequestValidationError: invalid_request,
    StarletteHTTPException: http_error,
    Exception: internal_error,
}
