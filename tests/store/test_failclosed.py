"""Fail closed: real driver errors and the FaultyStore wrapper surface as StoreUnavailable."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from frostline.contract.identity import digest
from frostline.errors import StoreNotFound, StoreUnavailable
from frostline.store import Store, open_store
from frostline.store.sql import SqlStore
from frostline.testing import FaultyStore

from .helpers import CAP, Raw, call_and_commit, ident, slot_for

READS = [
    ("get_run", lambda s: s.get_run("r1")),
    ("list_runs", lambda s: s.list_runs()),
    ("list_attempts", lambda s: s.list_attempts("r1")),
    ("get_attempt", lambda s: s.get_attempt("r1", 1)),
    ("list_slots", lambda s: s.list_slots("r1")),
    ("get_slot", lambda s: s.get_slot("r1", ident())),
    ("list_calls", lambda s: s.list_calls("r1")),
    ("unresolved_calls", lambda s: s.unresolved_calls("r1")),
    ("get_artifact", lambda s: s.get_artifact("sha256:" + "0" * 64)),
    ("list_certificates", lambda s: s.list_certificates("r1")),
    ("list_events", lambda s: s.list_events("r1")),
    ("principal_for_token", lambda s: s.principal_for_token("t")),
    ("list_tokens", lambda s: s.list_tokens()),
]
WRITES = [
    ("create_run", lambda s: s.create_run("r2", {})),
    ("set_run_status", lambda s: s.set_run_status("r1", "x")),
    ("start_attempt", lambda s: s.start_attempt("r1", source="", annotated="", report={})),
    ("finish_attempt", lambda s: s.finish_attempt("r1", 1, status="failed")),
    ("begin_call", lambda s: s.begin_call("r1", 1, ident(), CAP, digest({}))),
    ("commit_call", lambda s: s.commit_call(1, slot_for("r1", ident(), {}, 1))),
    ("fail_call", lambda s: s.fail_call(1, {})),
    ("reconcile_call", lambda s: s.reconcile_call("r1", ident(), abandon=True)),
    ("put_artifact", lambda s: s.put_artifact(b"x", "text/plain")),
    ("put_certificate", lambda s: s.put_certificate("r1", 1, {})),
    ("decide", lambda s: s.decide("r1", "k", 1)),
    ("append_event", lambda s: s.append_event("r1", "k", {})),
    ("create_token", lambda s: s.create_token("alice")),
    ("revoke_tokens", lambda s: s.revoke_tokens("alice")),
    ("run_lock", lambda s: s.run_lock("r1").__enter__()),
]


@pytest.mark.parametrize(("operation", "call"), READS + WRITES, ids=[n for n, _ in READS + WRITES])
def test_faulty_store_refuses_everything(sqlite_store: Store, operation: str, call) -> None:  # type: ignore[no-untyped-def]
    faulty = FaultyStore(sqlite_store)
    with pytest.raises(StoreUnavailable) as info:
        call(faulty)
    assert info.value.fields == {"backend": "faulty", "operation": operation}
    assert isinstance(info.value.__cause__, OSError)
    assert faulty.faults == 1


def test_faulty_store_reads_or_writes_only(store: Store) -> None:
    store.create_run("r1", {})
    call_and_commit(store, "r1", ident(), {}, "paid")
    reads_fail = FaultyStore(store, fail_reads=True, fail_writes=False)
    with pytest.raises(StoreUnavailable):
        reads_fail.list_slots("r1")
    reads_fail.append_event("r1", "still writes", {})
    writes_fail = FaultyStore(store, fail_reads=False, fail_writes=True)
    assert [s.result for s in writes_fail.list_slots("r1")] == ["paid"]
    with pytest.raises(StoreUnavailable):
        writes_fail.begin_call("r1", 1, ident(1), CAP, digest({}))
    assert store.unresolved_calls("r1") == []
    # Faults can be switched on mid-run.
    writes_fail.fail_writes = False
    cid = writes_fail.begin_call("r1", 1, ident(1), CAP, digest({}))
    assert [c.call_id for c in store.unresolved_calls("r1")] == [cid]
    assert writes_fail.url == store.url


def test_a_corrupted_sqlite_file_fails_closed(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    with open_store(str(db)) as store:
        store.create_run("r1", {})
    with db.open("r+b") as fh:
        fh.write(b"this is not a database at all" * 4)
    with pytest.raises(StoreUnavailable) as info:
        open_store(str(db))
    assert info.value.fields["backend"] == "sqlite"
    assert info.value.__cause__ is not None


def test_a_sqlite_path_that_cannot_be_created_fails_closed(tmp_path: Path) -> None:
    # The store's folder exists (issue 27: a missing folder is refused before anything is
    # tried, see test_issue27_*), but the database file cannot be made: a folder holds its name.
    (tmp_path / "x.db").mkdir()
    with pytest.raises(StoreUnavailable, match="cannot open the sqlite store"):
        open_store(str(tmp_path / "x.db"))


def test_issue27_a_store_is_not_created_in_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    for where in (tmp_path / "typo" / "dir" / "x.db", blocker / "x.db"):
        with pytest.raises(StoreNotFound, match="mkdir -p"):
            open_store(str(where))
    assert not (tmp_path / "typo").exists()
    # a reader gets its own error; a writer in an existing folder is fine
    with pytest.raises(StoreNotFound):
        open_store(str(tmp_path / "typo" / "x.db"), create=False)
    open_store(str(tmp_path / "x2.db")).close()


def test_driver_errors_during_reads_become_store_unavailable(sqlite_store: Store) -> None:
    sqlite_store.create_run("r1", {})
    raw = Raw(sqlite_store.url)
    try:
        raw.execute("ALTER TABLE slots RENAME TO slots_moved")  # the table a read needs is gone
    finally:
        raw.close()
    with pytest.raises(StoreUnavailable) as info:
        sqlite_store.list_slots("r1")
    assert info.value.fields == {"backend": "sqlite", "operation": "list_slots"}
    assert "no such table" in str(info.value.__cause__)
    with pytest.raises(StoreUnavailable) as info:
        call = sqlite_store.begin_call("r1", 1, ident(), CAP, digest({}))
        sqlite_store.commit_call(call, slot_for("r1", ident(), {}, 1))
    assert info.value.fields["operation"] == "commit_call"


def test_an_unreachable_postgres_server_fails_closed() -> None:
    with socket.socket() as sock:  # a port with nothing listening on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreUnavailable, match="cannot open the postgres store") as info:
        open_store(f"postgresql://postgres:hunter2@127.0.0.1:{port}/nowhere?connect_timeout=2")
    assert "hunter2" not in info.value.message
    assert info.value.fields == {"backend": "postgres", "operation": "open"}


def test_a_dropped_read_connection_is_replaced_once(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, SqlStore)
        store.create_run("r1", {})
        pid = store._readers.get().info.backend_pid
        raw = Raw(pg_url)
        try:
            raw.execute(f"SELECT pg_terminate_backend({pid})")
        finally:
            raw.close()
        assert store.get_run("r1") is not None  # reconnected transparently


def test_postgres_outage_fails_reads_closed(pg_url: str) -> None:
    with open_store(pg_url) as store:
        store.create_run("r1", {})
        raw = Raw(pg_url)
        try:
            # The schema vanishes under the store: every read must raise, not return empty.
            schema_name = store.schema_name  # type: ignore[attr-defined]
            raw.execute(f'ALTER SCHEMA "{schema_name}" RENAME TO "{schema_name}_x"')
            try:
                with pytest.raises(StoreUnavailable) as info:
                    store.list_slots("r1")
                assert info.value.fields == {"backend": "postgres", "operation": "list_slots"}
                with pytest.raises(StoreUnavailable):
                    store.begin_call("r1", 1, ident(), CAP, digest({}))
            finally:
                raw.execute(f'ALTER SCHEMA "{schema_name}_x" RENAME TO "{schema_name}"')
        finally:
            raw.close()
        assert store.list_slots("r1") == []


@pytest.mark.parametrize("text", ['{"broken": ', "1, 2"])
def test_a_json_column_edited_outside_frostline_fails_closed(sqlite_store: Store,
                                                             text: str) -> None:
    sqlite_store.create_run("r1", {})
    call_and_commit(sqlite_store, "r1", ident(0), {}, {"ok": True})
    raw = Raw(sqlite_store.url)
    try:
        raw.execute("INSERT INTO slots (run_id, site, path, occurrence, capability, digest, "
                    "result, usage, attempt, committed_at) VALUES ('r1', 'orchestrate/#0', '', "
                    f"1, 'image.generate', 'd', '{text}', '{{}}', 1, 0)")
    finally:
        raw.close()
    with pytest.raises(StoreUnavailable, match="does not parse") as info:
        sqlite_store.list_slots("r1")
    assert info.value.fields["operation"] == "decode"
    with pytest.raises(StoreUnavailable, match="does not parse"):
        sqlite_store.get_slot("r1", ident(1))
    assert sqlite_store.get_slot("r1", ident(0)).result == {"ok": True}  # type: ignore[union-attr]
