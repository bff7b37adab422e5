"""Shared pieces of the durable-runtime benchmarks: floors, scratch stores, statistics, tables.

The fsync floor is what one durable commit costs on this disk right now: a one-row insert
committed with WAL + ``synchronous=FULL`` on SQLite, and one ordinary synchronous commit on
PostgreSQL. A durable call writes an attempt record and a commit, so its floor is two of them;
every figure is reported against the floor measured in the same run, because the absolute
numbers move with the machine's load.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import statistics
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
PG_ENV = "FROSTLINE_TEST_POSTGRES"


def pg_base_url(cli_value: str | None) -> str:
    """The PostgreSQL URL to measure: the flag, else $FROSTLINE_TEST_POSTGRES, else localhost."""
    return cli_value or os.environ.get(PG_ENV) or DEFAULT_PG


def pg_reachable(url: str) -> str | None:
    """None when PostgreSQL answers at `url`, else the reason it does not."""
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # any failure means: skip PostgreSQL, say why
        return f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    return None


@contextlib.contextmanager
def pg_scratch(base: str) -> Iterator[str]:
    """A URL whose search_path is a fresh schema, dropped on exit."""
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


def sqlite_floor(folder: Path, commits: int) -> list[float]:
    """Milliseconds of each of `commits` one-row commits (WAL, synchronous=FULL)."""
    conn = sqlite3.connect(folder / "floor.db", isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        samples = []
        for i in range(commits):
            t0 = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?)", (i,))
            conn.execute("COMMIT")
            samples.append((time.perf_counter() - t0) * 1000)
    finally:
        conn.close()
    return samples


def pg_floor(url: str, commits: int) -> list[float]:
    """Milliseconds of each of `commits` one-row commits on an ordinary (logged) table."""
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (x INTEGER)")
        conn.commit()
        samples = []
        for i in range(commits):
            t0 = time.perf_counter()
            conn.execute("INSERT INTO bench_floor VALUES (%s)", (i,))
            conn.commit()
            samples.append((time.perf_counter() - t0) * 1000)
    return samples


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank method; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Row:
    """One line of the overhead table.

    `per_call_ms` holds one amortized figure per repetition (wall time / calls); the table
    shows their median. `latencies_ms` holds individual call latencies (pooled over
    repetitions); the table shows their p95.
    """

    system: str
    store: str
    mode: str
    per_call_ms: list[float] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    note: str = ""
    commits_per_call: list[float] = field(default_factory=list)  # durable transactions / call

    @property
    def median(self) -> float:
        return statistics.median(self.per_call_ms) if self.per_call_ms else math.nan

    @property
    def p95(self) -> float:
        return percentile(self.latencies_ms or self.per_call_ms, 0.95)

    def to_dict(self) -> dict[str, object]:
        return {"system": self.system, "store": self.store, "mode": self.mode,
                "median_ms": self.median, "p95_ms": self.p95, "reps": len(self.per_call_ms),
                "note": self.note, "commits_per_call": (statistics.median(self.commits_per_call)
                                                        if self.commits_per_call else None)}


def ratio(a: float, b: float) -> float:
    if not (b > 0) or math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b


def fmt(value: float, spec: str) -> str:
    return "–" if math.isnan(value) else format(value, spec)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, labels: int = 3) -> str:
    """A plain, aligned text table: the first `labels` columns left-aligned, numbers right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < labels else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
