"""Procrastinate's tables, in a PostgreSQL schema of their own beside the store's.

The store lives in the first schema of its URL's search_path (say `app`); its jobs live in
`app_jobs`. Procrastinate qualifies none of its objects, so its connections simply put the jobs
schema alone on their search_path: nothing of Procrastinate's can collide with frostline's
tables, and two stores in two schemas of one database have two independent queues.

frostline applies Procrastinate's schema itself, as a migration of the jobs schema: the first
open applies the `schema.sql` of the installed Procrastinate and records the newest of the
migration files it ships; a later Procrastinate brings more migration files, and the next open
applies the ones after the recorded name, in order (Procrastinate's own upgrade path). Beside
Procrastinate's tables, `frostline_workers` names each registered worker (host, pid, sandbox
profile), which Procrastinate does not keep.
"""

from __future__ import annotations

import hashlib
import socket
import time
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from frostline.errors import StoreUnavailable
from frostline.store.url import redact

SUFFIX = "_jobs"
CONNECT_TIMEOUT_S = 5
# Fail fast on a dead link instead of TCP's quarter of an hour: a worker must notice that its
# database is gone well before other workers declare it stalled (see frostline.worker.host).
LINK_PARAMS = {"keepalives": "1", "keepalives_idle": "5", "keepalives_interval": "2",
               "keepalives_count": "2", "tcp_user_timeout": "5000"}
SERVER_KEEPALIVES = ("-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 "
                     "-c tcp_keepalives_count=2")

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS frostline_job_schema (
    id integer PRIMARY KEY CHECK (id = 1),
    procrastinate_migration text NOT NULL,
    procrastinate_version text NOT NULL,
    applied_at double precision NOT NULL)"""

_WORKERS_TABLE = """CREATE TABLE IF NOT EXISTS frostline_workers (
    worker_id bigint PRIMARY KEY REFERENCES procrastinate_workers(id) ON DELETE CASCADE,
    name text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    concurrency integer NOT NULL,
    queues text NOT NULL,
    sandbox text NOT NULL,
    started_at double precision NOT NULL,
    stalled_after double precision)"""
# Added after the first release of the table: a registration says when it counts as stalled.
_WORKERS_STALLED_AFTER = ("ALTER TABLE frostline_workers ADD COLUMN IF NOT EXISTS stalled_after "
                          "double precision")


def jobs_schema_of(store_schema: str) -> str:
    return store_schema + SUFFIX


def with_link_params(url: str) -> str:
    """`url` with fast dead-link detection on both ends, unless the URL chose its own values.

    Client side, libpq's keepalives and TCP user timeout make a read or write on a dead link
    fail within seconds. Server side, the same keepalive settings (per session, through
    `options`) make the server end a dead worker's sessions — and release its run locks —
    within seconds rather than hours.
    """
    return _with(url, {k: v for k, v in LINK_PARAMS.items()}, SERVER_KEEPALIVES)


def jobs_conninfo(store_url: str, jobs_schema: str) -> str:
    """The store's URL with the jobs schema alone on the search_path (and link params)."""
    # A later -c wins over an earlier one, so the store URL's own search_path is overridden.
    return _with(with_link_params(store_url), {}, f"-c search_path={jobs_schema}")


def _with(url: str, params: dict[str, str], options: str) -> str:
    """Add query parameters the URL lacks, and append `options` to its libpq options."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    present = {k for k, _ in query}
    query += [(k, v) for k, v in params.items() if k not in present]
    if options:
        current = next((v for k, v in query if k == "options"), "")
        wanted = [o for o in _split_options(options) if o not in _split_options(current)]
        if wanted:
            merged = " ".join([current, *wanted]).strip()
            query = [(k, v) for k, v in query if k != "options"] + [("options", merged)]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def _split_options(text: str) -> list[str]:
    return [f"-c {o.strip()}" for o in text.replace("-c ", "-c").split("-c") if o.strip()]


def connect(conninfo: str, *, autocommit: bool = True,
            timeout_s: int = CONNECT_TIMEOUT_S) -> psycopg.Connection[Any]:
    return psycopg.connect(conninfo, autocommit=autocommit, connect_timeout=timeout_s)


def ensure_jobs_schema(store_url: str, store_schema: str) -> str:
    """Create or upgrade the jobs schema of the store at `store_url`; return its conninfo."""
    name = jobs_schema_of(store_schema)
    conninfo = jobs_conninfo(store_url, name)
    try:
        with connect(conninfo, autocommit=False) as conn:
            # Serialize concurrent openers (a fleet of workers starting at once).
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key(name),))
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(name)))
            conn.execute(_VERSION_TABLE)
            row = conn.execute("SELECT procrastinate_migration FROM frostline_job_schema"
                               ).fetchone()
            _migrate(conn, None if row is None else str(row[0]))
            conn.execute(_WORKERS_TABLE)
            conn.execute(_WORKERS_STALLED_AFTER)
            conn.commit()
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"cannot prepare the jobs schema {name!r} at {redact(store_url)}: {exc}",
            backend="postgres", operation="jobs_schema") from exc
    return conninfo


def _migrate(conn: psycopg.Connection[Any], applied: str | None) -> None:
    import procrastinate

    files = _migration_files()
    newest = files[-1].name if files else "none"
    if applied is None:
        # psycopg would read a % of the schema text as a placeholder only with parameters; the
        # text is sent alone, as Procrastinate's own SchemaManager does.
        conn.execute(_schema_text())  # type: ignore[call-overload,unused-ignore]
    else:
        for path in files:
            if path.name > applied:
                conn.execute(path.read_text("utf-8"))  # type: ignore[call-overload,unused-ignore]
    conn.execute("INSERT INTO frostline_job_schema VALUES (1, %s, %s, %s) ON CONFLICT (id) DO "
                 "UPDATE SET procrastinate_migration = EXCLUDED.procrastinate_migration, "
                 "procrastinate_version = EXCLUDED.procrastinate_version, applied_at = "
                 "EXCLUDED.applied_at WHERE frostline_job_schema.procrastinate_migration <> "
                 "EXCLUDED.procrastinate_migration",
                 (newest, procrastinate.__version__, time.time()))


def _schema_text() -> str:
    return (resources.files("procrastinate.sql") / "schema.sql").read_text(encoding="utf-8")


def _migration_files() -> list[Path]:
    from procrastinate.schema import SchemaManager

    return sorted(Path(SchemaManager.get_migrations_path()).glob("*.sql"))


def _key(name: str) -> int:
    digest = hashlib.sha256(f"frostline\0jobs\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def host_name() -> str:
    return socket.gethostname()
