"""Worker processes over a real PostgreSQL store (a fresh schema and its jobs schema, dropped
after the test). Every test here skips without FROSTLINE_TEST_POSTGRES."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from frostline.store import Store, open_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pg_store_url(pg_url: str) -> Iterator[str]:
    yield pg_url
    import psycopg

    base, _, _ = pg_url.partition("?")
    schema = pg_url.rsplit("%3D", 1)[1]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_jobs" CASCADE')


@pytest.fixture
def pg_store(pg_store_url: str) -> Iterator[Store]:
    with open_store(pg_store_url) as store:
        yield store


@pytest.fixture
def own_db_url() -> Iterator[str]:
    """A store URL in a database of its own (dropped at teardown), for tests that end every
    backend of their database (`pg_terminate_backend`): other tests' connections, in other
    databases, are not touched."""
    import psycopg

    from tests.conftest import PG_ENV

    base = os.environ.get(PG_ENV, "").strip()
    if not base:
        pytest.skip(f"set {PG_ENV}=postgresql://… to run the PostgreSQL half")
    name = f"fl_liveness_{secrets.token_hex(4)}"
    parts = urlsplit(base)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "fl"')
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3Dfl"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                         "datname = %s", (name,))
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def own_store(own_db_url: str) -> Iterator[Store]:
    with open_store(own_db_url) as store:
        yield store


@pytest.fixture
def own_fleet(own_db_url: str, tmp_path: Path) -> Iterator[Fleet]:
    running = Fleet(own_db_url, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


def eventually(check: Callable[[], object], *, timeout: float = 60.0, what: str = "") -> object:
    """Poll `check` until it returns something truthy (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.02)


@dataclass
class Fleet:
    """Worker processes started by a test, stopped (and reaped) at its end."""

    url: str
    tmp: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, *extra: str, latency: float = 0.0) -> subprocess.Popen[bytes]:
        out = open(self.tmp / f"{name}.out", "ab")  # noqa: SIM115 — the process owns it
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.worker.host_process", self.url, "--name", name,
             "--latency", str(latency), "--log", str(self.tmp / f"{name}.calls.jsonl"),
             "--journal", str(self.tmp / f"{name}.locks.jsonl"), *extra],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.procs[name] = proc
        eventually(lambda: "frostline worker" in self.output(name), timeout=60,
                   what=f"worker {name}'s health line")
        return proc

    def output(self, name: str) -> str:
        path = self.tmp / f"{name}.out"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self, name: str) -> float:
        """SIGKILL the worker; returns when (wall clock) it died."""
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return time.time()

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with _suppress():
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is ProcessLookupError


@pytest.fixture
def fleet(pg_store_url: str, tmp_path: Path) -> Iterator[Fleet]:
    running = Fleet(pg_store_url, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()
