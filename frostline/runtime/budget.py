"""What one attempt has used of its run's budget: calls, dollars and tokens, prior attempts
included.

The rule claims a call's catalog price when it lets the call through (before the first
await, so concurrent calls cannot overshoot the budget together); dispatch then either
releases the claim (the call was never dispatched) or settles it at what the call cost
(frostline.capabilities.costs), and adds the tokens its provider reported. Only these
methods change the figures, so the budget has one owner however many seams ask it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frostline.capabilities.envelope import Budget
from frostline.errors import BudgetExceeded, CallDenied
from frostline.runtime.call import Call


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """The tokens a provider reported using (0 when it reported none)."""
    value = usage.get("tokens", 0)
    return value if type(value) is int and value > 0 else 0


class Spend:
    """What the run has used of its budget, earlier attempts included.

    Calls and dollars are claimed when a call is let through. Tokens are only known after a
    call returns, so the token budget stops the calls that would start once it is spent.

    Example::

        spend = Spend(calls=0, usd=0.0, tokens=0)
        over = spend.claim(call, 0.02, envelope.budget)  # None: reserved
        spend.settle(0.02, cost=0.015)                   # it cost less than its price
    """

    __slots__ = ("_calls", "_tokens", "_usd")

    def __init__(self, calls: int, usd: float, tokens: int) -> None:
        self._calls = calls
        self._usd = usd
        self._tokens = tokens

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def usd(self) -> float:
        return self._usd

    @property
    def tokens(self) -> int:
        return self._tokens

    def claim(self, call: Call, price: float, budget: Budget) -> CallDenied | None:
        """Reserve one call at `price` for `call`, or say why it would exceed `budget`
        (then nothing is reserved)."""
        if self._calls + 1 > budget.calls:
            return _over(f"{call.text} would be call {self._calls + 1} of a budget of "
                         f"{budget.calls} calls", call.text)
        if self._usd + price > budget.usd + 1e-12:
            return _over(f"{call.text} ({call.capability}, ${price:.4f}) would bring spend to "
                         f"${self._usd + price:.4f}, over the budget of ${budget.usd:.4f}",
                         call.text)
        if budget.tokens is not None and self._tokens >= budget.tokens:
            return _over(f"{call.text} would start after {self._tokens} tokens were used, "
                         f"with a budget of {budget.tokens} tokens", call.text)
        self._calls += 1
        self._usd += price
        return None

    def release(self, price: float) -> None:
        """Give back the claim of a call that was never dispatched."""
        self._calls -= 1
        self._usd -= price

    def settle(self, price: float, cost: float) -> None:
        """A dispatched call cost `cost`: it replaces the `price` claimed for it."""
        self._usd += cost - price

    def use_tokens(self, usage: Mapping[str, Any]) -> None:
        """Count the tokens a provider reported for a call (`usage_tokens`)."""
        self._tokens += usage_tokens(usage)


def _over(message: str, identity: str) -> CallDenied:
    return BudgetExceeded(message + "; nothing was dispatched. Raise the envelope's budget or "
                          "reduce the work", identity=identity)
