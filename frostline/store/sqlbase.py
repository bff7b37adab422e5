"""The SQL backend machinery under both stores: connections, the writer, the fail-closed boundary.

`SqlBackend` owns what every SQL store needs regardless of its queries: the group-commit writer
(all writes), one read connection per thread, the dialect hooks a backend fills in (driver
errors, placeholders, JSON adapters, transaction control), and the single place where a driver
error becomes StoreUnavailable. `frostline.store.sql` writes the queries on top of it.
"""

from __future__ import annotations

import abc
import json
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from frostline.contract.jsonshape import text_problem
from frostline.contract.records import SlotRecord
from frostline.errors import RunNotFound, StoreRefused, StoreUnavailable, ValueNotStorable
from frostline.store.base import Store
from frostline.store.connections import ThreadConnections
from frostline.store.groupcommit import GroupCommitter
from frostline.store.jsontext import json_text as dumps
from frostline.store.schema import Dialect

T = TypeVar("T")

_decode = json.JSONDecoder().decode  # skips json.loads' per-call argument checks

# A commit's parameters, encoded once for its general and its pipelined form: (result JSON,
# (result digest, link digest), usage JSON, audit (kind, JSON) or None, time).
CommitParams = tuple[Any, tuple[str, str], Any, tuple[str, Any] | None, float]


class SqlBackend(Store):
    """Connections, writer and error boundary of a SQL store; subclasses add the dialect."""

    backend_name: str
    dialect: Dialect

    def __init__(self, url: str, *, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self._clock = clock
        self._closed = False
        self._pid = os.getpid()
        self._readers: ThreadConnections[Any] = ThreadConnections(self._connect_reader,
                                                                  self._close_conn)
        self._writer: GroupCommitter[Any] = GroupCommitter(self)

    # dialect hooks ------------------------------------------------------------------------------
    @abc.abstractmethod
    def _connect_reader(self) -> Any: ...

    @abc.abstractmethod
    def _close_conn(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def writer_connect(self) -> Any: ...

    @abc.abstractmethod
    def writer_begin(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def writer_commit(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def writer_rollback(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def writer_execute(self, conn: Any, sql: str) -> None: ...

    @abc.abstractmethod
    def writer_discard(self, conn: Any) -> None: ...

    def writer_usable(self, conn: Any) -> bool:
        return True

    @abc.abstractmethod
    def _driver_errors(self) -> tuple[type[BaseException], ...]: ...

    @abc.abstractmethod
    def _is_fk_violation(self, exc: BaseException) -> bool: ...

    @abc.abstractmethod
    def _is_refusal(self, exc: BaseException) -> bool:
        """Whether the driver error `exc` is the database refusing this statement for good
        (a data error, a constraint, a malformed statement): the same statement would fail
        again, so it is StoreRefused, never retried. Anything else (a lost connection, a
        serialization failure, a deadlock, a server shutting down) may pass."""

    @abc.abstractmethod
    def _sql(self, sql: str) -> str:
        """The dialect's spelling of a query written with ``?`` placeholders."""

    @abc.abstractmethod
    def _json_param(self, text: str) -> Any: ...

    def _json_value(self, text: str) -> Any:
        """Decode one JSON column value (both backends hand JSON columns over as text)."""
        try:
            return _decode(text)
        except (ValueError, TypeError) as exc:
            raise self._corrupt(exc) from exc

    def _json_values(self, texts: list[str]) -> list[Any]:
        """Decode many values of one JSON column with a single parse.

        The texts are JSON this store wrote, so joined with commas they form one array; one
        parse of it is several times faster than a call per row on a 10,000-slot prefix.
        """
        if not texts:
            return []
        try:
            values: list[Any] = _decode("[" + ",".join(texts) + "]")
        except (ValueError, TypeError) as exc:
            raise self._corrupt(exc) from exc
        if len(values) != len(texts):
            raise self._corrupt(ValueError("a JSON column holds more than one value"))
        return values

    def _json_values_or_none(self, texts: list[str | None]) -> list[Any]:
        """`_json_values`, where a NULL (a column a read left out) decodes to None."""
        if None not in texts:
            return self._json_values(texts)  # type: ignore[arg-type]
        present = iter(self._json_values([t for t in texts if t is not None]))
        return [None if t is None else next(present) for t in texts]

    def _corrupt(self, exc: Exception) -> StoreUnavailable:
        return StoreUnavailable(
            f"the {self.backend_name} store holds a JSON column that does not parse ({exc}); "
            "it was changed outside frostline", backend=self.backend_name, operation="decode")

    def _before_event_insert(self, conn: Any) -> None:
        """Serialize event inserts where seq order could differ from commit order."""

    def _commit_in_one(self, conn: Any, call_id: int, slot: Any, result: Any, usage: Any,
                       audit: tuple[str, Any] | None, now: float,
                       digests: tuple[str, str]) -> Any | None:
        """The usual commit (a pending call whose identity, capability and digest match the
        slot) in one statement where a round trip costs more than a statement: returns the
        stored slot row, or None to take the general path. None by default: a statement is
        a function call on SQLite."""
        return None

    # The pipelined forms of the writes that have one (see `frostline.store.writes`): what a
    # dialect's `writer_pipeline` sends, from the parameters the general form was built with.
    # None: this dialect does not pipeline, and the writer takes the plain path.
    def _piped_begin_call(self, params: tuple[Any, ...]) -> object | None:
        return None

    def _piped_commit_call(self, call_id: int, slot: SlotRecord,
                           prepared: CommitParams) -> object | None:
        return None

    def _piped_append_event(self, run_id: str, kind: str, payload: Any,
                            now: float) -> object | None:
        return None

    def _piped_append_events(self, run_id: str, now: float,
                             rows: list[tuple[str, str]]) -> object | None:
        return None

    def _insert_event(self, conn: Any, run_id: str, kind: str, payload: Any, now: float) -> int:
        self._before_event_insert(conn)
        rows = self._x(conn, "INSERT INTO events (run_id, ts, kind, data) VALUES (?, ?, ?, ?) "
                       "RETURNING seq", (run_id, now, kind, payload)).fetchall()
        return int(rows[0][0])

    @abc.abstractmethod
    def _insert_events(self, conn: Any, run_id: str, ts: float,
                       events: list[tuple[str, str]]) -> list[int]:
        """Insert `(kind, data as JSON text)` events of one run in list order, in one round of
        the driver; return their seqs (ascending, in list order)."""

    def _redacted_url(self) -> str:
        return self.url

    # the fail-closed boundary -------------------------------------------------------------------
    def translate(self, exc: BaseException, operation: str) -> BaseException:
        if isinstance(exc, self._driver_errors()) and self._is_refusal(exc):
            refused = StoreRefused(
                f"the {self.backend_name} store refused {operation}: {exc}. Nothing was "
                "recorded, and the same write would be refused again (a data error, not an "
                "outage)", backend=self.backend_name, operation=operation,
                sqlstate=getattr(exc, "sqlstate", None))
            refused.__cause__ = exc
            return refused
        if isinstance(exc, self._driver_errors()):
            err = StoreUnavailable(
                f"{self.backend_name} store failed during {operation}: {exc}. Nothing was "
                f"recorded; check that {self._redacted_url()} is reachable and writable, then "
                "retry", backend=self.backend_name, operation=operation,
            )
            err.__cause__ = exc
            return err
        return exc

    def _check_open(self, operation: str) -> None:
        if os.getpid() != self._pid:
            # Connections must not cross a fork: the child would share the parent's sockets
            # and file locks. A forked child opens its own store.
            raise StoreUnavailable(
                f"{self.backend_name} store was opened in process {self._pid}, before a fork; "
                "open a new store in this process", backend=self.backend_name,
                operation=operation)
        if self._closed:
            raise StoreUnavailable(
                f"{self.backend_name} store is closed; open it again to {operation}",
                backend=self.backend_name, operation=operation,
            )

    def _read(self, operation: str, fn: Callable[[Any], T]) -> T:
        self._check_open(operation)
        for attempt in range(2):
            conn = None
            try:
                conn = self._readers.get()
                return fn(conn)
            except self._driver_errors() as exc:
                broken = conn is not None and not self.writer_usable(conn)
                self._readers.discard()
                # A read is idempotent: once, on a connection that broke (a server restart),
                # try a fresh one; if that fails too, the store is down and we fail closed.
                if attempt or not broken:
                    raise self.translate(exc, operation) from exc
        raise AssertionError("unreachable")

    def _write(self, operation: str, fn: Callable[[Any], T]) -> T:
        self._check_open(operation)
        return self._writer.submit(operation, fn)

    def _x(self, conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        self._check_text(*params)  # every text a statement takes (JSON: json_text)
        return conn.execute(self._sql(sql), params)

    @staticmethod
    def _check_text(*values: Any) -> None:
        """ValueNotStorable for a text no store keeps (a NUL, a lone surrogate), so both
        stores refuse it alike, rather than each driver in its own way."""
        for value in values:
            if isinstance(value, str) and text_problem(value) is not None:
                raise _unstorable_text(value)

    def _insert_for_run(self, conn: Any, run_id: str, sql: str, params: tuple[Any, ...]) -> Any:
        try:
            return self._x(conn, sql, params).fetchall()
        except self._driver_errors() as exc:
            if self._is_fk_violation(exc):
                raise no_run(run_id) from exc
            raise

    def _j(self, value: Any, what: str) -> Any:
        return self._json_param(dumps(value, what))

    def _jn(self, value: Any, what: str) -> Any:
        return None if value is None else self._j(value, what)

    def _load(self, value: Any) -> Any:
        return None if value is None else self._json_value(value)

    def schema_version(self) -> int:
        """The newest schema migration recorded in the database."""
        rows = self._read("schema_version", lambda c: c.execute(
            "SELECT MAX(version) FROM schema_version").fetchall())
        return int(rows[0][0])

    # lifecycle ----------------------------------------------------------------------------------
    @property
    def group_commit_stats(self) -> tuple[int, int]:
        """(transactions committed, writes committed) by this store's writer thread."""
        return self._writer.batches, self._writer.writes

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        self._readers.close_all()


def _unstorable_text(text: str) -> ValueNotStorable:
    reason = text_problem(text)
    what = ("a NUL character (U+0000)" if reason == "nul" else
            "a lone surrogate (U+D800-U+DFFF)")
    return ValueNotStorable(f"a name or text given to the store contains {what}, which no "
                            "store keeps; remove it", field="text", reason=reason)


def no_run(run_id: str) -> RunNotFound:
    return RunNotFound(f"no run {run_id!r} in this store; create_run first", run_id=run_id)
