"""Token roles and who answered (issue 26 §5), on both backends: a token carries its roles
(``runner`` by default), tokens from before roles existed are upgraded to ``runner``, an
answer's `by` is the principal that answered (an event's sender included, even when the event
was kept for a later wait), and an answer a policy refuses records nothing."""

from __future__ import annotations

import hashlib

import pytest

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.contract.waits import WaitRecord
from frostline.embedded.answers import approve, signal
from frostline.errors import ApprovalForbidden, DefinitionError, RunNotFound
from frostline.store import Store, open_store

from .helpers import Raw
from .test_tokens import _open


def _wait(run_id: str, identity: str, kind: str, name: str | None = None) -> WaitRecord:
    return WaitRecord(run_id, identity, kind,  # type: ignore[arg-type]
                      "human.approve" if kind == "approval" else "event.wait", name,
                      {"ask": "x"}, "d" * 64, 0.0, None, 1)


def test_issue26_a_token_carries_its_roles(store: Store) -> None:
    runner = store.create_token("alice")
    both = store.create_token("carol", roles=["runner", "approver", "approver"])
    assert store.authenticate(runner).roles == ("runner",)  # type: ignore[union-attr]
    record = store.authenticate(both)
    assert record is not None and (record.principal, record.roles) == ("carol",
                                                                       ("approver", "runner"))
    assert [r.to_dict(0.0)["roles"] for r in store.list_tokens()] == [["runner"],
                                                                       ["approver", "runner"]]
    assert store.authenticate("fl_nope_nope") is None
    store.revoke_tokens("carol")
    assert store.authenticate(both) is None  # revoked: no principal and no roles
    for bad in (["Approver"], ["ops,admin"], [""], ["x" * 40]):
        with pytest.raises(DefinitionError, match="role"):
            store.create_token("dave", roles=bad)
    assert [r.principal for r in store.list_tokens()] == ["alice", "carol"]  # nothing added


def test_issue26_tokens_from_before_roles_are_runners(store_url: str) -> None:
    token = "fl_0123456789ab_" + "y" * 43
    with _open(store_url, version=12):
        pass
    raw = Raw(store_url)
    try:
        raw.execute("INSERT INTO tokens (token_hash, principal, created_at, prefix) VALUES "
                    f"('{hashlib.sha256(token.encode()).hexdigest()}', 'erin', 5.0, "
                    "'fl_0123456789ab')")
    finally:
        raw.close()
    with open_store(store_url) as store:  # migrated on open
        record = store.authenticate(token)
        assert record is not None and (record.principal, record.roles) == ("erin", ("runner",))
        assert store.list_tokens()[0].roles == ("runner",)
        approver = store.create_token("erin", roles=["approver"])
        assert store.authenticate(approver).roles == ("approver",)  # type: ignore[union-attr]


def test_issue26_by_names_who_answered_events_included(store: Store) -> None:
    key = store.create_run("r", {}, owner="alice").run_id
    signal(store, key, "early", 1, by="alice")  # kept: no wait for it yet
    store.settle_wait(_wait(key, "a", "approval"), 0.0)
    store.settle_wait(_wait(key, "now", "event", "now"), 0.0)
    signal(store, key, "now", 2, by="alice")  # delivered at once
    _, kept = store.settle_wait(_wait(key, "later", "event", "early"), 1.0)
    approve(store, key, "a", by="carol", roles=["approver"], policy=ApprovalPolicy())
    answers = {w.identity: a.by for w, a in store.list_waits(key) if a is not None}
    assert answers == {"a": "carol", "now": "alice", "later": "alice"}
    assert kept is not None and kept.by == "alice"


def test_issue26_a_refused_approval_records_nothing(store: Store) -> None:
    key = store.create_run("r", {}, owner="alice").run_id
    store.settle_wait(_wait(key, "a", "approval"), 0.0)
    policy = ApprovalPolicy()
    with pytest.raises(ApprovalForbidden, match="role approver") as refused:
        approve(store, key, "a", by="alice", roles=["approver"], policy=policy)
    assert refused.value.fields["approvers"] == ["role:approver"]
    with pytest.raises(RunNotFound):  # bob approves nothing: the run is not his to know of
        approve(store, key, "a", by="bob", roles=["runner"], policy=policy)
    assert [a for _, a in store.list_waits(key)] == [None]
    # without a policy (the command line's local principal), the owner answers as before
    assert approve(store, key, "a", by="alice")["by"] == "alice"
