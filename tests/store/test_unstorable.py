"""Issue 26: a value no store can hold is refused before the database sees it, the same way on
SQLite and PostgreSQL, and nothing of the refused write is kept; a database's refusal for good
(a data error) is told apart from an outage that may pass."""

from __future__ import annotations

from typing import Any

import pytest

from frostline.contract.waits import WaitRecord, approval_value
from frostline.errors import DefinitionError, StoreRefused, StoreUnavailable, ValueNotStorable
from frostline.store import Store

from .helpers import Raw


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


POISON = {
    "nul": {"s": "a\x00b"},
    "nul_key": {"a\x00": 1},
    "surrogate": ["\ud800"],
    "too_deep": _deep(600),
}


@pytest.mark.parametrize("kind", sorted(POISON))
def test_issue26_every_json_write_refuses_what_no_store_holds(store: Store, kind: str) -> None:
    poison = POISON[kind]
    with pytest.raises(ValueNotStorable):
        store.create_run("env", {"note": poison})
    assert store.get_run("env") is None
    store.create_run("r", {})
    with pytest.raises(ValueNotStorable):
        store.start_attempt("r", source="s", annotated="s", report={}, args=poison)
    assert store.list_attempts("r") == []
    attempt = store.start_attempt("r", source="s", annotated="s", report={}, args={})
    with pytest.raises(ValueNotStorable):
        store.finish_attempt("r", attempt.number, status="succeeded", result=poison)
    # Nothing half-stored: the attempt is as it was, and can still be finished.
    assert store.list_attempts("r")[0].status == "running"
    store.finish_attempt("r", attempt.number, status="failed", result=None)
    with pytest.raises(ValueNotStorable):
        store.send_signal("r", "go", poison)
    with pytest.raises(ValueNotStorable):
        store.append_event("r", "note", {"data": poison})
    wait = WaitRecord("r", "orchestrate/#0@:0", "event", "event.wait", "go", {"event": "go"},
                      "d" * 64, 0.0, None, 1)
    _, answer = store.settle_wait(wait, 0.0)
    assert answer is None  # the refused signal was not kept for the wait
    assert [e.kind for e in store.list_events("r")] == [
        e.kind for e in store.list_events("r") if e.kind != "note"]


def test_issue26_an_approval_reason_with_a_nul_is_refused(store: Store) -> None:
    store.create_run("r", {})
    wait = WaitRecord("r", "w", "approval", "human.approve", None, {"ask": "x"}, "d" * 64,
                      0.0, None, 1)
    store.settle_wait(wait, 0.0)
    with pytest.raises(ValueNotStorable):
        store.answer_wait("r", "w", approval_value(True, "alice", "ok\x00", 0.0), by="alice")
    [(_, answer)] = store.list_waits("r")
    assert answer is None
    store.answer_wait("r", "w", approval_value(True, "alice", "ok", 0.0), by="alice")


@pytest.mark.parametrize("text", ["a\x00b", "a\udc80b"])
def test_issue26_names_and_texts_are_refused_alike_on_both_stores(store: Store,
                                                                  text: str) -> None:
    with pytest.raises(DefinitionError):  # a run id is printable text
        store.create_run(text, {})
    with pytest.raises(ValueNotStorable):  # a lookup too: never a driver error (PG: a 503)
        store.find_run("alice", text)
    store.create_run("r", {})
    with pytest.raises(ValueNotStorable):
        store.start_attempt("r", source=text, annotated=text, report={})
    assert store.list_attempts("r") == []


def _refusing_trigger(raw: Raw, backend: str, sqlstate: str) -> None:
    if backend == "sqlite":  # RAISE(ABORT) is SQLite's constraint failure
        raw.execute("CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.kind = 'bad' "
                    "BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END")
        return
    raw.execute("CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN IF NEW.kind = 'bad' THEN "
                f"RAISE EXCEPTION 'refused by a trigger' USING ERRCODE = '{sqlstate}'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql")
    raw.execute("CREATE TRIGGER poison BEFORE INSERT ON events FOR EACH ROW "
                "EXECUTE FUNCTION poison()")


def test_issue26_a_data_error_is_a_refusal_never_an_outage(store: Store,
                                                           store_url: str) -> None:
    store.create_run("r", {})
    raw = Raw(store_url)
    try:
        _refusing_trigger(raw, raw.backend, "22023")  # invalid_parameter_value
    finally:
        raw.close()
    with pytest.raises(StoreRefused) as info:
        store.append_event("r", "bad", {})
    assert info.value.code == "store_refused"
    if store.backend_name == "postgres":  # type: ignore[attr-defined]
        assert info.value.fields["sqlstate"] == "22023"
    assert store.append_event("r", "good", {}) > 0  # the store itself is fine


@pytest.mark.parametrize("sqlstate", ["40001", "40P01", "57P01", "08006"])
def test_issue26_transient_failures_stay_store_unavailable(pg_url: str, sqlstate: str) -> None:
    from frostline.store import open_store

    with open_store(pg_url) as store:
        store.create_run("r", {})
        raw = Raw(pg_url)
        try:
            _refusing_trigger(raw, "postgres", sqlstate)
        finally:
            raw.close()
        with pytest.raises(StoreUnavailable) as info:
            store.append_event("r", "bad", {})
        assert not isinstance(info.value, StoreRefused)
        assert store.append_event("r", "good", {}) > 0
