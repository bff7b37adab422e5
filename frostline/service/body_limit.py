"""The request-body cap, enforced below FastAPI.

A pydantic length limit only runs after the whole body has been read; this middleware stops
reading at the cap, so an oversized or dishonest upload costs the server at most `limit` bytes.
The body is read here, before the application sees any of it: FastAPI turns any error raised
while it reads a body into a 400, so a cap that tripped inside FastAPI's read (a chunked body
has no Content-Length to check first) could not answer 413.

The body also has a deadline (`timeout_s`): a client that sends its body a byte at a time,
or stops halfway, is answered 408 and its connection closed, instead of holding it open.
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    """Refuse request bodies above a cap, whether or not Content-Length is honest or present."""

    def __init__(self, app: ASGIApp, limit: int, timeout_s: float = 30.0) -> None:
        self.app = app
        self.limit = limit
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(send, self.limit)
            return
        try:
            first = await asyncio.wait_for(self._read_body(receive), self.timeout_s)
        except TimeoutError:
            await _answer(send, 408, "request_timeout",
                          f"the request body did not arrive within {self.timeout_s:g} seconds")
            return
        if first is None:
            await _too_large(send, self.limit)
            return
        pending = [first]

        async def replay() -> Message:
            # the body once, as one message; then whatever the client does next (a disconnect)
            return pending.pop() if pending else await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive) -> Message | None:
        """The whole body as one message (or the disconnect that cut it short); None once it
        exceeds the cap."""
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}


async def _too_large(send: Send, limit: int) -> None:
    await _answer(send, 413, "too_large", f"request body exceeds {limit} bytes")


async def _answer(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json")]
    if status == 408:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
