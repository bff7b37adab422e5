"""`open_store(url, create=False)`: a reader never creates a store to find out there is none."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from frostline.errors import StoreNotFound
from frostline.store import open_store


def test_a_missing_sqlite_store_is_not_created(tmp_path: Path) -> None:
    where = tmp_path / "nested" / "frostline.db"
    with pytest.raises(StoreNotFound) as info:
        open_store(f"sqlite:///{where}", create=False)
    assert str(where) in info.value.message and "--store" in info.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_file_that_is_not_a_store_is_left_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    before = other.read_bytes()
    with pytest.raises(StoreNotFound, match="not a frostline store"):
        open_store(str(other), create=False)
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_an_existing_store_opens_for_reading(store_url: str) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {})
    with open_store(store_url, create=False) as store:
        run = store.get_run("r1")
        assert run is not None and run.run_id == "r1"


def test_an_empty_postgres_schema_is_not_a_store_and_stays_empty(pg_url: str) -> None:
    import psycopg

    with pytest.raises(StoreNotFound, match="no frostline store in schema"):
        open_store(pg_url, create=False)
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT count(*) FROM information_schema.tables "
                           "WHERE table_schema = current_schema()").fetchone()
    assert row is not None and row[0] == 0
