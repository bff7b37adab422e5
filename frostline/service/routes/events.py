"""A run's audit events as a server-sent event stream, followed live or read as a backlog.

Each open stream holds one of its principal's stream slots (`frostline.service.limits`) until
it ends.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from frostline.service.dependencies import OwnedRun, Principal, State
from frostline.store.base import Store

router = APIRouter(tags=["runs"])

BATCH = 500
MAX_SEQ = 2**63 - 1  # event seqs are 63-bit integers in both stores
POLL_S = 0.5
# A follower that has seen nothing new for this long is let go; it may reconnect with `after`.
MAX_IDLE_S = 600.0


@router.get("/v1/runs/{run_id}/events", responses={200: {"content": {"text/event-stream": {}}}})
async def events(run: OwnedRun, who: Principal, request: Request, state: State,
                 after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
                 follow: bool = True) -> StreamingResponse:
    """The run's audit events as server-sent events; `follow=false` returns the backlog only."""
    release = state.limits.open_stream(who)
    return HeldStream(stream(state.store, run.run_id, request, after=after, follow=follow),
                      release, media_type="text/event-stream", headers={"Cache-Control": "no-store"})


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
                 follow: bool) -> AsyncIterator[bytes]:
    """Events after `after`, then (when following) new ones as they are appended."""
    cursor = after
    idle = 0.0
    while True:
        batch = await asyncio.to_thread(store.list_events, run_id, after=cursor, limit=BATCH)
        for ev in batch:
            cursor = ev.seq
            data = json.dumps({"seq": ev.seq, "ts": ev.ts, "kind": ev.kind, "data": ev.data}, default=str)
            yield f"id: {ev.seq}\nevent: {ev.kind}\ndata: {data}\n\n".encode()
        if not follow and len(batch) < BATCH:
            return
        if batch:
            idle = 0.0
            continue
        if await request.is_disconnected() or idle > MAX_IDLE_S:
            return
        yield b": keep-alive\n\n"
        await asyncio.sleep(POLL_S)
        idle += POLL_S
