"""What a run has spent so far, read from what its store recorded.

One figure, by the rule of `frostline.capabilities.costs`: a committed call costs what its
provider reported in its usage (the catalog price when it reported nothing), a failed call
what the provider said it cost (0 when it said nothing), and a call dispatched and never
settled (pending after a crash, or abandoned by an operator) its catalog price, since the
provider may have run it. A reconciled call is paid through the slot it committed.

`frostline show`, the HTTP API, the web UI and the budget a new attempt starts from all read
this figure; the broker's per-attempt `spend_usd` applies the same rule as calls settle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.costs import call_cost, rejected_cost
from frostline.contract.records import CallRecord, CallStatus, SlotRecord
from frostline.script.spend import Prior
from frostline.store.base import Store

Prices = Callable[[str], float]


def catalog_prices(catalog: Catalog) -> Prices:
    """The catalog price of a capability by name (0 for a capability the catalog lacks)."""
    def price(capability: str) -> float:
        cap = catalog.get(capability)
        return float(cap.price_usd) if cap is not None else 0.0
    return price


def spent_usd(slots: Iterable[SlotRecord], calls: Iterable[CallRecord], price: Prices) -> float:
    """The run's spend from its committed slots and its call records (see the module doc)."""
    total = sum(call_cost(s.usage, price(s.capability)) for s in slots)
    for c in calls:
        if c.status is CallStatus.FAILED:
            total += rejected_cost(c.error)
        elif c.status in (CallStatus.PENDING, CallStatus.ABANDONED):
            total += price(c.capability)
    return round(total, 6)


def prior_of(slots: Sequence[SlotRecord], calls: Sequence[CallRecord], price: Prices) -> Prior:
    """What a run did before its next attempt, for the checker's spend pre-check: the
    identities committed per site, and the dollars and calls already spent."""
    return Prior(committed=Counter(s.site for s in slots), usd=spent_usd(slots, calls, price),
                 calls=len(calls))


def run_prior(store: Store, run_id: str, catalog: Catalog) -> Prior:
    """`prior_of` the run as the store has it now (an empty Prior for a run not yet created)."""
    return prior_of(store.list_slots(run_id), store.list_calls(run_id), catalog_prices(catalog))


def run_prices(store: Store, run_id: str) -> Prices:
    """Prices from the catalog the run's latest attempt recorded, over the default catalog."""
    recorded: Mapping[str, float] = {}
    # heads: an attempt's result is not needed here, and may be megabytes
    for attempt in reversed([h.record for h in store.list_attempt_heads(run_id, 0)]):
        if attempt.catalog_digest is not None:
            entries = store.get_catalog(attempt.catalog_digest) or []
            recorded = {str(e.get("name")): float(e.get("price_usd") or 0.0) for e in entries
                        if isinstance(e, dict)}
            break
    fallback = catalog_prices(DEFAULT_CATALOG)

    def price(capability: str) -> float:
        found = recorded.get(capability)
        return found if found is not None else fallback(capability)
    return price


def run_spent_usd(store: Store, run_id: str) -> float:
    """What the run has spent, across all its attempts (the figure every surface shows)."""
    return spent_usd(store.list_slot_usages(run_id), store.list_calls(run_id),
                     run_prices(store, run_id))


__all__ = ["catalog_prices", "prior_of", "run_prices", "run_prior", "run_spent_usd",
           "spent_usd"]
