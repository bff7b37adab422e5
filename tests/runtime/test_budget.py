"""The attempt's budget (`Spend`): claims that refuse to overshoot, releases, settled costs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.capabilities.envelope import Budget
from frostline.contract.identity import Identity
from frostline.errors import BudgetExceeded
from frostline.runtime.budget import Spend, usage_tokens
from frostline.runtime.call import Call


def _call(n: int = 0, capability: str = "image.generate") -> Call:
    return Call.of(Identity("orchestrate/#0", (), n), capability, {"n": n})


def test_a_claim_within_the_budget_reserves_one_call_at_its_price() -> None:
    spend = Spend(calls=1, usd=0.5, tokens=0)
    assert spend.claim(_call(), 0.25, Budget(usd=1.0, calls=2)) is None
    assert (spend.calls, spend.usd) == (2, 0.75)


@pytest.mark.parametrize(("spend", "budget", "says"), [
    (Spend(2, 0.0, 0), Budget(usd=1.0, calls=2), "would be call 3 of a budget of 2 calls"),
    (Spend(0, 0.9, 0), Budget(usd=1.0, calls=5), "would bring spend to $1.1500, over the "
                                                 "budget of $1.0000"),
    (Spend(0, 0.0, 500), Budget(usd=1.0, calls=5, tokens=500), "would start after 500 tokens"),
])
def test_an_over_budget_claim_is_refused_and_reserves_nothing(spend: Spend, budget: Budget,
                                                              says: str) -> None:
    before = (spend.calls, spend.usd, spend.tokens)
    denied = spend.claim(_call(), 0.25, budget)
    assert isinstance(denied, BudgetExceeded)
    assert says in denied.message and "nothing was dispatched" in denied.message
    assert denied.fields["identity"] == "orchestrate/#0@:0"
    assert (spend.calls, spend.usd, spend.tokens) == before


def test_release_gives_back_a_claim_and_settle_replaces_the_price_by_the_cost() -> None:
    spend = Spend(0, 0.0, 0)
    budget = Budget(usd=1.0, calls=10)
    assert spend.claim(_call(0), 0.4, budget) is None
    assert spend.claim(_call(1), 0.4, budget) is None
    spend.release(0.4)  # the second was never dispatched
    spend.settle(0.4, cost=0.1)  # the first cost less than its catalog price
    assert spend.calls == 1 and spend.usd == pytest.approx(0.1)
    spend.use_tokens({"tokens": 30})
    spend.use_tokens({"tokens": -5, "other": 1})  # nonsense reports count nothing
    assert spend.tokens == 30


def test_usage_tokens_takes_only_a_positive_integer() -> None:
    assert [usage_tokens(u) for u in ({"tokens": 7}, {"tokens": True}, {"tokens": 2.5}, {},
                                      {"tokens": 0})] == [7, 0, 0, 0, 0]


@given(st.lists(st.tuples(st.sampled_from(["claim", "release", "settle"]),
                          st.integers(0, 40), st.integers(0, 40)), max_size=40),
       st.integers(0, 6), st.integers(0, 100))
def test_claims_never_take_the_spend_over_the_budget(ops: list[tuple[str, int, int]],
                                                     calls: int, cents: int) -> None:
    """However claims, releases and settlements (at a cost within the price) interleave,
    the calls and dollars claimed stay within the budget."""
    budget = Budget(usd=cents / 100, calls=calls)
    spend = Spend(0, 0.0, 0)
    claimed: list[float] = []  # prices of the claims still open
    for index, (op, price_cents, cost_cents) in enumerate(ops):
        price = price_cents / 100
        if op == "claim":
            if spend.claim(_call(index), price, budget) is None:
                claimed.append(price)
        elif claimed:
            open_price = claimed.pop()
            if op == "release":
                spend.release(open_price)
            else:
                spend.settle(open_price, min(cost_cents / 100, open_price))
        assert spend.calls <= budget.calls
        assert spend.usd <= budget.usd + 1e-9
