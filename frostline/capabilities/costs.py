"""What one call cost: the single rule behind every spend figure frostline shows or budgets with.

- A call that returned costs what its provider reports in its usage (``usage["cost_usd"]``);
  when the provider reports no cost, the catalog price stands in for it.
- A call the provider rejected or failed costs 0, unless the provider says otherwise: a
  ``cost_usd`` on its error (a `ProviderError(..., cost_usd=0.01)`), or in a ``usage`` object
  the error carries.
- A call whose outcome is unknown (dispatched, never settled: a crash, a lost connection)
  counts at the catalog price, since the provider may have run it.

The attempt figures the broker keeps, `frostline show`, the HTTP API, the web UI, the demo's
table and the budget a new attempt starts from all apply these three lines, so they agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def reported_cost(data: Mapping[str, Any] | None) -> float | None:
    """The ``cost_usd`` a provider reported in `data` (a usage, or an error that may carry
    one directly or in its ``usage``), or None when it reported none that is a cost: a
    finite, non-negative number."""
    if not isinstance(data, Mapping):
        return None
    value = data.get("cost_usd")
    if value is None and isinstance(data.get("usage"), Mapping):
        value = data["usage"].get("cost_usd")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return float(value)


def call_cost(usage: Mapping[str, Any] | None, price: float) -> float:
    """What a call that returned cost: its reported cost, else the catalog `price`."""
    reported = reported_cost(usage)
    return float(price) if reported is None else reported


def rejected_cost(error: Mapping[str, Any] | None) -> float:
    """What a rejected or failed call cost: what the provider says, else 0."""
    reported = reported_cost(error)
    return 0.0 if reported is None else reported


__all__ = ["call_cost", "rejected_cost", "reported_cost"]
