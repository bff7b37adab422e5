"""The in-process runner: the script runs in the host's own event loop against the broker.

Tests and benchmarks only: it isolates nothing (no process, no pipe, no timeout kill). Product
code chooses `ChildProcessRunner` or the sandbox runner (frostline.runtime.runners).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from frostline.runtime.broker import Broker, Reply
from frostline.runtime.child import error_dict, load_entry, run_entry
from frostline.runtime.ctx import Ctx
from frostline.runtime.runners import DEFAULT_TIMEOUT_S, Job, ScriptOutcome


class DirectTransport:
    """The ctx transport of the in-process runner: frames go to the broker as dicts.

    JSON round trips detach payloads and results from the script, as the pipe would.
    """

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._next = 0

    async def call(self, site: str, path: list[int], capability: str,
                   payload: dict[str, Any]) -> Reply:
        return await self._send({"type": "call", "site": site, "path": path,
                                 "capability": capability, "payload": payload})

    async def decide(self, path: list[int], value: int) -> Reply:
        return await self._send({"type": "decide", "path": path, "value": value})

    async def _send(self, frame: dict[str, Any]) -> Reply:
        self._next += 1
        frame = json.loads(json.dumps({**frame, "id": self._next, "nonce": self._broker.nonce}))
        # shield: a script that stops waiting (a race loser) must not cancel a dispatch.
        reply = await asyncio.shield(self._broker.submit(frame))
        return dict(json.loads(json.dumps(reply)))


class InProcessRunner:
    """Runs the script in this process (unit tests only; no isolation at all)."""

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    async def run(self, job: Job, broker: Broker) -> ScriptOutcome:
        ctx = Ctx(DirectTransport(broker), concurrency=job.concurrency, max_fanout=job.max_fanout)
        try:
            entry = load_entry(job.source)
            result = await asyncio.wait_for(run_entry(entry, ctx, job.args), self.timeout_s)
        except TimeoutError:
            return ScriptOutcome(False, error={"type": "Timeout", "message":
                                               f"the script ran longer than {self.timeout_s}s"},
                                 timed_out=True)
        except BaseException as exc:  # RunStopped included: the host already knows why
            if isinstance(exc, KeyboardInterrupt | SystemExit | asyncio.CancelledError):
                raise
            return ScriptOutcome(False, error=error_dict(exc))
        return ScriptOutcome(True, result=result)
