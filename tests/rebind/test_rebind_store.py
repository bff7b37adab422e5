"""Issue 30: the rebindings table on both stores (migration 14)."""

from __future__ import annotations

import pytest

from frostline.errors import DefinitionError, FrostlineError
from frostline.store import open_store
from frostline.store.schema import LATEST, MIGRATIONS


def test_issue30_rebindings_are_kept_per_attempt_and_survive_a_reopen(store_url):
    with open_store(store_url) as store:
        run = store.create_run("r", {})
        store.put_rebinding(run.run_id, 2, [
            {"identity": "g/#0@:1", "bound_to": "orchestrate/#1@:0"},
            {"identity": "g/#0@:0", "bound_to": "orchestrate/#0@:0"}])
        store.put_rebinding(run.run_id, 3, [{"identity": "g/#0@:0",
                                             "bound_to": "orchestrate/#0@:0"}])
    with open_store(store_url) as store:  # a restart finds it
        assert store.list_rebindings("r", 2) == [
            {"attempt": 2, "identity": "g/#0@:0", "bound_to": "orchestrate/#0@:0"},
            {"attempt": 2, "identity": "g/#0@:1", "bound_to": "orchestrate/#1@:0"}]
        assert [r["attempt"] for r in store.list_rebindings("r")] == [2, 2, 3]
        assert store.list_rebindings("r", 9) == []


def test_issue30_one_identity_is_bound_once_per_attempt(store_url):
    with open_store(store_url) as store:
        store.create_run("r", {})
        with pytest.raises(DefinitionError, match="once"):
            store.put_rebinding("r", 2, [{"identity": "g/#0@:0", "bound_to": "a/#0@:0"},
                                         {"identity": "g/#0@:0", "bound_to": "a/#1@:0"}])
        store.put_rebinding("r", 2, [{"identity": "g/#0@:0", "bound_to": "a/#0@:0"}])
        with pytest.raises(FrostlineError):  # the primary key refuses a second binding
            store.put_rebinding("r", 2, [{"identity": "g/#0@:0", "bound_to": "a/#1@:0"}])
        assert store.list_rebindings("r", 2) == [
            {"attempt": 2, "identity": "g/#0@:0", "bound_to": "a/#0@:0"}]


def test_issue30_migration_14_creates_the_rebindings_table():
    (m,) = [m for m in MIGRATIONS if m.version == 14]
    assert "rebindings" in m.description and LATEST >= 14
    assert any("CREATE TABLE rebindings" in s for s in m.statements("sqlite"))
