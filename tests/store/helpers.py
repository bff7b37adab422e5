"""Small builders shared by the store tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from frostline.contract.identity import Identity, digest
from frostline.store import SlotRecord, Store

CAP = "image.generate"


def ident(n: int = 0, path: tuple[int, ...] = (), site: str = "orchestrate/#0") -> Identity:
    return Identity(site, path, n)


def slot_for(run_id: str, identity: Identity, payload: Any, result: Any, *,
             capability: str = CAP, attempt: int = 1, usage: dict[str, Any] | None = None
             ) -> SlotRecord:
    return SlotRecord(run_id, identity.site, identity.path, identity.occurrence, capability,
                      digest(payload), result, usage or {"usd": 0.02}, attempt)


def call_and_commit(store: Store, run_id: str, identity: Identity, payload: Any, result: Any,
                    attempt: int = 1) -> SlotRecord:
    call_id = store.begin_call(run_id, attempt, identity, CAP, digest(payload))
    return store.commit_call(call_id, slot_for(run_id, identity, payload, result,
                                               attempt=attempt))


def commit_as_before_digests(url: str, run_id: str, identity: Identity, payload: Any,
                             result: Any, attempt: int = 1) -> None:
    """Commit a call the way a frostline whose slots had no recorded digests (schema 10 and
    before) wrote it: a committed call record and its slot, in plain SQL."""
    import json

    from frostline.contract.identity import path_text

    raw = Raw(url)
    try:
        values = (f"'{run_id}', '{identity.site}', '{path_text(identity.path)}', "
                  f"{identity.occurrence}, '{CAP}', '{digest(payload)}'")
        raw.execute("INSERT INTO calls (run_id, site, path, occurrence, capability, digest, "
                    f"attempt, status, created_at, updated_at) VALUES ({values}, {attempt}, "
                    "'committed', 0, 0)")
        text = json.dumps(result).replace("'", "''")
        raw.execute("INSERT INTO slots (run_id, site, path, occurrence, capability, digest, "
                    f"result, usage, attempt, committed_at) VALUES ({values}, '{text}', "
                    f"'{{\"usd\": 0.02}}', {attempt}, 0)")
    finally:
        raw.close()


def eventually(check: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> None:
    """Poll `check` until it holds (no fixed sleeps in tests)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.005)


class Raw:
    """Plain SQL on the store's database, bypassing the store (tamper and migration tests)."""

    def __init__(self, url: str) -> None:
        from frostline.store.url import parse

        loc = parse(url)
        self.backend = loc.backend
        if loc.backend == "sqlite":
            import sqlite3

            self.conn: Any = sqlite3.connect(loc.target, isolation_level=None)
        else:
            import psycopg

            self.conn = psycopg.connect(loc.target, autocommit=True)

    def execute(self, sql: str) -> list[Any]:
        cur = self.conn.execute(sql)
        return list(cur.fetchall()) if cur.description else []

    def drop_trigger(self, name: str, table: str) -> None:
        on = "" if self.backend == "sqlite" else f" ON {table}"
        self.execute(f"DROP TRIGGER {name}{on}")

    def close(self) -> None:
        self.conn.close()
