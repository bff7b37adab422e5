"""An in-memory, content-addressed ArtifactSink with the same contract as the run store's."""

from __future__ import annotations

import hashlib
import threading

from frostline.capabilities.provider import CallContext


class MemoryArtifacts:
    """Stores bytes once under 'sha256:<hex>'; `get` returns (bytes, mime) or None."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[bytes, str]] = {}
        self._lock = threading.Lock()
        self.puts = 0

    def put(self, data: bytes, mime: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        with self._lock:
            self._items.setdefault(ref, (bytes(data), mime))
            self.puts += 1
        return ref

    def get(self, ref: str) -> tuple[bytes, str] | None:
        with self._lock:
            return self._items.get(ref)

    def __len__(self) -> int:
        return len(self._items)


def call_context(artifacts: MemoryArtifacts | None = None, *, run_id: str = "run-1",
                 identity: str = "orchestrate/#0@:0", key: str | None = None) -> CallContext:
    return CallContext(run_id=run_id, identity=identity, idempotency_key=key,
                       artifacts=artifacts if artifacts is not None else MemoryArtifacts())
