"""The audit event folded into a commit, and batched events, on both backends."""

from __future__ import annotations

from typing import Any

import pytest

from frostline.contract.identity import digest
from frostline.errors import DefinitionError, FrostlineError, StoreUnavailable
from frostline.store import Store
from frostline.testing import FaultyStore

from .helpers import CAP, Raw, ident, slot_for


def _kinds(store: Store, run_id: str) -> list[str]:
    return [e.kind for e in store.list_events(run_id)]


def test_commit_with_event_writes_both(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    stored = store.commit_call(call, slot_for("r1", ident(), {"p": 1}, {"v": 1}),
                               event=("executed", {"identity": str(ident()), "n": 1}))
    assert stored.result == {"v": 1}
    assert store.get_slot("r1", ident()) == stored
    events = store.list_events("r1")
    assert [(e.kind, e.data) for e in events] == [
        ("executed", {"identity": str(ident()), "n": 1})]
    # Without an event, commit_call writes none (as before).
    call2 = store.begin_call("r1", 1, ident(1), CAP, digest({"p": 2}))
    store.commit_call(call2, slot_for("r1", ident(1), {"p": 2}, 2))
    assert _kinds(store, "r1") == ["executed"]


def test_a_refused_commit_writes_no_event(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    store.fail_call(call, {"code": "boom"})
    with pytest.raises(FrostlineError, match="failed"):
        store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1), event=("executed", {}))
    # A slot that is not the call's: refused inside the transaction, the event with it.
    other = store.begin_call("r1", 1, ident(1), CAP, digest({"p": 1}))
    with pytest.raises(FrostlineError, match="is not the call's"):
        store.commit_call(other, slot_for("r1", ident(2), {"p": 1}, 1), event=("executed", {}))
    assert store.list_events("r1") == []
    assert store.list_slots("r1") == []


def test_an_event_that_cannot_be_stored_fails_the_commit_before_anything(store: Store) -> None:
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    with pytest.raises(FrostlineError, match="not JSON"):
        store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1),
                          event=("executed", {"bad": float("nan")}))
    with pytest.raises(DefinitionError, match="event kind"):
        store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1), event=("", {}))
    assert store.list_slots("r1") == [] and store.list_events("r1") == []
    # The call is still pending and commits normally afterwards.
    store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1), event=("executed", {}))
    assert len(store.list_slots("r1")) == 1 and _kinds(store, "r1") == ["executed"]


def _refuse_event_inserts(raw: Raw) -> None:
    if raw.backend == "sqlite":
        raw.execute("CREATE TRIGGER no_events BEFORE INSERT ON events "
                    "BEGIN SELECT RAISE(ABORT, 'events refused'); END")
    else:
        raw.execute("CREATE FUNCTION no_events() RETURNS trigger LANGUAGE plpgsql AS "
                    "$$ BEGIN RAISE EXCEPTION 'events refused'; END $$")
        raw.execute("CREATE TRIGGER no_events BEFORE INSERT ON events "
                    "FOR EACH ROW EXECUTE FUNCTION no_events()")


def test_a_failing_event_insert_undoes_the_commit(store: Store, store_url: str) -> None:
    """The slot and the audit row are one transaction: if the row fails, so does the slot."""
    store.create_run("r1", {})
    call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    raw = Raw(store_url)
    try:
        _refuse_event_inserts(raw)
        with pytest.raises(StoreUnavailable):
            store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1),
                              event=("executed", {"n": 1}))
        assert store.list_slots("r1") == []
        assert store.unresolved_calls("r1")[0].call_id == call  # still pending
        with pytest.raises(StoreUnavailable):
            store.append_events("r1", [("replay", {"n": 1}), ("replay", {"n": 2})])
        raw.execute("DROP TRIGGER no_events" + ("" if raw.backend == "sqlite" else " ON events"))
    finally:
        raw.close()
    store.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1), event=("executed", {"n": 1}))
    assert len(store.list_slots("r1")) == 1 and _kinds(store, "r1") == ["executed"]


def test_append_events_in_order(store: Store) -> None:
    first = store.append_event("r1", "start", {})
    batch: list[tuple[str, dict[str, Any]]] = [("replay", {"i": i}) for i in range(300)]
    seqs = store.append_events("r1", batch)
    assert len(seqs) == 300 and seqs == sorted(seqs) and seqs[0] > first
    events = store.list_events("r1")
    assert [e.kind for e in events] == ["start"] + ["replay"] * 300
    assert [e.data for e in events[1:]] == [{"i": i} for i in range(300)]
    assert [e.seq for e in events[1:]] == seqs
    assert store.append_events("r1", []) == []


def test_append_events_is_all_or_nothing_on_bad_input(store: Store) -> None:
    with pytest.raises(FrostlineError, match="not JSON"):
        store.append_events("r1", [("replay", {"i": 1}), ("replay", {"x": float("nan")})])
    with pytest.raises(DefinitionError, match="pairs"):
        store.append_events("r1", [("replay",)])  # type: ignore[list-item]
    with pytest.raises(DefinitionError, match="event kind"):
        store.append_events("r1", [(3, {})])  # type: ignore[list-item]
    assert store.list_events("r1") == []


def test_faulty_store_passes_the_event_and_batch_through(sqlite_store: Store) -> None:
    faulty = FaultyStore(sqlite_store, fail_reads=False, fail_writes=False)
    faulty.create_run("r1", {})
    call = faulty.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
    faulty.commit_call(call, slot_for("r1", ident(), {"p": 1}, 1), event=("executed", {"a": 1}))
    faulty.append_events("r1", [("replay", {"b": 2})])
    assert [(e.kind, e.data) for e in faulty.list_events("r1")] == [
        ("executed", {"a": 1}), ("replay", {"b": 2})]
    faulty.fail_writes = True
    with pytest.raises(StoreUnavailable):
        faulty.append_events("r1", [("replay", {"c": 3})])
    assert len(sqlite_store.list_events("r1")) == 2


def test_postgres_commits_the_usual_call_in_one_statement(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from frostline.store import open_store
    from frostline.store.postgres import PostgresStore

    taken: list[bool] = []
    one = PostgresStore._commit_in_one

    def counted(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        row = one(self, *args, **kwargs)
        taken.append(row is not None)
        return row

    monkeypatch.setattr(PostgresStore, "_commit_in_one", counted)
    with open_store(pg_url) as store:
        store.create_run("r1", {})
        call = store.begin_call("r1", 1, ident(), CAP, digest({"p": 1}))
        stored = store.commit_call(call, slot_for("r1", ident(), {"p": 1}, {"b": 1, "a": 2}),
                                   event=("executed", {"n": 1}))
        assert taken == [True]  # the usual commit: one statement
        assert list(stored.result) == ["b", "a"] and store.get_slot("r1", ident()) == stored
        assert _kinds(store, "r1") == ["executed"]
        # Not the usual case (the call failed): the general path refuses it, nothing written.
        failed = store.begin_call("r1", 1, ident(1), CAP, digest({"p": 2}))
        store.fail_call(failed, {"code": "boom"})
        with pytest.raises(FrostlineError, match="failed"):
            store.commit_call(failed, slot_for("r1", ident(1), {"p": 2}, 2),
                              event=("executed", {"n": 2}))
        assert taken == [True, False]
        assert _kinds(store, "r1") == ["executed"] and len(store.list_slots("r1")) == 1
