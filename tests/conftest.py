"""Shared fixtures: the run store on both backends.

`store` runs a test on SQLite (a fresh file) and on PostgreSQL (a fresh schema, dropped after the
test) when FROSTLINE_TEST_POSTGRES names a server, e.g.
``FROSTLINE_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5432/test``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from frostline.store import Store, open_store

PG_ENV = "FROSTLINE_TEST_POSTGRES"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL store URL whose search_path is a fresh schema (dropped at teardown)."""
    base = os.environ.get(PG_ENV, "").strip()
    if not base:
        pytest.skip(f"set {PG_ENV}=postgresql://… to run the PostgreSQL half")
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in base else "?"
    yield f"{base}{sep}options=-csearch_path%3D{schema}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/frostline.db"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str:
    """A store URL on each backend (the postgres half skips without FROSTLINE_TEST_POSTGRES)."""
    name = "sqlite_url" if request.param == "sqlite" else "pg_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as s:
        yield s


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[Store]:
    with open_store(sqlite_url) as s:
        yield s
