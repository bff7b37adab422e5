"""Run names are unique per principal: the store's namespace, on both backends."""

from __future__ import annotations

import pytest

from frostline.contract.records import LOCAL_PRINCIPAL, run_key
from frostline.errors import DefinitionError, FrostlineError


def test_two_principals_may_use_the_same_name(store) -> None:
    alice = store.create_run("r1", {}, owner="alice")
    bob = store.create_run("r1", {"budget": {"calls": 3}}, owner="bob")
    assert alice.run_id != bob.run_id and alice.name == bob.name == "r1"
    assert store.find_run("alice", "r1") == alice and store.find_run("bob", "r1") == bob
    assert [r.run_id for r in store.list_runs(owner="bob")] == [bob.run_id]
    with pytest.raises(FrostlineError, match="already exists"):
        store.create_run("r1", {}, owner="alice")


def test_the_local_principal_keeps_names_as_keys(store) -> None:
    run = store.create_run("cli-run", {})
    assert (run.run_id, run.name, run.owner) == ("cli-run", "cli-run", LOCAL_PRINCIPAL)
    assert store.get_run("cli-run") == run == store.find_run(LOCAL_PRINCIPAL, "cli-run")
    # a local name cannot impersonate a principal's key
    with pytest.raises(DefinitionError, match="may not start with '@'"):
        store.create_run(run_key("alice", "r1"), {})


@pytest.mark.parametrize("owner", ["", "a/b", "al ice", "x" * 201, "tab\there"])
def test_malformed_principals_are_refused(store, owner) -> None:
    with pytest.raises(DefinitionError, match="principal"):
        store.create_run("r1", {}, owner=owner)
    assert store.list_runs() == []
