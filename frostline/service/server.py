"""How `frostline serve` runs the application under uvicorn, with bounds on slow clients.

uvicorn keeps a connection open for as long as its client trickles a request's headers (its
keep-alive timer only runs between requests), so 400 clients sending a byte now and then held
400 connections for ever. Here every connection has `header_timeout_s` to deliver a request's
headers, the first request's and each later one's on a kept-alive connection; the request body
has its own deadline (`frostline.service.body_limit`); idle keep-alive connections close after
`keep_alive_s`; a request's headers may not exceed `max_header_bytes`; and past
`max_connections` open connections (or requests in progress) a new request is answered 503 at
once, in the one JSON error shape (`server_busy`, with `Retry-After`), where uvicorn's own
answer to its `limit_concurrency` would be a plain-text page.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("frostline.service.server")


@dataclass(frozen=True)
class ConnectionLimits:
    """Bounds on the connections one server holds. Example: ``ConnectionLimits(max_connections=200)``"""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    max_header_bytes: int = 16 * 1024
    max_connections: int = 512


class _HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are not complete
    within `header_timeout_s` of the connection (or of the previous response)."""

    header_timeout_s = ConnectionLimits.header_timeout_s
    _header_timer: asyncio.TimerHandle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The connection cap is answered here, in JSON, rather than by uvicorn in plain text:
        # uvicorn then sees no cap of its own and hands every request to `_capped`.
        self._cap, self.limit_concurrency = self.limit_concurrency, None
        if self._cap is not None:
            self._app, self.app = self.app, self._capped

    async def _capped(self, scope: Any, receive: Any, send: Any) -> None:
        # The same test as uvicorn's, made once this request's task is counted.
        cap = self._cap or 0
        if len(self.connections) >= cap or len(self.tasks) > cap:
            log.warning("past the connection cap (%d): answered 503", cap)
            await _server_busy(send, cap)
            return
        await self._app(scope, receive, send)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request's headers are all in
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # the next request's headers have the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


async def _server_busy(send: Any, cap: int) -> None:
    body = json.dumps({"error": {"code": "server_busy", "message": (
        f"the server holds its maximum of {cap} connections; retry in a moment")}}).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def protocol_with(limits: ConnectionLimits) -> type[H11Protocol]:
    """The h11 protocol class that enforces `limits.header_timeout_s`."""
    return type("FrostlineH11Protocol", (_HeaderDeadline,),
                {"header_timeout_s": limits.header_timeout_s})


def uvicorn_options(limits: ConnectionLimits) -> dict[str, Any]:
    """The `uvicorn.Config` keyword arguments that apply `limits` (the body deadline is the
    application's: `create_app(..., connections=limits)`)."""
    return {"http": protocol_with(limits), "timeout_keep_alive": limits.keep_alive_s,
            "h11_max_incomplete_event_size": limits.max_header_bytes,
            "limit_concurrency": limits.max_connections}
