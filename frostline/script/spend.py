"""The static spend bound: the most calls per capability one attempt can make, and its cost.

The checker's walk builds a small cost tree per function with the combinators of
frostline.script.costs (only nodes that lead to a ``ctx.run`` appear in it):

    ("call", cap, node)      one capability call expression (`node`, its ast.Call)
    ("helper", FunctionInfo) one invocation of a script function: its whole cost
    ("seq", [c, ...])        all of them run: counts add up
    ("max", [c, ...])        exactly one of them runs (if/elif/else, match cases, the except
                             handlers of one try): the per-capability maximum
    ("times", LoopRec, c)    c runs once per item of a loop, comprehension or fanout

so the bound is loop bounds × fanout widths × helper expansion. Over-approximations, all
sound: both sides of a conditional expression and every operand of ``and``/``or`` count;
``break``/``return`` are ignored; a ``try`` counts its body plus the costliest handler plus
``else`` and ``finally`` (only one handler runs per exception); ``ctx.race`` counts every
branch. A loop without a bound, or a recursive helper, makes the bound unbounded
(``SpendBound.bounded`` False): those scripts already fail R03/R09.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from frostline.capabilities.catalog import Catalog
from frostline.script.bounds import Bounds
from frostline.script.report import SpendBound
from frostline.script.scope import Cost, FunctionInfo

# What one call expression counts as, by key: its capability for the bound, its site for the
# per-site totals, nothing for a call whose site is frozen.
Leaf = Callable[[str, ast.Call], dict[str, int]]


def _by_capability(cap: str, _node: ast.Call) -> dict[str, int]:
    return {cap: 1}


class _Evaluator:
    def __init__(self, bounds: Bounds, leaf: Leaf = _by_capability) -> None:
        self.bounds = bounds
        self.leaf = leaf
        self.memo: dict[int, tuple[dict[str, int], bool]] = {}
        self.active: set[int] = set()

    def function(self, func: FunctionInfo) -> tuple[dict[str, int], bool]:
        key = id(func)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return {}, False  # recursion: R09 already rejects it
        self.active.add(key)
        try:
            result = self.cost(func.cost) if func.cost is not None else ({}, True)
        finally:
            self.active.discard(key)
        self.memo[key] = result
        return result

    def cost(self, node: Cost) -> tuple[dict[str, int], bool]:
        tag = node[0]
        if tag == "call":
            return self.leaf(node[1], node[2]), True
        if tag == "helper":
            return self.function(node[1])
        if tag == "times":
            counts, bounded = self.cost(node[2])
            n = self.bounds.loop(node[1])
            if n is None:
                return counts, False
            return {k: v * n for k, v in counts.items()}, bounded
        results = [self.cost(child) for child in node[1]]
        merged: dict[str, int] = {}
        for counts, _ in results:
            for cap, n in counts.items():
                merged[cap] = merged.get(cap, 0) + n if tag == "seq" else max(merged.get(cap, 0), n)
        return merged, all(b for _, b in results)


def spend_bound(entry: FunctionInfo | None, bounds: Bounds, catalog: Catalog) -> SpendBound:
    """The bound for one attempt that starts at `entry` (orchestrate)."""
    if entry is None:
        return SpendBound()
    counts, bounded = _Evaluator(bounds).function(entry)
    return _priced(counts, bounded, catalog)


def _priced(counts: Mapping[str, int], bounded: bool, catalog: Catalog) -> SpendBound:
    counts = {cap: n for cap, n in sorted(counts.items()) if n > 0}
    usd = 0.0
    for cap, n in counts.items():
        entry_cap = catalog.get(cap)
        if entry_cap is not None:
            usd += n * entry_cap.price_usd
    return SpendBound(calls=counts, usd=round(usd, 6), bounded=bounded)


@dataclass(frozen=True)
class Prior:
    """What a run did before the attempt being checked: how many identities it committed at
    each site (`committed`, site → count; replaying them costs nothing), and the dollars and
    calls it already spent (frostline.capabilities.costs). With a Prior the checker bounds the
    attempt's *new* spend against what is left of the budget (`new_spend`)."""

    committed: Mapping[str, int] = field(default_factory=dict)
    usd: float = 0.0
    calls: int = 0


def new_spend(entry: FunctionInfo | None, bounds: Bounds, catalog: Catalog,
              sites: Mapping[int, str], prior: Prior) -> SpendBound:
    """The most an attempt can spend beyond the replays of its frozen prefix.

    `sites` maps id(call node) to its site σ. A call whose site the prefix has not
    committed counts as in `spend_bound`; at a frozen site, the calls the site can make beyond
    the identities committed there count (a loop widened from 3 to 6 iterations makes 3 new
    calls), and the rest are replays. This takes each committed identity to be reached again
    (replayed): one that is not is an orphan, and a call made in its place is held by the
    dispatch-time budget check, which counts every new call as it is let through.
    """
    if entry is None:
        return SpendBound()

    capability_of: dict[str, str] = {}

    def fresh(cap: str, node: ast.Call) -> dict[str, int]:
        return {} if sites.get(id(node)) in prior.committed else {cap: 1}

    def per_site(cap: str, node: ast.Call) -> dict[str, int]:
        site = sites.get(id(node))
        if site is None or site not in prior.committed:
            return {}
        capability_of[site] = cap
        return {site: 1}

    counts, bounded = _Evaluator(bounds, fresh).function(entry)
    totals, _ = _Evaluator(bounds, per_site).function(entry)
    merged = dict(counts)
    for site, n in totals.items():
        beyond = n - prior.committed.get(site, 0)
        if beyond > 0:
            cap = capability_of[site]
            merged[cap] = merged.get(cap, 0) + beyond
    return _priced(merged, bounded, catalog)
