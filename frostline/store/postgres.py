"""The scale-out run store: PostgreSQL through psycopg 3, shared by many worker processes.

Same schema and queries as the SQLite store (see `schema` and `sql`); what differs lives here:
JSON columns are jsonb except a slot's result and usage, which are json (exact text, as
SQLite keeps them: see schema migration 5); each thread reads on its own connection, the
group-commit writer owns one connection, and the locks are advisory locks keyed by the schema
and a name, so stores in different schemas of one database never contend.

`run_lock` holds a session-level ``pg_try_advisory_lock`` on a dedicated connection for as long
as the run executes: two processes on any hosts never execute one run at once, and the server
releases the lock by itself when the holder's connection dies.

Event sequence numbers come from an identity column. Two transactions may draw numbers in one
order and commit in the other, which would let a reader that polls `after=seq` skip an event;
every writer transaction therefore takes a transaction-scoped advisory lock as it begins, so
events commit in seq order across every process writing to the store.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from psycopg.types.json import Json
from psycopg.types.string import TextLoader

from frostline.contract.identity import path_text
from frostline.contract.records import SlotRecord
from frostline.errors import RunBusy, StoreNotFound, StoreUnavailable
from frostline.store import schema
from frostline.store.groupcommit import Finisher, PipelineAborted, SlowPath
from frostline.store.lock_sessions import LockSessions
from frostline.store.pq_pipeline import (
    FLOAT8,
    INT8,
    JSON,
    TEXT,
    TEXT_ARRAY,
    HotPipeline,
    HotStatement,
    Row,
)
from frostline.store.sql import SLOT_COLUMNS, SqlStore
from frostline.store.sql_history import event_kind
from frostline.store.sqlbase import CommitParams
from frostline.store.url import redact

CONNECT_TIMEOUT_S = 10
# SQLSTATE classes of a statement the server refuses for the data it carries, which it would
# refuse again: 21 cardinality, 22 data exception (e.g. "\u0000 cannot be converted to
# text"), 23 integrity constraint, 27 triggered data change, 44 check option, P0 raised by a
# PL/pgSQL body (a trigger's refusal). Every other class may pass or is the environment's
# (the operator fixes it): 08 connection, 25 transaction state (a standby after failover),
# 28 authorization, 3D/42 a schema or table missing, 40 serialization failure and deadlock,
# 53 resources, 55 lock not available, 57 operator intervention (a shutdown), 58 system I/O.
REFUSAL_CLASSES = frozenset({"21", "22", "23", "27", "44", "P0"})


class PostgresStore(SqlStore):
    """The run store in a PostgreSQL database (the schema named first in search_path).

    Usage::

        with PostgresStore("postgresql://postgres@127.0.0.1:5432/frostline") as store:
            store.create_run("r1", {})
    """

    backend_name = "postgres"
    dialect: schema.Dialect = "postgres"

    def __init__(self, url: str, *, create: bool = True,
                 clock: Callable[[], float] = time.time,
                 _migrate_to: int = schema.LATEST) -> None:
        self.url = url
        try:
            with self._connect(autocommit=True) as conn:
                row = conn.execute(
                    "SELECT current_schema(), to_regclass('schema_version') IS NOT NULL"
                ).fetchone()
            if row is None or row[0] is None:
                raise StoreUnavailable(
                    f"no schema of the search_path of {redact(url)} exists; create it "
                    "(CREATE SCHEMA …) or fix the search_path option",
                    backend="postgres", operation="open")
            self.schema_name: str = row[0]
            self._events_lock_sql = f"SELECT pg_advisory_xact_lock({int(self._key('events'))})"
            self._events_lock = HotStatement(b"frostline_events_lock", self._events_lock_sql)
            self._hot_pipe: HotPipeline | None = None  # the writer connection's, once used
            if not create and not row[1]:
                raise StoreNotFound(
                    f"no frostline store in schema {self.schema_name!r} of {redact(url)}: "
                    "nothing has run with this store yet; check --store or $FROSTLINE_STORE",
                    backend="postgres", url=redact(url))
            self._migrate(_migrate_to)
        except (psycopg.Error, OSError) as exc:
            raise StoreUnavailable(
                f"cannot open the postgres store at {redact(url)}: {exc}. Check that the server "
                "is running and the URL's user, host and database are right",
                backend="postgres", operation="open") from exc
        self._lock_sessions = LockSessions(self._lock_connect)
        super().__init__(url, clock=clock)

    def local_files(self) -> tuple[Path, ...]:
        return ()  # the database lives in the server, not in files of this host

    def _key(self, name: str) -> int:
        """A signed 64-bit advisory-lock key for `name` within this store's schema."""
        digest = hashlib.sha256(f"frostline\0{self.schema_name}\0{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)

    # connections --------------------------------------------------------------------------------
    def _connect(self, *, autocommit: bool) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self.url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
        # Hand jsonb over as text, as SQLite does: the shared code decodes it, in bulk where
        # a whole prefix is read.
        conn.adapters.register_loader("jsonb", TextLoader)
        conn.adapters.register_loader("json", TextLoader)
        return conn

    def _lock_connect(self) -> psycopg.Connection[Any]:
        try:
            return self._connect(autocommit=True)
        except (psycopg.Error, OSError) as exc:
            raise self.translate(exc, "run_lock") from exc

    def close(self) -> None:
        super().close()
        self._lock_sessions.close_all()

    def _connect_reader(self) -> psycopg.Connection[Any]:
        # Autocommit: each read is its own statement snapshot and sees every commit so far.
        return self._connect(autocommit=True)

    def _close_conn(self, conn: Any) -> None:
        conn.close()

    def writer_connect(self) -> psycopg.Connection[Any]:
        # Autocommit, with the writer's transactions spelled out: BEGIN then travels with the
        # events lock in one round trip (psycopg would send its implicit BEGIN on its own).
        return self._connect(autocommit=True)

    def writer_begin(self, conn: psycopg.Connection[Any]) -> None:
        # Event inserts are ordered across processes (seq order = commit order) by a lock held
        # to the end of the transaction. Taking it with BEGIN costs no round trip of its own
        # (no parameters: psycopg sends the two statements as one simple query); savepoints
        # are set after it, so rolling back to one never releases it.
        conn.execute(f"BEGIN; {self._events_lock_sql}")

    def writer_pipeline(self, conn: psycopg.Connection[Any], forms: list[object]
                        ) -> list[Finisher]:
        # One transaction of prepared statements through libpq's pipeline (see pq_pipeline):
        # the events lock first, held to the commit its Sync makes, then every write's
        # statement. Each write's finisher reads its rows after that commit.
        pipe = self._hot_pipe
        if pipe is None or pipe.conn is not conn:
            pipe = self._hot_pipe = HotPipeline(conn)
        piped: list[Piped] = forms  # type: ignore[assignment]  # this store's own forms
        try:
            statements = [(self._events_lock, ()),
                          *((form.statement, form.params) for form in piped)]
        except Exception as exc:  # nothing sent
            raise PipelineAborted(f"a write has no pipelined form: {exc}") from exc
        rows = pipe.run(statements)
        return [functools.partial(form.finish, conn, found)
                for form, found in zip(piped, rows[1:], strict=True)]

    def writer_usable(self, conn: psycopg.Connection[Any]) -> bool:
        return not (conn.broken or conn.closed)

    def writer_commit(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute("COMMIT")

    def writer_rollback(self, conn: psycopg.Connection[Any]) -> None:
        if not conn.closed:
            conn.execute("ROLLBACK")

    def writer_execute(self, conn: psycopg.Connection[Any], sql: str) -> None:
        conn.execute(sql)

    def writer_discard(self, conn: psycopg.Connection[Any]) -> None:
        with contextlib.suppress(psycopg.Error):
            conn.close()

    # dialect ------------------------------------------------------------------------------------
    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error, OSError)

    def _is_fk_violation(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.ForeignKeyViolation)

    def _is_refusal(self, exc: BaseException) -> bool:
        if not isinstance(exc, psycopg.Error):
            return False  # an OSError: the network
        state = exc.sqlstate
        if state is None:  # refused by psycopg before sending (e.g. a NUL byte in text)
            return isinstance(exc, psycopg.DataError | psycopg.IntegrityError)
        return state[:2] in REFUSAL_CLASSES

    def _sql(self, sql: str) -> str:
        return _pg_sql(sql)

    def _json_param(self, text: str) -> Any:
        # The text is already encoded (and validated) by the caller; pass it through as json:
        # a json column keeps it exactly, a jsonb column converts it on assignment.
        return Json(text, dumps=_identity)

    def _commit_in_one(self, conn: Any, call_id: int, slot: Any, result: Any, usage: Any,
                       audit: tuple[str, Any] | None, now: float,
                       digests: tuple[str, str]) -> Any | None:
        # Mark the call committed, insert the slot and the audit row, in one round trip. Each
        # insert reads from the UPDATE, so when the call is not the pending one this slot
        # belongs to, nothing is written and the general path says why.
        params = self._commit_params(call_id, slot, result, usage, audit, now, digests)
        row = _hot(conn, _COMMIT_IN_ONE, params).fetchone()
        if not row or not row[0]:
            return None
        if row[1] is not None:
            return row[1:]
        # The identity was committed already (insert-if-absent): return what is stored.
        return self._existing_slot(conn, slot)

    @staticmethod
    def _commit_params(call_id: int, slot: Any, result: Any, usage: Any,
                       audit: tuple[str, Any] | None, now: float,
                       digests: tuple[str, str]) -> tuple[Any, ...]:
        # In the order of _COMMIT_IN_ONE's $1 … $15.
        return (now, call_id, slot.run_id, slot.site, path_text(slot.path), slot.occurrence,
                slot.capability, slot.digest, result, usage, slot.attempt, digests[0],
                digests[1], None if audit is None else audit[0],
                None if audit is None else audit[1])

    @staticmethod
    def _existing_slot(conn: Any, slot: Any) -> Any:
        return conn.execute(
            f"SELECT {SLOT_COLUMNS} FROM slots WHERE run_id = %s AND site = %s AND path = %s "
            "AND occurrence = %s", (slot.run_id, slot.site, path_text(slot.path),
                                    slot.occurrence)).fetchone()

    # pipelined writes: one statement each, its rows read after the commit (see groupcommit) --
    def _piped_begin_call(self, params: tuple[Any, ...]) -> Piped:
        return Piped(_BEGIN_CALL, params, _first_int)

    def _piped_commit_call(self, call_id: int, slot: SlotRecord,
                           prepared: CommitParams) -> Piped:
        result, digests, usage, audit, now = prepared

        def finish(conn: Any, rows: list[Row]) -> SlotRecord:
            row = rows[0] if rows else None
            if not row or row[0] == "0":
                raise SlowPath  # not the pending call this slot belongs to: nothing written
            return self._slot(row[1:] if row[1] is not None
                              else self._existing_slot(conn, slot))

        return Piped(_COMMIT_IN_ONE_HOT, self._commit_params(
            call_id, slot, result, usage, audit, now, digests), finish)

    def _piped_append_event(self, run_id: str, kind: str, payload: Any, now: float) -> Piped:
        return Piped(_INSERT_EVENT_HOT, (run_id, now, event_kind(kind), payload), _first_int)

    def _piped_append_events(self, run_id: str, now: float,
                             rows: list[tuple[str, str]]) -> Piped:
        return Piped(_INSERT_EVENTS_HOT, _events_params(run_id, now, rows),
                     lambda _conn, found: _event_seqs(found, len(rows)))

    def _insert_events(self, conn: Any, run_id: str, ts: float,
                       events: list[tuple[str, str]]) -> list[int]:
        return _event_seqs(_hot(conn, _INSERT_EVENTS, _events_params(run_id, ts, events))
                           .fetchall(), len(events))

    def _redacted_url(self) -> str:
        return redact(self.url)

    # schema -------------------------------------------------------------------------------------
    def _migrate(self, target: int) -> None:
        with self._connect(autocommit=False) as conn:
            # Serialize concurrent openers: one migrates, the others then find it done.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._key("migrate"),))
            conn.execute(schema.render(schema.SCHEMA_VERSION_TABLE, "postgres"))
            applied = {int(r[0]) for r in conn.execute(
                "SELECT version FROM schema_version").fetchall()}
            current = max(applied, default=0)
            if current > schema.LATEST:
                raise StoreUnavailable(
                    f"the postgres store at {redact(self.url)} (schema {self.schema_name}) has "
                    f"schema version {current}, newer than this frostline supports "
                    f"({schema.LATEST}); upgrade frostline to open it",
                    backend="postgres", operation="open", version=current,
                    supported=schema.LATEST)
            for migration in schema.pending(applied, target):
                for statement in migration.statements("postgres"):
                    conn.execute(statement)  # type: ignore[call-overload,unused-ignore]
                conn.execute("INSERT INTO schema_version (version, description, applied_at) "
                             "VALUES (%s, %s, %s)",
                             (migration.version, migration.description, time.time()))
            conn.commit()

    # run lock -----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def run_lock(self, run_id: str) -> Iterator[None]:
        self._check_open("run_lock")
        key = self._key("run:" + run_id)
        conn = self._locked_session(run_id, key)
        released = False
        try:
            yield
            # Closing the session releases the lock as well; unlocking first lets the session
            # go back to the idle ones, and keeps the release prompt if a close is slow.
            with contextlib.suppress(psycopg.Error, OSError):
                row = conn.execute("SELECT pg_advisory_unlock(%s)", (key,)).fetchone()
                released = bool(row and row[0])
        finally:
            self._lock_sessions.give_back(conn, reuse=released)

    def _locked_session(self, run_id: str, key: int) -> psycopg.Connection[Any]:
        """A session holding the run's lock: an idle one when there is one. When an idle
        session fails, the server ended it meanwhile (a restart ends them all): every idle
        session is dropped and a new one tries once, as a read is retried."""
        for retry in (False, True):
            conn, fresh = self._lock_sessions.take(new=retry)
            try:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            except (psycopg.Error, OSError) as exc:
                self._lock_sessions.give_back(conn, reuse=False)
                if fresh:
                    raise self.translate(exc, "run_lock") from exc
                self._lock_sessions.drop_idle()
                continue
            if not (row and row[0]):
                self._lock_sessions.give_back(conn, reuse=True)  # it holds nothing
                raise RunBusy(f"run {run_id!r} is being executed by another worker; wait for "
                              "it to finish or stop it", run_id=run_id)
            return conn
        raise AssertionError("unreachable: a new session locks, is refused or raises")


# $1 now, $2 call_id, $3 run, $4 site, $5 path, $6 occurrence, $7 capability, $8 digest,
# $9 result, $10 usage, $11 attempt, $12 result digest, $13 entry digest, $14 event kind,
# $15 event data (both NULL for no audit event).
_COMMIT_IN_ONE = f"""
WITH c AS (
    UPDATE calls SET status = 'committed', updated_at = $1
    WHERE call_id = $2 AND status IN ('pending', 'abandoned') AND run_id = $3
      AND site = $4 AND path = $5 AND occurrence = $6 AND capability = $7 AND digest = $8
    RETURNING call_id),
s AS (
    INSERT INTO slots ({SLOT_COLUMNS}, call_id)
    SELECT $3, $4, $5, $6, $7, $8, $9, $10, $11, $1, $12, $13, call_id FROM c
    ON CONFLICT DO NOTHING
    RETURNING {SLOT_COLUMNS}),
e AS (
    INSERT INTO events (run_id, ts, kind, data)
    SELECT $3, $1, $14::text, $15 FROM c WHERE $14::text IS NOT NULL
    RETURNING seq)  -- runs to completion though the query does not read it
SELECT (SELECT count(*) FROM c), s.* FROM (SELECT 1) AS one LEFT JOIN s ON true
"""


# One statement for a whole batch of events, its documents as one JSON array (a text[] of JSON
# would be escaped element by element on the client). Rows are inserted in list order (ORDER
# BY the ordinality), so the identity column hands out ascending seqs in it.
_INSERT_EVENTS = (
    "INSERT INTO events (run_id, ts, kind, data) SELECT $1, $2, k, d FROM "
    "unnest($3::text[]) WITH ORDINALITY AS a(k, n) JOIN "
    "jsonb_array_elements($4::jsonb) WITH ORDINALITY AS b(d, m) ON n = m "
    "ORDER BY n RETURNING seq")
_INSERT_EVENT = "INSERT INTO events (run_id, ts, kind, data) VALUES ($1, $2, $3, $4) RETURNING seq"


def _events_params(run_id: str, ts: float, events: list[tuple[str, str]]) -> tuple[Any, ...]:
    return (run_id, ts, [kind for kind, _ in events],
            "[" + ",".join(data for _, data in events) + "]")


def _event_seqs(found: list[Any], expected: int) -> list[int]:
    if len(found) != expected:  # the array did not split into one value per event
        raise StoreUnavailable(f"events insert stored {len(found)} of {expected} rows",
                               backend="postgres", operation="append_events")
    return sorted(int(row[0]) for row in found)


# The writer's hot statements as the pipeline prepares them, their parameters typed as
# psycopg's adapters type them on the general path.
_BEGIN_CALL = HotStatement(
    b"frostline_begin_call",
    "INSERT INTO calls (run_id, site, path, occurrence, capability, digest, attempt, status, "
    "idempotency_key, error, created_at, updated_at) VALUES "
    "($1, $2, $3, $4, $5, $6, $7, 'pending', $8, NULL, $9, $10) RETURNING call_id",
    (TEXT, TEXT, TEXT, INT8, TEXT, TEXT, INT8, TEXT, FLOAT8, FLOAT8))
_COMMIT_IN_ONE_HOT = HotStatement(
    b"frostline_commit_call", _COMMIT_IN_ONE,
    (FLOAT8, INT8, TEXT, TEXT, TEXT, INT8, TEXT, TEXT, JSON, JSON, INT8, TEXT, TEXT, TEXT,
     JSON))
_INSERT_EVENT_HOT = HotStatement(b"frostline_insert_event", _INSERT_EVENT,
                                 (TEXT, FLOAT8, TEXT, JSON))
_INSERT_EVENTS_HOT = HotStatement(b"frostline_insert_events", _INSERT_EVENTS,
                                  (TEXT, FLOAT8, TEXT_ARRAY, TEXT))


class Piped(NamedTuple):
    """A write's pipelined form: its statement, its parameters, and what reads its rows
    (after the commit; the connection is there for a read the rows call for)."""

    statement: HotStatement
    params: tuple[Any, ...]
    finish: Callable[[Any, list[Row]], Any]


def _first_int(_conn: Any, rows: list[Row]) -> int:
    return int(rows[0][0])  # type: ignore[arg-type]  # a RETURNING of a key: never NULL


def _hot(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> Any:
    """Run a hot statement (written with $n placeholders) on the plain path: a raw cursor
    passes the query as written (no placeholder conversion), and the statement is prepared on
    the server from its first use (psycopg keeps the prepared statements of a connection)."""
    cur = psycopg.RawCursor(conn)
    cur.execute(sql, params, prepare=True)
    return cur


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def _identity(text: Any) -> Any:
    return text
