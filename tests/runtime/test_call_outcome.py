"""A call owns its outcome: one method records it, and it only ever moves forward.

Every seam (the rule, dispatch, the waits, the broker's last-resort handler, the dry replay)
says what became of a call through `Call.conclude`; a transition `OUTCOME_TRANSITIONS` does
not allow is a defect and raises (tests/runtime/test_ownership.py checks that nothing else
writes one). The attempt's executed and replayed counts are read from the rows, so they agree
with them by construction.
"""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.identity import Identity
from frostline.errors import InternalError
from frostline.runtime.call import OUTCOME_TRANSITIONS, BrokerStats, Call, Outcome

OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


def _call() -> Call:
    return Call.of(Identity("orchestrate/#0", (), 0), "echo", {"n": 1})


def test_a_first_outcome_may_be_any_and_comes_before_the_error_in_the_row() -> None:
    for outcome in OUTCOMES:
        call = _call()
        call.conclude(outcome, {"code": "x"})
        assert call.outcome == outcome
        assert list(call.row) == ["identity", "capability", "outcome", "error"]


def test_a_decided_outcome_refuses_a_second_decision() -> None:
    call = _call()
    call.conclude("denied", {"code": "grant"})
    with pytest.raises(InternalError, match="cannot go from 'denied' to 'executed'"):
        call.conclude("executed")
    assert call.row == {"identity": "orchestrate/#0@:0", "capability": "echo",
                        "outcome": "denied", "error": {"code": "grant"}}


def test_only_a_commit_that_fails_to_settle_changes_an_executed_call() -> None:
    for after in ("failed", "store_unavailable"):
        call = _call()
        call.conclude("executed")
        call.conclude(after)
        assert call.outcome == after
    call = _call()
    call.conclude("executed")
    with pytest.raises(InternalError):
        call.conclude("replayed")


def test_a_failure_after_the_decision_keeps_the_decided_outcome() -> None:
    call = _call()
    call.conclude_unless_decided("failed")
    assert call.outcome == "failed"
    decided = _call()
    decided.conclude("executed")
    decided.conclude_unless_decided("store_unavailable")
    assert decided.outcome == "executed"


@given(st.lists(st.sampled_from(OUTCOMES), max_size=8))
def test_outcomes_only_move_forward(attempts: list[Outcome]) -> None:
    """Whatever the seams try, the recorded outcomes form a path of the transition table:
    never back to one already held, and nothing after a final outcome."""
    call = _call()
    held: list[Outcome] = []
    for outcome in attempts:
        before = call.outcome
        allowed = outcome in OUTCOME_TRANSITIONS.get(before, frozenset())
        if allowed:
            call.conclude(outcome)
            held.append(outcome)
        else:
            with pytest.raises(InternalError):
                call.conclude(outcome)
        assert call.outcome == (outcome if allowed else before)
    assert len(held) == len(set(held)) <= 2
    if len(held) == 2:
        assert held[0] == "executed" and held[1] in ("failed", "store_unavailable")


@given(st.lists(st.sampled_from(OUTCOMES), max_size=30))
def test_executed_and_replayed_are_counted_from_the_rows(outcomes: list[Outcome]) -> None:
    stats = BrokerStats()
    for outcome in outcomes:
        call = _call()
        call.conclude(outcome)
        stats.calls.append(call.row)
    assert stats.executed == outcomes.count("executed")
    assert stats.replayed == outcomes.count("replayed")

