"""A run's audit events as a server-sent event stream, followed live or read as a backlog.

Each open stream holds one of its principal's stream slots (`frostline.service.limits`) until
it ends.

Events are numbered per run, from 1: an event's `id` (and `seq`) is its position in its run,
and `after` counts the same way. The store's own sequence is global; shown to clients, its gaps
would tell a principal how busy everyone else is.

A followed stream checks every `AUTH_RECHECK_S` that its token is still valid: revoking it
(`frostline token revoke`) ends the stream within a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from frostline.service.auth import bearer_token
from frostline.service.dependencies import OwnedRun, Principal, State
from frostline.store.base import Store

router = APIRouter(tags=["runs"])

BATCH = 500
MAX_SEQ = 2**63 - 1  # a position past any run's events
POLL_S = 0.5
AUTH_RECHECK_S = 2.0
# A follower that has seen nothing new for this long is let go; it may reconnect with `after`.
MAX_IDLE_S = 600.0


@router.get("/v1/runs/{run_id}/events", responses={200: {"content": {"text/event-stream": {}}}})
async def events(run: OwnedRun, who: Principal, request: Request, state: State,
                 after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
                 follow: bool = True) -> StreamingResponse:
    """The run's audit events as server-sent events, numbered from 1 within the run (`after`
    counts the same way); `follow=false` returns the backlog only."""
    release = state.limits.open_stream(who)
    still_valid = _token_check(state.store, bearer_token(request), who)
    return HeldStream(stream(state.store, run.run_id, request, after=after, follow=follow,
                             still_valid=still_valid),
                      release, media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def _token_check(store: Store, token: str | None, who: str) -> Callable[[], bool]:
    """Whether `token` still authenticates `who` (not revoked, not expired)."""
    return lambda: token is not None and store.principal_for_token(token) == who


class HeldStream(StreamingResponse):
    """A streaming response that gives its stream slot back however it ends: finished,
    cancelled, or cut off by the client."""

    def __init__(self, content: AsyncIterator[bytes], release: Callable[[], None],
                 **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


async def stream(store: Store, run_id: str, request: Request, *, after: int,
                 follow: bool, still_valid: Callable[[], bool] = lambda: True,
                 clock: Callable[[], float] = time.monotonic) -> AsyncIterator[bytes]:
    """Events after the run's `after`-th, then (when following) new ones as they are
    appended, until the client leaves, the stream idles too long or its token is revoked."""
    cursor, position = await asyncio.to_thread(store.event_cursor, run_id, after)
    idle = 0.0
    checked = clock()
    while True:
        batch = await asyncio.to_thread(store.list_events, run_id, after=cursor, limit=BATCH)
        for ev in batch:
            cursor, position = ev.seq, position + 1
            data = json.dumps({"seq": position, "ts": ev.ts, "kind": ev.kind, "data": ev.data},
                              default=str)
            yield f"id: {position}\nevent: {ev.kind}\ndata: {data}\n\n".encode()
        if not follow and len(batch) < BATCH:
            return
        if clock() - checked >= AUTH_RECHECK_S:
            if not await asyncio.to_thread(still_valid):
                return  # revoked or expired: the stream ends, as the next request would fail
            checked = clock()
        if batch:
            idle = 0.0
            continue
        if await request.is_disconnected() or idle > MAX_IDLE_S:
            return
        yield b": keep-alive\n\n"
        await asyncio.sleep(POLL_S)
        idle += POLL_S
