"""The Store interface in SQL, shared by the SQLite and PostgreSQL backends.

Every query is written once here with ``?`` placeholders, on top of `SqlBackend` (connections,
the group-commit writer, the fail-closed boundary); a backend supplies the dialect. Writes are
closures that the writer runs inside a shared transaction; everything they need from the
caller (JSON text, timestamps) is computed before they are queued, so a bad value fails in the
caller's thread and a rerun of the closure after a rollback writes the same thing.
"""


from __future__ import annotations

from concurrent.futures import Future
from typing import Any, TypeVar

from frostline.store.sql_calls import SLOT_COLUMNS, CallQueries
from frostline.store.sql_catalogs import CatalogQueries
from frostline.store.sql_history import HistoryQueries
from frostline.store.sql_principals import PrincipalQueries
from frostline.store.sql_runs import RUN_KINDS, RunQueries
from frostline.store.sql_waits import WaitQueries
from frostline.store.writes import Write, check_write

T = TypeVar("T")

__all__ = ["RUN_KINDS", "SLOT_COLUMNS", "SqlStore"]


class SqlStore(RunQueries, CallQueries, HistoryQueries, CatalogQueries, PrincipalQueries,
               WaitQueries):
    """The Store methods as SQL; `SQLiteStore` and `PostgresStore` add the dialect. Each base
    holds the queries of one part of the record (runs, the prefix, history, the catalogs
    attempts ran under, principals, waits)."""

    def submit(self, write: Write[T]) -> Future[T]:
        """Queue `write` on the group-commit writer and return its future at once.

        The write is prepared here (JSON encoded and checked, timestamped), in its general and,
        where the dialect pipelines, its pipelined form; a bad argument fails the future. A
        `held` write may wait briefly for company (see `groupcommit`); waiting for its future
        ends that at once.
        """
        check_write(write)
        try:
            self._check_open(write.operation)
            form = write.sql(self, True)
            return self._writer.submit_nowait(write.operation, form.run, form.piped,
                                              hold=write.held)
        except Exception as exc:
            failed: Future[Any] = Future()
            failed.set_exception(exc)
            return failed
