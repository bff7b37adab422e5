"""R03 and R05 over the computed bounds: every loop and container within its limit.

A rejection says which of two things is wrong. Either no bound can be derived (the loop
iterates data whose length the script does not fix), or a bound exists and is over a limit:
the maximum loop bound, the maximum product of nested loop bounds, or the envelope's max
fanout. The second names the bound and the limit. ``**`` is never evaluated to accept a loop
(it could build a huge number), so to tell ``range(10**9)`` (a bound over the limit) from
``range(args["n"])`` (no bound) a rejected loop is measured again by a diagnostic pass that
folds it (frostline.script.bounds).
"""

from __future__ import annotations

import ast

from frostline.script.allowlists import MAX_LOOP_BOUND, MAX_NESTED_PRODUCT
from frostline.script.bounds import Bounds
from frostline.script.scope import LoopRec
from frostline.script.walk import WalkState

LOOP_LIMIT = "the maximum loop bound"
NESTED_LIMIT = "the maximum product of nested loop bounds"
FANOUT_LIMIT = "the envelope's max fanout"


def check_limits(an: WalkState, bounds: Bounds, max_fanout: int) -> None:
    """Report R03 for every loop and R05 for every container without a bound within limits."""
    diagnostic = Bounds(an.module, diagnostic=True)
    for rec in an.module.loops:
        if rec.kind == "while":
            continue  # reported by the walk
        bound = bounds.loop(rec)
        if rec.kind in ("for", "comprehension"):
            _loop(an, bounds, diagnostic, rec, bound)
        else:
            _container(an, diagnostic, rec, bound, max_fanout)


def _loop(an: WalkState, bounds: Bounds, diagnostic: Bounds, rec: LoopRec,
          bound: int | None) -> None:
    node = _at(rec)
    label = f"{'`for` loop' if rec.kind == 'for' else 'comprehension'} over `{_src(rec.expr)}`"
    if bound is None:
        measured = diagnostic.loop(rec)
        if measured is not None and measured > MAX_LOOP_BOUND:
            _over(an, "R03", node, label, measured, MAX_LOOP_BOUND, LOOP_LIMIT,
                  f"iterate at most {MAX_LOOP_BOUND} items")
        elif measured is not None:
            an.report("R03", node, f"{label} has no static bound: the checker does not "
                      "evaluate `**`", f"write the number itself ({measured})")
        else:
            an.report("R03", node, f"{label} has no static bound",
                      "iterate a slice with a constant bound (`xs[:6]`), `range(N)` with a "
                      "constant N, or a literal list")
        return
    if bound > MAX_LOOP_BOUND:
        _over(an, "R03", node, label, bound, MAX_LOOP_BOUND, LOOP_LIMIT,
              f"iterate at most {MAX_LOOP_BOUND} items")
        return
    outer = [bounds.loop(o) for o in rec.outer]
    product = bound
    for b in outer:
        product *= b if b is not None else 1
    if product > MAX_NESTED_PRODUCT and all(b is not None for b in outer):
        _over(an, "R03", node, f"nested loops ending in the {label}", product,
              MAX_NESTED_PRODUCT, NESTED_LIMIT, "shrink the loop bounds")


def _container(an: WalkState, diagnostic: Bounds, rec: LoopRec, bound: int | None,
               max_fanout: int) -> None:
    node = _at(rec)
    label = f"`ctx.{rec.kind}` over `{_src(rec.expr)}`"
    hint = f"split the work into batches of at most {max_fanout}"
    if bound is None:
        measured = diagnostic.loop(rec)
        if measured is not None and measured > max_fanout:
            _over(an, "R05", node, label, measured, max_fanout, FANOUT_LIMIT, hint)
            return
        an.report("R05", node, f"`ctx.{rec.kind}` fans out over `{_src(rec.expr)}`, whose "
                  "width is not statically bounded",
                  "fan out over a slice with a constant bound (`jobs[:8]`), a literal "
                  "list, or a comprehension over one")
    elif bound > max_fanout:
        _over(an, "R05", node, label, bound, max_fanout, FANOUT_LIMIT, hint)


def _over(an: WalkState, rule: str, node: ast.AST, label: str, bound: int, limit: int,
          which: str, hint: str) -> None:
    an.report(rule, node, f"{label}: the bound {bound} is over the limit {limit} ({which})", hint)


class _At:
    def __init__(self, line: int, col_offset: int) -> None:
        self.lineno = line
        self.col_offset = col_offset


def _at(rec: LoopRec) -> ast.AST:
    if rec.expr is not None and rec.kind in ("for", "comprehension"):
        return rec.expr
    return _At(rec.line, 0)  # type: ignore[return-value]


def _src(expr: ast.expr | None) -> str:
    if expr is None:
        return "?"
    text = ast.unparse(expr)
    return text if len(text) <= 60 else text[:57] + "..."
