"""The PostgreSQL writer's usual batch through libpq's pipeline mode, below psycopg's Connection.

A sequential call's batch is a handful of statements (the events lock, the call's commit, the
next attempt record), each prepared once per connection. Through psycopg's `Connection.pipeline`
every one of them passes through cursors, query conversion, adapters and result generators:
about 340 Python calls a batch, most of the writer thread's CPU. Here the same statements go
through `psycopg.pq` directly: parameters encoded by hand as text, results read as text, a few
dozen calls to libpq a batch. Everything else the writer does (the plain path, the general form
of a write, the reads) stays on psycopg.

What a batch keeps from the psycopg pipeline it replaces:

- **One transaction.** Everything sent before a Sync is one implicit transaction, which the
  Sync commits (durably, before the server answers) and a failing statement rolls back whole;
  no BEGIN or COMMIT is sent.
- **Nothing written twice.** Every parameter is encoded before the first byte is sent, so a
  Python error cannot leave part of a batch on the wire. A failure while the statements are
  being sent, before the Sync, closes the connection: the server rolls back what it got, and
  `PipelineAborted` sends the batch through the plain path. A failing statement also ends in
  `PipelineAborted` (the Sync rolled everything back). A failure once the Sync has gone out
  leaves the outcome unknown, and is raised as it is: the writer then fails the whole batch
  instead of running it again. So that a server restart between two batches does not end that
  way, a connection the server spoke on while it was idle is replaced before anything is sent.
- **No blocking while holding the GIL.** psycopg keeps libpq non-blocking, and this waits for
  the socket with `poll`, which releases the GIL, as psycopg's own waits do (a blocking
  `PQgetResult` would stall the event loop for the whole round trip).

A statement is prepared on the server the first time a connection uses it, in a segment of the
same round trip ahead of the batch (its own Sync, so a statement that cannot be prepared, such
as one naming a column an older schema lacks, fails only the batch, and what was prepared is
known exactly).
"""

from __future__ import annotations

import select
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import pq
from psycopg.pq.abc import PGresult
from psycopg.types.json import Json

from frostline.store.groupcommit import PipelineAborted

# Parameter types of the prepared statements (pg_type oids). Declared rather than inferred, so
# that every parameter has the type psycopg's adapters gave it on the general path.
TEXT, INT8, FLOAT8, JSON, TEXT_ARRAY = 25, 20, 701, 114, 1009

_SUPPORTED = psycopg.Pipeline.is_supported()
_TUPLES_OK = pq.ExecStatus.TUPLES_OK
_COMMAND_OK = pq.ExecStatus.COMMAND_OK
_PIPELINE_SYNC = pq.ExecStatus.PIPELINE_SYNC

Row = tuple[str | None, ...]


@dataclass(frozen=True)
class HotStatement:
    """A statement the writer prepares once per connection, under `name`."""

    name: bytes
    sql: str
    types: tuple[int, ...] = ()
    sql_bytes: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sql_bytes", self.sql.encode())


class HotPipeline:
    """Runs batches of hot statements on one psycopg connection's libpq connection.

    Usage::

        pipe = HotPipeline(conn)
        rows = pipe.run([(BEGIN_CALL, (run_id, ...)), ...])  # one list of rows a statement
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._pg = conn.pgconn
        self._encoding = conn.info.encoding
        self._prepared: set[bytes] = set()
        self._poll = select.poll()
        self._fd = self._pg.socket

    def run(self, statements: Sequence[tuple[HotStatement, Sequence[Any]]]) -> list[list[Row]]:
        """Send `statements` as one transaction and return each one's rows (columns as text).

        Raises PipelineAborted when nothing of it was committed; any other exception means
        the commit was sent and its outcome is not known.
        """
        try:
            encoded = [(st.name, [self._encode(v) for v in params]) for st, params in statements]
        except Exception as exc:  # nothing sent yet
            raise PipelineAborted(f"a parameter cannot be sent as text: {exc}") from exc
        new: list[HotStatement] = []
        for st, _ in statements:
            if st.name not in self._prepared and st not in new:
                new.append(st)
        pg = self._pg
        if not _SUPPORTED:
            raise PipelineAborted("this libpq has no pipeline mode (libpq 14 or newer has)")
        self._check_idle()
        try:
            pg.enter_pipeline_mode()
        except psycopg.Error as exc:
            raise PipelineAborted(f"the connection cannot pipeline: {exc}") from exc
        try:
            for st in new:
                pg.send_prepare(st.name, st.sql_bytes, st.types)
            if new:
                pg.pipeline_sync()  # the preparations are a segment of their own
            for name, values in encoded:
                pg.send_query_prepared(name, values)
        except BaseException as exc:
            # Part of the batch may be on the wire, without its Sync: closing the connection
            # rolls it back on the server.
            self.conn.close()
            raise PipelineAborted(f"sending a pipelined batch failed: {exc}") from exc
        pg.pipeline_sync()  # from here on, a failure leaves the outcome unknown
        self._flush()
        segments = self._read(2 if new else 1)
        pg.exit_pipeline_mode()
        if new:
            self._prepared.update(st.name for st, res in zip(new, segments[0], strict=True)
                                  if res.status == _COMMAND_OK)
        batch = segments[-1]
        rows: list[list[Row]] = []
        for res in batch:
            if res.status != _TUPLES_OK:  # the Sync rolled the whole batch back
                raise PipelineAborted("a pipelined statement failed") from (
                    _first_error(batch, self._encoding))
            rows.append(self._rows(res))
        return rows

    # I/O ----------------------------------------------------------------------------------------
    def _check_idle(self) -> None:
        """An idle connection has nothing to read unless the server spoke on its own, which it
        does when it is about to close the connection (a restart, a terminated backend; a
        notice or a changed setting are rare). Such a connection is closed here, before
        anything is sent, and the plain path reconnects: found only after the Sync, its end
        would leave the batch's outcome unknown."""
        self._poll.register(self._fd, select.POLLIN)
        if self._poll.poll(0):
            self.conn.close()
            raise PipelineAborted("the server spoke while the connection was idle")

    def _flush(self) -> None:
        pg = self._pg
        while pg.flush():  # more to send: wait until the socket takes it
            if self._wait(select.POLLIN | select.POLLOUT) & select.POLLIN:
                pg.consume_input()  # the server's answers, so that it is never stuck writing

    def _read(self, syncs: int) -> list[list[PGresult]]:
        """Every result up to the `syncs`-th Sync, one list per segment (one per command)."""
        pg = self._pg
        segments: list[list[PGresult]] = [[]]
        while True:
            if pg.is_busy():
                self._wait(select.POLLIN)
                pg.consume_input()
                continue
            res = pg.get_result()
            if res is None:  # the end of one command's results
                continue
            if res.status == _PIPELINE_SYNC:
                if len(segments) == syncs:
                    return segments
                segments.append([])
                continue
            segments[-1].append(res)

    def _wait(self, events: int) -> int:
        self._poll.register(self._fd, events)
        while True:
            ready = self._poll.poll()  # releases the GIL while it waits
            if ready:
                return ready[0][1]

    # values -------------------------------------------------------------------------------------
    def _encode(self, value: Any) -> bytes | None:
        """A parameter in PostgreSQL's text format, as psycopg would have sent it."""
        kind = type(value)  # the usual types first, by identity (a bool is not an int here)
        if kind is str:
            return value.encode(self._encoding)  # type: ignore[no-any-return]
        if value is None:
            return None
        if kind is int:
            return b"%d" % value
        if kind is float:
            return repr(value).encode()
        if isinstance(value, str):  # a subclass (a StrEnum): its characters, as psycopg
            return str.encode(value, self._encoding)
        if isinstance(value, int) and not isinstance(value, bool):
            return b"%d" % value
        if isinstance(value, Json):  # JSON text the store encoded already
            text = value.obj
            if not isinstance(text, str):
                raise TypeError("a JSON parameter must be encoded text")
            return text.encode(self._encoding)
        if kind is list and all(type(v) is str for v in value):
            return _text_array(value).encode(self._encoding)
        raise TypeError(f"{kind.__name__} is not sent through the pipeline")

    def _rows(self, res: PGresult) -> list[Row]:
        enc, get = self._encoding, res.get_value
        cols = range(res.nfields)
        return [tuple([None if v is None else v.decode(enc) for v in [get(r, c) for c in cols]])
                for r in range(res.ntuples)]


def _text_array(items: list[str]) -> str:
    """A text[] literal: every element quoted, backslashes and quotes escaped."""
    return "{" + ",".join(
        '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items) + "}"


def _first_error(results: list[PGresult], encoding: str) -> BaseException | None:
    for res in results:
        if res.status not in (_TUPLES_OK, pq.ExecStatus.PIPELINE_ABORTED):
            return psycopg.errors.error_from_result(res, encoding=encoding)
    return None
