"""The schema in the database: append-only triggers and migrations, on both backends."""

from __future__ import annotations

import re

import pytest

from frostline.contract.identity import digest
from frostline.errors import FrostlineError, StoreUnavailable
from frostline.store import open_store, schema
from frostline.store.postgres import PostgresStore
from frostline.store.sqlite import SQLiteStore
from frostline.store.url import parse

from .helpers import CAP, Raw, call_and_commit, commit_as_before_digests, ident, slot_for


def _errors(raw: Raw) -> tuple[type[BaseException], ...]:
    if raw.backend == "sqlite":
        import sqlite3

        return (sqlite3.IntegrityError,)
    import psycopg

    return (psycopg.Error,)


@pytest.mark.parametrize("statement", [
    "UPDATE slots SET result = '\"forged\"'",
    "DELETE FROM slots",
    "UPDATE events SET kind = 'forged'",
    "DELETE FROM events",
])
def test_database_refuses_to_change_slots_and_events(store_url: str, statement: str) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {})
        call_and_commit(store, "r1", ident(), {"p": 1}, "paid")
        store.append_event("r1", "k", {})
        raw = Raw(store_url)
        try:
            with pytest.raises(_errors(raw), match="append-only"):
                raw.execute(statement)
        finally:
            raw.close()
        assert store.get_slot("r1", ident()).result == "paid"  # type: ignore[union-attr]
        assert [e.kind for e in store.list_events("r1")] == ["k"]


def test_dropping_the_trigger_is_what_permits_tampering(store_url: str) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {})
        call_and_commit(store, "r1", ident(), {"p": 1}, "paid")
        raw = Raw(store_url)
        try:
            raw.drop_trigger("slots_immutable_update", "slots")
            raw.execute("UPDATE slots SET result = '\"forged\"'")
        finally:
            raw.close()
        assert store.get_slot("r1", ident()).result == "forged"  # type: ignore[union-attr]


def _open_at(url: str, version: int) -> SQLiteStore | PostgresStore:
    loc = parse(url)
    if loc.backend == "sqlite":
        return SQLiteStore(loc.target, _migrate_to=version)
    return PostgresStore(loc.target, _migrate_to=version)


def test_reopening_keeps_the_version(store_url: str) -> None:
    with open_store(store_url) as store:
        assert store.schema_version() == schema.LATEST  # type: ignore[attr-defined]
        store.create_run("r1", {})
    with open_store(store_url) as store:
        assert store.schema_version() == schema.LATEST  # type: ignore[attr-defined]
        assert store.get_run("r1") is not None
    raw = Raw(store_url)
    try:
        rows = raw.execute("SELECT version, description FROM schema_version ORDER BY version")
    finally:
        raw.close()
    assert [tuple(r) for r in rows] == [(m.version, m.description) for m in schema.MIGRATIONS]


def test_an_older_store_is_migrated(store_url: str) -> None:
    with _open_at(store_url, 1) as old:
        assert old.schema_version() == 1
        _insert_old_run(store_url, "r1", None)  # as a frostline of schema 1 wrote it
    commit_as_before_digests(store_url, "r1", ident(), {"p": 1}, "paid")
    raw = Raw(store_url)
    try:
        raw.execute("UPDATE slots SET usage = '{\"usd\": 0.5}'")  # version 1 has no triggers
    finally:
        raw.close()
    with open_store(store_url) as store:
        assert store.schema_version() == schema.LATEST  # type: ignore[attr-defined]
        slot = store.get_slot("r1", ident())
        assert slot is not None and slot.result == "paid" and slot.usage == {"usd": 0.5}
        raw = Raw(store_url)
        try:
            with pytest.raises(_errors(raw), match="append-only"):
                raw.execute("DELETE FROM slots")
        finally:
            raw.close()
        call_and_commit(store, "r1", ident(1), {"p": 2}, "new")
        assert len(store.list_slots("r1")) == 2


def _insert_old_run(store_url: str, run_id: str, owner: str | None) -> None:
    raw = Raw(store_url)
    try:
        raw.execute("INSERT INTO runs (run_id, envelope, status, owner, kind, created_at, "
                    f"updated_at) VALUES ('{run_id}', '{{}}', 'created', "
                    f"{'NULL' if owner is None else repr(owner)}, 'script', 0, 0)")
    finally:
        raw.close()


def test_runs_of_an_older_store_get_names_and_owners(store_url: str) -> None:
    """Migration 6: names per principal. A run created before keeps its id as its name; a run
    without an owner (the command line's) belongs to the local principal."""
    with _open_at(store_url, 5):
        pass
    _insert_old_run(store_url, "cli-run", None)
    _insert_old_run(store_url, "r1", "alice")
    with open_store(store_url) as store:
        cli = store.get_run("cli-run")
        assert cli is not None and (cli.owner, cli.name) == ("local", "cli-run")
        assert store.find_run("local", "cli-run") == cli
        legacy = store.find_run("alice", "r1")
        assert legacy is not None and legacy.run_id == "r1"  # the old key still works
        assert store.find_run("bob", "r1") is None
        bobs = store.create_run("r1", {}, owner="bob")  # bob's r1 is not alice's
        assert (bobs.run_id, bobs.name, bobs.owner) == ("@bob/r1", "r1", "bob")
        assert store.find_run("bob", "r1") == bobs
        with pytest.raises(FrostlineError, match="already exists"):
            store.create_run("r1", {}, owner="bob")


def test_a_newer_store_is_refused(store_url: str) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {})
    raw = Raw(store_url)
    try:
        raw.execute("INSERT INTO schema_version (version, description, applied_at) "
                    f"VALUES ({schema.LATEST + 1}, 'from the future', 0)")
    finally:
        raw.close()
    with pytest.raises(StoreUnavailable, match="newer than this frostline supports") as info:
        open_store(store_url)
    assert info.value.fields["version"] == schema.LATEST + 1
    assert "upgrade frostline" in info.value.message


def test_migrations_are_ordered_and_render_for_both_dialects() -> None:
    versions = [m.version for m in schema.MIGRATIONS]
    assert versions == list(range(1, len(versions) + 1))
    for m in schema.MIGRATIONS:
        for dialect in ("sqlite", "postgres"):
            for statement in m.statements(dialect):  # type: ignore[arg-type]
                assert not re.search(r"\{(json|blob|real|bigint|serial)\}", statement)
    assert [m.version for m in schema.pending(1)] == versions[1:]
    assert schema.pending(schema.LATEST) == []
    assert schema.pending(set(versions)) == []
    # a store that applied a later migration before an earlier one existed gets the earlier
    assert [m.version for m in schema.pending(set(versions) - {versions[3]})] == [versions[3]]


def test_slots_committed_before_digests_were_recorded_still_certify(store_url: str) -> None:
    """Migration 11 records each slot's digests at commit. A slot committed before has none:
    persist and the fast verify compute its digests from its result, and a slot committed
    after has them recorded."""
    from frostline.runtime import certificates

    with _open_at(store_url, 9):
        _insert_old_run(store_url, "r1", None)
    commit_as_before_digests(store_url, "r1", ident(), {"p": 1}, {"shots": ["a"]})
    with open_store(store_url) as store:
        (old,) = store.list_slots("r1")
        assert old.entry_digest is None and old.result_digest is None
        new = call_and_commit(store, "r1", ident(1), {"p": 2}, {"ok": True})
        assert new.entry_digest is not None and new.result_digest is not None
        certificates.persist(store, "r1", 1)
        assert certificates.verify(store, "r1")["consistent"]
        assert certificates.verify(store, "r1", deep=True)["consistent"]


def test_a_store_upgraded_to_the_lighter_commit_keeps_its_runs(store_url: str) -> None:
    """Migration 12 drops the calls status index (and, on PostgreSQL, the slots foreign key):
    a store written at migration 11 is upgraded in place, its runs, slots, pending calls and
    events read as before, and its pending call still commits."""
    with _open_at(store_url, 11) as old:
        old.create_run("r1", {})
        call_and_commit(old, "r1", ident(), {"p": 1}, "paid")
        pending = old.begin_call("r1", 1, ident(1), CAP, digest({"p": 2}))
        old.append_event("r1", "k", {"n": 1})
    with open_store(store_url) as store:
        assert store.schema_version() == schema.LATEST  # type: ignore[attr-defined]
        assert [s.result for s in store.list_slots("r1")] == ["paid"]
        assert [c.call_id for c in store.unresolved_calls("r1")] == [pending]
        assert [e.kind for e in store.list_events("r1")] == ["k"]
        store.commit_call(pending, slot_for("r1", ident(1), {"p": 2}, "later"))
        assert store.unresolved_calls("r1") == []
        assert [s.result for s in store.list_slots("r1")] == ["paid", "later"]
    raw = Raw(store_url)
    try:
        if raw.backend == "sqlite":
            names = raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        else:
            names = raw.execute("SELECT indexname FROM pg_indexes WHERE schemaname = "
                                "current_schema() UNION ALL SELECT conname FROM pg_constraint "
                                "WHERE connamespace = current_schema()::regnamespace")
    finally:
        raw.close()
    found = {r[0] for r in names}
    assert "calls_identity" in found and "calls_status" not in found
    assert "slots_run_id_fkey" not in found
