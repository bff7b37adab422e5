"""Who may answer an approval, as pure decisions (issue 26 §5): a run's owner only with
self_approval, anyone else when named or holding a named role; the refusal says who may."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.capabilities.approvals import (
    ApprovalPolicy,
    ApprovalRule,
    check_approver,
    normalize_roles,
)

POLICY = ApprovalPolicy.build(None, None, {"deploy": (("ops", "role:release"), None),
                                           "note": (None, True)})


@pytest.mark.parametrize(("capability", "owner", "caller", "roles", "allowed"), [
    ("human.approve", "alice", "alice", ["approver"], False),  # the owner, approver or not
    ("human.approve", "alice", "carol", ["approver"], True),   # the default: the approver role
    ("human.approve", "alice", "bob", ["runner"], False),
    ("deploy", "alice", "ops", ["runner"], True),              # named
    ("deploy", "alice", "dave", ["release"], True),            # a named role
    ("deploy", "alice", "carol", ["approver"], False),         # the default's role is replaced
    ("note", "alice", "alice", [], True),                      # self_approval for this one
    ("note", "alice", "carol", ["approver"], True),            # approvers inherited
])
def test_issue26_who_may_answer(capability: str, owner: str, caller: str, roles: list[str],
                                allowed: bool) -> None:
    why = POLICY.refusal(capability=capability, owner=owner, caller=caller, roles=roles)
    assert (why is None) is allowed, why


def test_issue26_a_refusal_says_who_may() -> None:
    own = POLICY.refusal(capability="deploy", owner="alice", caller="alice", roles=[])
    assert own is not None and "own approval" in own and "self_approval" in own
    assert "the principal ops or a token with the role release" in own
    other = POLICY.refusal(capability="deploy", owner="alice", caller="carol", roles=["approver"])
    assert other is not None and "the principal ops" in other and "self_approval" not in other
    assert ApprovalRule(("a", "b")).describe() == "the principals a, b"


def test_issue26_approvers_anything_is_any_rule() -> None:
    assert POLICY.approves_anything("ops", [])
    assert POLICY.approves_anything("x", ["release"])
    assert not POLICY.approves_anything("bob", ["runner"])


@given(st.lists(st.sampled_from(["runner", "approver", "ops", "release-1"]), max_size=6))
def test_issue26_roles_are_a_sorted_set_and_never_empty(roles: list[str]) -> None:
    held = normalize_roles(roles)
    assert held == tuple(sorted(set(roles))) or (not roles and held == ("runner",))


@pytest.mark.parametrize("bad", ["", "role:", "role:Ops", "a b", "a/b", "a:b", "x" * 201])
def test_issue26_a_bad_approver_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_approver(bad)
