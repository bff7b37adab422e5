"""The default run store: one SQLite file, no server to start.

Durability choices: WAL journal (readers never block the writer, and a commit appends to one
file) with ``synchronous=FULL``, so a transaction is on disk when COMMIT returns — the attempt
record must survive a crash that follows the dispatch. ``busy_timeout`` lets several processes
share the file, each waiting its turn for the write lock instead of failing at once.

`run_lock` takes an exclusive ``flock`` on a per-run sidecar file next to the database. flock
locks belong to the open file, so two holders in one process exclude each other just as two
processes do, and the kernel releases the lock when its holder dies (even by SIGKILL).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from frostline.errors import RunBusy, StoreNotFound, StoreUnavailable
from frostline.store import schema
from frostline.store.sql import SqlStore

BUSY_TIMEOUT_MS = 30_000


class SQLiteStore(SqlStore):
    """The run store in one SQLite file.

    Usage::

        with SQLiteStore("runs/frostline.db") as store:
            store.create_run("r1", {})
    """

    backend_name = "sqlite"
    dialect: schema.Dialect = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, url: str | None = None,
                 create: bool = True, clock: Callable[[], float] = time.time,
                 _migrate_to: int = schema.LATEST) -> None:
        self.path = Path(path)
        self._lock_dir = self.path.with_name(self.path.name + ".locks")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            else:
                self._require_store()
            self._migrate(_migrate_to)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(
                f"cannot open the sqlite store at {self.path}: {exc}. Check that the folder "
                "exists and is writable", backend="sqlite", operation="open",
            ) from exc
        super().__init__(url or f"sqlite:///{self.path}", clock=clock)

    def _require_store(self) -> None:
        """A reader's open: the file must exist and hold a frostline schema; checked without
        writing (no WAL switch, no table), so a wrong path leaves nothing behind."""
        where = f"no frostline store at {self.path}"
        if not self.path.is_file():
            raise StoreNotFound(f"{where}: nothing has run with this store yet; check --store "
                                "or $FROSTLINE_STORE", backend="sqlite", path=str(self.path))
        conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                 "name = 'schema_version'").fetchone()
        finally:
            conn.close()
        if found is None:
            raise StoreNotFound(f"{where}: the file is not a frostline store; check --store "
                                "or $FROSTLINE_STORE", backend="sqlite", path=str(self.path))

    def local_files(self) -> tuple[Path, ...]:
        return (self.path, *(self.path.with_name(self.path.name + suffix)
                             for suffix in ("-wal", "-shm", "-journal")), self._lock_dir)

    # connections --------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; the writer issues BEGIN IMMEDIATE
        # itself and a reader's SELECT sees the latest commit.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _connect_reader(self) -> sqlite3.Connection:
        return self._connect()

    def _close_conn(self, conn: Any) -> None:
        conn.close()

    def writer_connect(self) -> sqlite3.Connection:
        return self._connect()

    def writer_begin(self, conn: sqlite3.Connection) -> None:
        # IMMEDIATE takes the write lock up front, so a batch never fails half-way on a
        # lock upgrade when another process writes the same file.
        conn.execute("BEGIN IMMEDIATE")

    def writer_commit(self, conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")

    def writer_rollback(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def writer_execute(self, conn: sqlite3.Connection, sql: str) -> None:
        conn.execute(sql)

    def writer_discard(self, conn: sqlite3.Connection) -> None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()

    # dialect ------------------------------------------------------------------------------------
    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, OSError)

    def _is_fk_violation(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and "FOREIGN KEY" in str(exc)

    def _is_refusal(self, exc: BaseException) -> bool:
        # A locked or busy database, a full disk, an I/O error, a missing table are
        # OperationalErrors: they may pass, or are the operator's to fix. A constraint or a
        # value SQLite refuses will be refused again.
        return isinstance(exc, sqlite3.IntegrityError | sqlite3.DataError)

    def _sql(self, sql: str) -> str:
        return sql

    def _json_param(self, text: str) -> Any:
        return text

    def _insert_events(self, conn: Any, run_id: str, ts: float,
                       events: list[tuple[str, str]]) -> list[int]:
        conn.executemany("INSERT INTO events (run_id, ts, kind, data) VALUES (?, ?, ?, ?)",
                         [(run_id, ts, kind, data) for kind, data in events])
        # The writer holds the database's write lock (BEGIN IMMEDIATE) and seq is an
        # AUTOINCREMENT key, so the rows just inserted hold the last len(rows) consecutive seqs.
        last = int(conn.execute("SELECT last_insert_rowid()").fetchone()[0])
        return list(range(last - len(events) + 1, last + 1))

    # schema -------------------------------------------------------------------------------------
    def _migrate(self, target: int) -> None:
        conn = self._connect()
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"could not switch to WAL (journal_mode={mode})")
            conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it
            try:
                conn.execute(schema.render(schema.SCHEMA_VERSION_TABLE, "sqlite"))
                applied = {int(r[0]) for r in conn.execute(
                    "SELECT version FROM schema_version").fetchall()}
                current = max(applied, default=0)
                if current > schema.LATEST:
                    raise StoreUnavailable(
                        f"the sqlite store at {self.path} has schema version {current}, newer "
                        f"than this frostline supports ({schema.LATEST}); upgrade frostline "
                        "to open it", backend="sqlite", operation="open",
                        version=current, supported=schema.LATEST)
                for migration in schema.pending(applied, target):
                    for statement in migration.statements("sqlite"):
                        conn.execute(statement)
                    conn.execute("INSERT INTO schema_version (version, description, applied_at) "
                                 "VALUES (?, ?, ?)",
                                 (migration.version, migration.description, time.time()))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()

    # run lock -----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def run_lock(self, run_id: str) -> Iterator[None]:
        self._check_open("run_lock")
        name = hashlib.sha256(run_id.encode()).hexdigest()[:32] + ".lock"
        try:
            self._lock_dir.mkdir(exist_ok=True)
            fd = os.open(self._lock_dir / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise self.translate(exc, "run_lock") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunBusy(f"run {run_id!r} is being executed by another worker; wait for "
                              "it to finish or stop it", run_id=run_id) from None
            except OSError as exc:
                raise self.translate(exc, "run_lock") from exc
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

