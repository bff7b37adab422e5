"""An append-only JSON-lines log of every real provider invocation.

The log is evidence kept outside the run store: it records what a provider was actually asked
to do (and therefore what was paid for), so a test or an operator can count executions
independently of the store that the broker writes. It is shared by threads and processes:
each line is written with one `write` on a descriptor opened with O_APPEND, under an exclusive
`flock`, then fsynced before the descriptor is closed, so lines never interleave and a line
that was reported as written survives a crash.

Line shape: ``{"capability": ..., "payload": ..., "ok": true|false, ...}`` with optional
``run_id``, ``identity``, ``idempotency_key``, ``error_code``, ``status``, ``pid`` and
``cost_usd`` (what the provider reported the call cost, when it reported a cost).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frostline.capabilities.provider import CallContext

ENV_VAR = "FROSTLINE_PROVIDER_LOG"


class ProviderLog:
    """Appends one JSON line per provider invocation to `path`.

    Example: ``ProviderLog("calls.jsonl").append("echo", {"x": 1}, ok=True)``
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @classmethod
    def from_env(cls, path: str | os.PathLike[str] | None = None) -> ProviderLog | None:
        """The log at `path`, else at $FROSTLINE_PROVIDER_LOG, else None (no logging)."""
        chosen = path if path is not None else os.environ.get(ENV_VAR) or None
        return cls(chosen) if chosen is not None else None

    def append(self, capability: str, payload: Mapping[str, Any], *, ok: bool,
               **extra: Any) -> None:
        """Durably append one line; returns after the line is on disk."""
        record: dict[str, Any] = {"capability": capability, "payload": dict(payload), "ok": ok}
        record.update({k: v for k, v in extra.items() if v is not None})
        record.setdefault("pid", os.getpid())
        # default=repr: a value JSON cannot carry must not lose the evidence line.
        line = (json.dumps(record, sort_keys=True, separators=(",", ":"), default=repr)
                + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # O_APPEND makes each write land at the end; the lock keeps a large line from
            # interleaving with another process's line on filesystems that split writes.
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the flock

    def read(self) -> list[dict[str, Any]]:
        """Every line so far, parsed (an empty list when the file does not exist)."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]


async def log_call(log: ProviderLog | None, capability: str, payload: Mapping[str, Any],
                   ctx: CallContext, *, ok: bool, **extra: Any) -> None:
    """Append one invocation to `log` (no-op without a log), off the event loop: fsync can
    take milliseconds."""
    if log is not None:
        await asyncio.to_thread(log.append, capability, payload, ok=ok, run_id=ctx.run_id,
                                identity=ctx.identity, idempotency_key=ctx.idempotency_key,
                                **extra)
