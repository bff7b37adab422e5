"""A run being authored (frostline.embedded.authoring) at the store, on both backends: the row
only holds the name, is listed nowhere, becomes a run once promoted, and is removed in one
transaction only while nothing was recorded under it."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.errors import RunNotFound
from frostline.store.base import Store


def test_a_held_name_is_no_run_until_promoted(store: Store) -> None:
    held = store.create_run("fox", {"budget_usd": 1}, owner="alice", authoring=True)
    assert held.status == "authoring" and held.run_id == "@alice/fox"
    assert store.list_runs() == [] and store.list_runs(owner="alice") == []
    assert [r.name for r in store.list_authoring()] == ["fox"]
    assert store.find_run("alice", "fox") == held  # the name is taken
    with pytest.raises(Exception, match="already exists"):
        store.create_run("fox", {}, owner="alice")
    made = store.promote_authoring(held.run_id)
    assert made.status == "created" and made.envelope == {"budget_usd": 1}
    assert [r.name for r in store.list_runs()] == ["fox"] and store.list_authoring() == []
    assert not store.discard_authoring(held.run_id)  # a run is never removed
    with pytest.raises(RunNotFound):
        store.promote_authoring(held.run_id)


def test_a_clean_held_name_is_removed_and_free_again(store: Store) -> None:
    held = store.create_run("fox", {}, owner="alice", authoring=True)
    assert store.discard_authoring(held.run_id)
    assert store.get_run(held.run_id) is None and store.find_run("alice", "fox") is None
    assert not store.discard_authoring(held.run_id)
    with pytest.raises(RunNotFound):
        store.promote_authoring(held.run_id)
    again = store.create_run("fox", {}, owner="alice")
    assert again.status == "created" and again.run_id == held.run_id


_NAMES = itertools.count()
RECORDS = st.lists(st.sampled_from(["signal", "attempt"]), max_size=2)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=RECORDS)
def test_a_held_name_with_records_under_it_is_kept_failed(store: Store,
                                                           records: list[str]) -> None:
    """Removed iff nothing was recorded under it; otherwise kept, marked failed (fail
    closed: whoever addressed it sees it)."""
    name = f"r{next(_NAMES)}"  # one store for every example: a name each
    held = store.create_run(name, {}, owner="alice", authoring=True)
    for kind in records:
        if kind == "signal":
            store.send_signal(held.run_id, "go", {"n": 1})
        else:
            store.start_attempt(held.run_id, source="x", annotated="x", report={})
    removed = store.discard_authoring(held.run_id)
    assert removed is (not records)
    kept = store.get_run(held.run_id)
    if records:
        assert kept is not None and kept.status == "failed"
        assert [r.name for r in store.list_runs() if r.name == name] == [name]
    else:
        assert kept is None and store.find_run("alice", name) is None
    assert all(r.name != name for r in store.list_authoring())
