"""The transports of `frostline mcp`: stdio (the client starts frostline) and streamable HTTP
(frostline listens; clients send `Authorization: Bearer <token>` with a token made by
`frostline token create`, checked against the store like the HTTP API's).

Over HTTP each request acts for its token's principal: the middleware puts the principal on the
request (as the SDK's authenticated user), the tools read it from there, and the SDK binds each
MCP session to the principal that opened it, so another principal's session id reads like an
unknown one (404)."""

from __future__ import annotations

import hmac
from typing import Any

import anyio

from frostline.embedded.jobs import JobQueue
from frostline.embedded.limits import ServiceLimits
from frostline.providers.registry import CapabilityRegistry
from frostline.runtime.runners import Runner
from frostline.store.base import Store

MCP_PATH = "/mcp"
AUTH_RECHECK_S = 2.0  # how often a request still open checks that its token is still valid


async def serve_stdio(store: Store, registry: CapabilityRegistry, runner: Runner, *,
                      limits: ServiceLimits | None = None,
                      queue: JobQueue | None = None) -> None:
    """Serve one client over this process's stdin and stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    from frostline.mcp.server import build_server

    server = build_server(store, registry, runner, limits=limits, queue=queue)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(store: Store, registry: CapabilityRegistry, runner: Runner, *,
             host: str = "127.0.0.1", require_token: bool = True,
             limits: ServiceLimits | None = None, queue: JobQueue | None = None) -> Any:
    """The streamable-HTTP ASGI app at /mcp; with `require_token`, every request needs a
    bearer token known to the store (401 otherwise). Each principal is held to `limits`
    (`frostline.mcp.server`)."""
    from frostline.mcp.server import build_server

    app = build_server(store, registry, runner, limits=limits,
                       queue=queue).streamable_http_app(
        streamable_http_path=MCP_PATH, host=host)
    return BearerTokens(app, store) if require_token else app


class BearerTokens:
    """ASGI middleware: refuse HTTP requests without a valid bearer token, and mark the others
    with the token's principal (``scope["user"]``, the SDK's authenticated-user shape).

    A request still open after `recheck_s` (a session's event stream, a long tool call
    answered as a stream) has its token checked again every `recheck_s`: once the token is
    revoked or expired the response ends (a 401 if none had started), so a revoked token's
    session stops being served within seconds, as the HTTP API's event streams do."""

    def __init__(self, app: Any, store: Store, *, recheck_s: float = AUTH_RECHECK_S) -> None:
        self.app = app
        self.store = store
        self.recheck_s = recheck_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        who = None if token is None else await anyio.to_thread.run_sync(
            self.store.authenticate, token)
        if token is None or who is None:
            await _unauthorized(send)
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        # The token itself stays out of it: the principal is all the tools and the SDK's
        # session binding compare.
        # The token's roles ride as its scopes: they decide which approvals it may answer.
        user = AuthenticatedUser(AccessToken(token="", client_id=who.principal,
                                             scopes=list(who.roles)))
        response = _Response(send)
        revoked, failure = False, None
        async with anyio.create_task_group() as tg:
            async def watch() -> None:
                nonlocal revoked
                while True:
                    await anyio.sleep(self.recheck_s)
                    if await anyio.to_thread.run_sync(
                            self.store.principal_for_token, token) != who.principal:
                        revoked = True
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            try:
                await self.app({**scope, "user": user}, receive, response.send)
            except Exception as exc:  # raised as it came, not wrapped in a task group's
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if revoked:
            await response.end_revoked()


class _Response:
    """The response of one request as far as it went: whether it started, whether it ended."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self.started = self.ended = False

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("type") == "http.response.start":
            self.started = True
        elif message.get("type") == "http.response.body" and not message.get("more_body"):
            self.ended = True
        await self._send(message)

    async def end_revoked(self) -> None:
        if not self.started:
            await _unauthorized(self._send)
        elif not self.ended:
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})


def _bearer(scope: dict[str, Any]) -> str | None:
    header: str = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
    scheme, _, token = header.partition(" ")
    if not hmac.compare_digest(scheme.lower(), "bearer") or not token.strip():
        return None
    return token.strip()


async def _unauthorized(send: Any) -> None:
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Bearer realm="frostline"')]})
    await send({"type": "http.response.body", "body":
                b'{"error": {"code": "unauthorized", "message": "send Authorization: '
                b'Bearer <token>; create one with frostline token create NAME"}}'})
