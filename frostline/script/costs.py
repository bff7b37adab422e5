"""The algebra of cost trees: how the walk combines the costs of the parts of a node.

Every statement and expression the walk visits yields the cost tree of the capability calls
it can make (the tree's grammar and its evaluation are in frostline.script.spend), or None
when it can make none. These combinators drop the Nones and collapse single children, so a
tree holds only the paths that lead to a ``ctx.run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from frostline.script.scope import Cost, LoopRec


def seq(*parts: Cost | None) -> Cost | None:
    """All of the parts run, one after the other: their counts add up."""
    items = [p for p in parts if p is not None]
    if not items:
        return None
    return items[0] if len(items) == 1 else ("seq", items)


def one_of(*parts: Cost | None) -> Cost | None:
    """Exactly one of the parts runs (branches, cases, handlers): the per-capability maximum."""
    items = [p for p in parts if p is not None]
    if not items:
        return None
    return items[0] if len(items) == 1 else ("max", items)


def times(loops: Sequence[LoopRec], body: Cost | None) -> Cost | None:
    """`body` runs once per item of each loop; `loops` go from the outermost inwards."""
    if body is None:
        return None
    for rec in reversed(loops):
        body = ("times", rec, body)
    return body
