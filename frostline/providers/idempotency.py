"""Provider-side idempotency keys, kept in a small SQLite file that survives a crash.

A real paid API that honours idempotency keys (Stripe's are the classic example) returns the
first response again when a request is repeated with the same key, instead of executing it
twice. The local providers can simulate that, so the broker's automatic retry of an unresolved
attempt can be tested end to end: the provider remembers `key → (capability, digest, result)`
in a file, and a repeat of the key returns the remembered result without re-executing.

A key reused with another capability or payload is refused (HTTP 422 semantics), as real
APIs do. A failed execution is not remembered, so the key can be retried.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_keys (
    key TEXT PRIMARY KEY,
    capability TEXT NOT NULL,
    digest TEXT NOT NULL,
    result TEXT NOT NULL,
    usage TEXT NOT NULL
)
"""


@dataclass(frozen=True)
class Remembered:
    capability: str
    digest: str
    result: Any
    usage: dict[str, Any]


class KeyMemory:
    """Durable map of idempotency key → first result, shared by threads and processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with closing(self._connect()) as conn, conn:
            conn.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        # One short-lived connection per operation: safe across threads and processes, and
        # synchronous=FULL makes a remembered key durable before the result is returned.
        conn = sqlite3.connect(self.path, timeout=30, isolation_level="DEFERRED")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    def get(self, key: str) -> Remembered | None:
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT capability, digest, result, usage FROM idempotency_keys WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return Remembered(row[0], row[1], json.loads(row[2]), json.loads(row[3]))

    def remember(self, key: str, capability: str, digest: str, result: Any,
                 usage: dict[str, Any]) -> Remembered:
        """Store the result for `key` if absent; returns what is stored (first writer wins)."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT OR IGNORE INTO idempotency_keys (key, capability, digest, result, usage)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, capability, digest, json.dumps(result), json.dumps(usage)),
            )
        stored = self.get(key)
        if stored is None:  # only possible if the file was removed underneath us
            raise RuntimeError(f"idempotency key {key!r} vanished from {self.path}")
        return stored

    def __len__(self) -> int:
        with closing(self._connect()) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM idempotency_keys").fetchone()[0])
