"""The static spend bound: the most calls per capability one attempt can make, and its cost.

The checker's walk builds a small cost tree per function with the combinators of
frostline.script.costs (only nodes that lead to a ``ctx.run`` appear in it):

    ("call", cap)            one capability call expression
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

from frostline.capabilities.catalog import Catalog
from frostline.script.bounds import Bounds
from frostline.script.report import SpendBound
from frostline.script.scope import Cost, FunctionInfo


class _Evaluator:
    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
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
            return {node[1]: 1}, True
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
    counts = {cap: n for cap, n in sorted(counts.items()) if n > 0}
    usd = 0.0
    for cap, n in counts.items():
        entry_cap = catalog.get(cap)
        if entry_cap is not None:
            usd += n * entry_cap.price_usd
    return SpendBound(calls=counts, usd=round(usd, 6), bounded=bounded)
