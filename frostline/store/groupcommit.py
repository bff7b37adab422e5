"""Group commit: many threads' writes share one transaction and one fsync.

The broker writes an attempt record before every dispatch and a slot after every result, and
a 32-way fanout issues those writes from 32 threads at once. Committing each on its own would
cost one fsync per write; here a single writer thread per store drains a queue and commits
everything queued in one transaction. Each caller blocks until the transaction holding its own
write is durable, and receives its own result or its own exception.

A write nobody waits for yet (the broker *settles* a commit instead of waiting for it) may be
*held*: when everything queued is held, the writer waits up to `HOLD_S` for a write that someone
does wait for, and commits them together. A sequential caller's commit thereby shares the
transaction of its next attempt record — one fsync per call instead of two — and a held write
is never later than `HOLD_S` plus a batch. Waiting for a held write's future (its result, its
exception, or a done callback, which is how asyncio waits) ends the hold at once.

A batch first runs as one plain transaction. If one of its writes fails (a missing run, a
status conflict), the batch is rolled back and run again with a savepoint around each write, so
the failure undoes only that caller's write. A failed COMMIT fails every caller in the batch,
because none of their writes is durable.

Where the driver can pipeline (PostgreSQL), a batch whose writes all have a pipelined form
goes first as one pipeline: every write's statements sent together as one transaction (the
backend's `writer_pipeline` sends and commits it) and answered in one round trip; each write
reads its results only after the commit. A write whose
result says it needs its general path (nothing of it was written) takes it in a transaction of
its own, before the writes queued after it are answered; a pipeline that commits nothing (a
statement failed, or sending failed before the commit was asked for) sends the whole batch
through the plain path above. A pipeline that fails after its commit was asked for (the
connection lost while the server answers) may have committed: every write of the batch fails,
as with a failed COMMIT, and none runs again.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from frostline.errors import StoreUnavailable

C = TypeVar("C")
T = TypeVar("T")

MAX_BATCH = 512
# How long a batch of held writes waits for a write someone waits for. Short against a real
# call (a provider's latency, a script's work), long against a turn of the caller's loop.
HOLD_S = 0.002


class SlowPath(Exception):
    """Raised by a pipelined write's finisher: it wrote nothing, run its general form."""


class PipelineAborted(Exception):
    """Raised by a backend's `writer_pipeline`: nothing of the batch was committed (a
    statement failed, or sending failed before the commit); run it the plain way."""


Finisher = Callable[[], Any]


class WriterBackend(Protocol[C]):
    """What the writer thread needs from a backend: a connection and transaction control."""

    backend_name: str

    def writer_connect(self) -> C: ...

    def writer_begin(self, conn: C) -> None: ...

    def writer_commit(self, conn: C) -> None: ...

    def writer_rollback(self, conn: C) -> None: ...

    def writer_execute(self, conn: C, sql: str) -> None: ...

    def writer_usable(self, conn: C) -> bool:
        """False once the connection is known to be broken (the writer then reconnects)."""

    def writer_discard(self, conn: C) -> None:
        """Drop a connection that may be broken; the next batch reconnects."""

    def translate(self, exc: BaseException, operation: str) -> BaseException:
        """Map a driver error to StoreUnavailable; return other exceptions unchanged."""


@dataclass
class _Item(Generic[C]):
    operation: str
    fn: Callable[[C], Any]
    future: Future[Any]
    pipelined: object | None = None  # the backend's pipelined form of the write
    hold: bool = False


_STOP = object()
_WAKE = object()  # someone waits for a held write: commit what is held now


class _HeldFuture(Future[T]):
    """The future of a held write: waiting for it ends the writer's hold."""

    def __init__(self, wake: Callable[[], None]) -> None:
        super().__init__()
        self._wake: Callable[[], None] | None = wake

    def _waited(self) -> None:
        wake, self._wake = self._wake, None  # once is enough
        if wake is not None and not self.done():
            wake()

    def result(self, timeout: float | None = None) -> T:
        self._waited()
        return super().result(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self._waited()
        return super().exception(timeout)

    def add_done_callback(self, fn: Callable[[Future[T]], object]) -> None:
        self._waited()
        super().add_done_callback(fn)


class GroupCommitter(Generic[C]):
    """A writer thread that commits queued writes in shared transactions.

    Usage::

        committer = GroupCommitter(backend)
        call_id = committer.submit("begin_call", lambda conn: insert(conn, ...))
    """

    def __init__(self, backend: WriterBackend[C], *, name: str = "frostline-store-writer") -> None:
        self._backend = backend
        self._queue: queue.SimpleQueue[_Item[C] | object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._pid = os.getpid()
        self._conn: C | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        self.batches = 0  # committed transactions, for tests and the benchmark
        self.writes = 0

    def submit(self, operation: str, fn: Callable[[C], T]) -> T:
        """Run `fn(conn)` in the writer's next transaction; return once it is durable."""
        if threading.current_thread() is self._thread:
            raise RuntimeError(f"{operation}: a write cannot be queued from inside another "
                               "write (the writer thread would wait for itself)")
        return self.submit_nowait(operation, fn).result()

    def submit_nowait(self, operation: str, fn: Callable[[C], T],
                      pipelined: object | None = None, *,
                      hold: bool = False) -> Future[T]:
        """Queue `fn(conn)` for the writer's next transaction and return at once.

        `pipelined`, when given, is the same write in the form the backend's
        `writer_pipeline(conn, forms)` takes: it sends the forms of a batch and returns one
        finisher a write, which reads its results (after the commit) and returns what `fn`
        would, or raises SlowPath to have `fn` run instead. With `hold`,
        the write may wait up to `HOLD_S` for company, until its future is waited for.

        The future resolves once the transaction holding the write is durable (or with the
        write's own error). Writes are taken in queue order, so a write queued after another
        is never durable before it: when a later write's future resolves, every earlier
        write's future has resolved too.
        """
        if os.getpid() != self._pid:
            raise StoreUnavailable(
                f"{self._backend.backend_name} store was opened in another process (before a "
                "fork); open a new store in this process",
                backend=self._backend.backend_name, operation=operation,
            )
        future: Future[T] = _HeldFuture(self._wake) if hold else Future()
        with self._lock:
            if self._closed:
                raise StoreUnavailable(
                    f"{self._backend.backend_name} store is closed; open it again to {operation}",
                    backend=self._backend.backend_name, operation=operation,
                )
            self._queue.put(_Item(operation, fn, future, pipelined, hold))
        return future

    def _wake(self) -> None:
        self._queue.put(_WAKE)  # a stale one (nothing held any more) is skipped

    def close(self) -> None:
        """Commit what is queued, then stop the writer thread and close its connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        if os.getpid() == self._pid:
            self._thread.join()

    # writer thread ------------------------------------------------------------------------------
    def _loop(self) -> None:
        stop = False
        while not stop:
            batch, stop = self._collect()
            if not batch:
                continue
            try:
                self._run_batch(batch)
            except BaseException as exc:  # never leave a caller waiting on a dead writer
                for item in batch:
                    if not item.future.done():
                        _deliver(item.future, False, exc)
        if self._conn is not None:
            self._backend.writer_discard(self._conn)
            self._conn = None

    def _collect(self) -> tuple[list[_Item[C]], bool]:
        """The next batch: what is queued, in order; when all of it is held, whatever comes
        within HOLD_S too, up to the first write someone waits for. Returns (batch, stop)."""
        first = self._queue.get()
        while first is _WAKE:
            first = self._queue.get()
        if first is _STOP:
            return [], True
        batch: list[_Item[C]] = [first]  # type: ignore[list-item]
        may_hold, deadline = first.hold, 0.0  # type: ignore[attr-defined]
        while len(batch) < MAX_BATCH:
            try:
                if deadline:
                    nxt = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                else:
                    nxt = self._queue.get_nowait()
            except queue.Empty:
                if deadline or not may_hold:
                    break
                deadline = time.monotonic() + HOLD_S  # everything queued is held: wait
                continue
            if nxt is _STOP:
                return batch, True
            if nxt is _WAKE:
                if deadline:
                    break
                may_hold = False
                continue
            batch.append(nxt)  # type: ignore[arg-type]
            if not nxt.hold:  # type: ignore[attr-defined]
                may_hold, deadline = False, 0.0  # take what is queued behind it, then go
        return batch, False

    def _run_batch(self, batch: list[_Item[C]]) -> None:
        # Optimistic first: the whole batch without savepoints (fewer statements, fewer round
        # trips). Only if one write fails is the batch rolled back and run again with a
        # savepoint per write; the writes are plain functions of the database, so running
        # them again after a rollback is safe.
        pipeline = getattr(self._backend, "writer_pipeline", None)
        if (pipeline is not None and all(item.pipelined is not None for item in batch)
                and self._pipelined(batch, pipeline)):
            return
        if not self._transaction(batch, savepoints=False):
            self._transaction(batch, savepoints=True)

    def _pipelined(self, batch: list[_Item[C]],
                   pipeline: Callable[[C, list[object]], list[Finisher]]) -> bool:
        """Run `batch` as one pipeline and deliver every outcome; False to run it the plain
        way (nothing of the batch was committed)."""
        backend = self._backend
        try:
            if self._conn is not None and not backend.writer_usable(self._conn):
                self._drop_connection()
            if self._conn is None:
                self._conn = backend.writer_connect()
            conn = self._conn
        except BaseException:
            self._drop_connection()
            return False  # the plain path reports the failure, write by write
        try:
            finishers = pipeline(conn, [item.pipelined for item in batch])
        except PipelineAborted:
            if not backend.writer_usable(conn):
                self._drop_connection()
            return False  # the plain path reports what failed, write by write
        except BaseException as exc:
            # The commit was asked for and its answer never came: the batch may be durable,
            # so running it again could write it twice. Every write fails instead.
            self._drop_connection()
            self._fail_all(batch, [], _unknown(exc, backend))
            return True
        self.batches += 1
        self.writes += len(batch)
        for item, finish in zip(batch, finishers, strict=True):
            try:
                _deliver(item.future, True, finish())
            except SlowPath:
                self._transaction([item], savepoints=False)
            except BaseException as exc:
                _deliver(item.future, False, backend.translate(exc, item.operation))
        return True

    def _transaction(self, batch: list[_Item[C]], *, savepoints: bool) -> bool:
        """Run `batch` in one transaction and deliver every outcome; return True.

        Without savepoints, a failing write in a batch of several rolls everything back,
        delivers nothing, and returns False.
        """
        backend = self._backend
        if self._conn is not None and not backend.writer_usable(self._conn):
            self._drop_connection()
        try:
            if self._conn is None:
                self._conn = backend.writer_connect()
            conn = self._conn
            backend.writer_begin(conn)
        except BaseException as exc:
            self._drop_connection()
            self._fail_all(batch, [], backend.translate(exc, "begin"))
            return True
        outcomes: list[tuple[bool, Any]] = []
        try:
            for i, item in enumerate(batch):
                if not savepoints:
                    ok, value = self._call(item, conn)
                    outcomes.append((ok, value))
                    if not ok and len(batch) > 1:
                        if not backend.writer_usable(conn):
                            # The connection is gone, not just one write: fail the batch
                            # (the next one reconnects) rather than retry behind callers' backs.
                            raise value
                        backend.writer_rollback(conn)
                        return False
                    continue
                # One savepoint per write, so a failing write undoes only itself.
                backend.writer_execute(conn, f"SAVEPOINT w{i}")
                ok, value = self._call(item, conn)
                if ok:
                    backend.writer_execute(conn, f"RELEASE SAVEPOINT w{i}")
                else:
                    backend.writer_execute(conn, f"ROLLBACK TO SAVEPOINT w{i}")
                    backend.writer_execute(conn, f"RELEASE SAVEPOINT w{i}")
                outcomes.append((ok, value))
            if all(ok for ok, _ in outcomes):
                backend.writer_commit(conn)
            elif len(batch) == 1:
                backend.writer_rollback(conn)
            else:
                backend.writer_commit(conn)  # the failed writes were rolled back to savepoints
        except BaseException as exc:
            # The transaction itself failed (savepoint, rollback or COMMIT): nothing in it is
            # durable.
            self._drop_connection()
            self._fail_all(batch, outcomes, backend.translate(exc, "commit"))
            return True
        self.batches += 1
        self.writes += len(batch)
        for item, (ok, value) in zip(batch, outcomes, strict=True):
            _deliver(item.future, ok, value)
        return True

    def _fail_all(self, batch: list[_Item[C]], outcomes: list[tuple[bool, Any]],
                  err: BaseException) -> None:
        for i, item in enumerate(batch):
            if i < len(outcomes) and not outcomes[i][0]:
                _deliver(item.future, False, outcomes[i][1])  # its own error came first
            else:
                _deliver(item.future, False, _for(err, item.operation, self._backend))

    def _call(self, item: _Item[C], conn: C) -> tuple[bool, Any]:
        try:
            return True, item.fn(conn)
        except BaseException as exc:
            return False, self._backend.translate(exc, item.operation)

    def _drop_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(BaseException):  # it is thrown away anyway
                self._backend.writer_rollback(self._conn)
            self._backend.writer_discard(self._conn)
            self._conn = None


def _deliver(future: Future[Any], ok: bool, value: Any) -> None:
    """Resolve a caller's future. A queued write runs even if its caller cancelled the future
    (it stopped waiting; the write was already decided), so a cancelled future is left as is."""
    with contextlib.suppress(InvalidStateError):  # cancelled, even while we got here
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _unknown(exc: BaseException, backend: WriterBackend[Any]) -> StoreUnavailable:
    """A batch-wide failure after the commit was asked for: whether it committed is unknown."""
    err = StoreUnavailable(f"{backend.backend_name} store failed during commit: {exc}",
                           backend=backend.backend_name, operation="commit", outcome="unknown")
    err.__cause__ = exc
    return err


def _for(err: BaseException, operation: str, backend: WriterBackend[Any]) -> BaseException:
    """A per-caller copy of a batch-wide failure, naming the caller's own operation."""
    if isinstance(err, StoreUnavailable):
        cause = err.__cause__ if err.__cause__ is not None else err
        outcome = ("the connection was lost after its commit was sent ({}); whether it is "
                   "stored is not known" if err.fields.get("outcome") == "unknown" else
                   "the transaction holding it did not commit ({}); nothing of it is stored")
        copy = type(err)(  # a refusal stays a refusal
            f"{backend.backend_name} store failed during {operation}: "
            f"{outcome.format(cause)}. Check that the database is reachable and writable, "
            "then retry",
            **{**err.fields, "operation": operation},
        )
        copy.__cause__ = err.__cause__
        return copy
    return err
