"""Expressions in the checker's walk: names, attributes, displays, lambdas, comprehensions.

The visitor of the walk (frostline.script.walk names them) that visits every expression
with the position it occupies (ESCAPE, SAFE, AWAIT, ...). A position decides whether an
awaitable there is consumed (R12) and whether a name's value escapes; the part records the
names read (R08 once resolved), the values formatted as text (R04, R08), the sequences
whose order matters (R04) and the comprehension loops (R03), and returns the cost tree of
the capability calls the expression can make.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from frostline.script.allowlists import DATA_METHODS, GROWING_METHODS, PRIMITIVES
from frostline.script.calls import CallWalk
from frostline.script.costs import one_of, seq, times
from frostline.script.scope import Cost, LoopRec
from frostline.script.shapes import is_ctx, is_dunder, is_literal
from frostline.script.source import MAX_AST_DEPTH, too_deep
from frostline.script.walk import (
    APPEND,
    AWAIT,
    BIND,
    CONTAINER,
    ESCAPE,
    ITEM,
    LAMBDA_OK,
    PAYLOAD,
    RETURN,
    SAFE,
    WalkState,
)

_TYPE_NAMES = frozenset({"str", "list", "dict"})
_ANNOTATION_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "set",
                               "frozenset"})


class ExpressionWalk:
    """Visits expressions, each with the position it occupies; calls go to its `calls`."""

    def __init__(self, state: WalkState) -> None:
        self.state = state
        self.calls = CallWalk(state, self)
        # The handler of every expression type the language admits; any other type is R09.
        # Constants and names never get here (`expr` handles them first).
        self._handlers: dict[type[ast.expr], Callable[[Any, int], Cost | None]] = {
            ast.Call: self.calls.call,
            ast.Attribute: self._attribute,
            ast.Await: self._await,
            ast.List: self._display,
            ast.Tuple: self._display,
            ast.Set: self._display,
            ast.Dict: self._dict,
            ast.ListComp: self._comprehension,
            ast.SetComp: self._comprehension,
            ast.GeneratorExp: self._comprehension,
            ast.DictComp: self._comprehension,
            ast.IfExp: self._if_exp,
            ast.BoolOp: self._bool_op,
            ast.BinOp: self._bin_op,
            ast.UnaryOp: self._unary_op,
            ast.Compare: self._compare,
            ast.Subscript: self._subscript,
            ast.Slice: self._slice,
            ast.JoinedStr: self._joined_str,
            ast.FormattedValue: self._formatted_value,
            ast.NamedExpr: self._named_expr,
            ast.Starred: self._starred,
            ast.Lambda: self._lambda,
            ast.Yield: self._yield,
            ast.YieldFrom: self._yield,
        }

    def expr(self, node: ast.expr, pos: int) -> Cost | None:
        # Leaves first: they cannot nest, so they skip the depth bookkeeping.
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            self.name(node, pos)
            return None
        state = self.state  # the hottest path of the walk: one attribute lookup
        depth = state.depth = state.depth + 1
        if depth > MAX_AST_DEPTH:
            raise too_deep(node)
        try:  # zero-cost in 3.11 when nothing is raised
            handler = self._handlers.get(type(node))
            if handler is None:
                self._unsupported(node)
                return None
            return handler(node, pos)
        finally:
            state.depth = depth - 1

    def _unsupported(self, node: ast.expr) -> None:
        self.state.report("R09", node, f"`{type(node).__name__}` expressions are not allowed",
                          "rewrite the expression with plain operations")
        self.state.skip(node)

    # ---- names and attributes ------------------------------------------------------
    def name(self, node: ast.Name, pos: int) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            self.state.bind_target_name(node, "unpack", None)
            return
        if name == "ctx":
            self.state.report("R02", node, "`ctx` is used as a value (aliased, stored, "
                              "returned or formatted)", "use ctx only as "
                              "`ctx.<primitive>(...)` or pass it to a helper whose parameter "
                              "is named `ctx`")
            return
        if name[0] == "_" and is_dunder(name):
            self.state.report("R07", node, f"dunder name `{name}` is not allowed",
                              "dunder names reach interpreter internals; use plain names")
        func = self.state.func
        func.loads.append((name, node, "value"))
        if pos in (ESCAPE, BIND, APPEND):
            func.escape_refs.append(name)
        elif pos in (AWAIT, CONTAINER, ITEM):
            func.consumed_refs.append(name)
        elif pos == RETURN:
            func.return_refs.append(name)

    def _attribute(self, node: ast.Attribute, pos: int) -> Cost | None:
        value = node.value
        if is_ctx(value):
            self.state.ctx_scope(value)
            if node.attr in PRIMITIVES:
                self.state.report("R02", node, f"`ctx.{node.attr}` is used without being called",
                                  f"call it directly: `await ctx.{node.attr}(...)`")
            else:
                self.state.unknown_ctx(node)
            return None
        self.state.check_attribute(node)
        unbound = isinstance(value, ast.Name) and value.id in _TYPE_NAMES \
            and self.state.func.defining_scope(value.id) is None
        if unbound and node.attr in GROWING_METHODS:
            # `list.append` handed to map or used as a key grows whatever it is applied to.
            self.state.module.untracked.append(node)
        if node.attr in DATA_METHODS and not unbound:
            # Every allowlisted attribute is a method; taken without a call it is a bound
            # method whose text carries a memory address. `str.strip` (unbound) is fine.
            self.state.report("R08", node, f"method `.{node.attr}` is used as a value (its text "
                              "carries a memory address, a hidden input)",
                              f"call it: `.{node.attr}(...)`, or use `str.{node.attr}` / a lambda")
        return self.expr(value, SAFE)

    # ---- operators and displays ----------------------------------------------------
    def _await(self, node: ast.Await, pos: int) -> Cost | None:
        if not self.state.func.is_async:
            self.state.report("R09", node, "`await` outside an `async def`",
                              "make the enclosing helper `async def`")
        return self.expr(node.value, AWAIT)

    def _display(self, node: ast.List | ast.Tuple | ast.Set, pos: int) -> Cost | None:
        inner = {CONTAINER: ITEM, BIND: BIND, PAYLOAD: PAYLOAD, RETURN: RETURN}.get(pos, ESCAPE)
        costs = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                self.state.ordered.append((elt.value, self.state.func, "unpacking"))
                costs.append(self.expr(elt.value, SAFE))
            else:
                costs.append(self.expr(elt, inner))
        return seq(*costs)

    def _dict(self, node: ast.Dict, pos: int) -> Cost | None:
        inner = pos if pos in (PAYLOAD, RETURN) else ESCAPE
        costs = []
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                costs.append(self.expr(key, SAFE))
            costs.append(self.expr(value, inner if key is not None else SAFE))
        return seq(*costs)

    def _if_exp(self, node: ast.IfExp, pos: int) -> Cost | None:
        test = self.expr(node.test, SAFE)
        return seq(test, one_of(self.expr(node.body, pos), self.expr(node.orelse, pos)))

    def _bool_op(self, node: ast.BoolOp, pos: int) -> Cost | None:
        return seq(*[self.expr(v, pos) for v in node.values])

    def _bin_op(self, node: ast.BinOp, pos: int) -> Cost | None:
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant | ast.JoinedStr) \
                and isinstance(getattr(node.left, "value", ""), str):
            self.state.func.sinks.append(node.right)
        return seq(self.expr(node.left, SAFE), self.expr(node.right, SAFE))

    def _unary_op(self, node: ast.UnaryOp, pos: int) -> Cost | None:
        return self.expr(node.operand, SAFE)

    def _starred(self, node: ast.Starred, pos: int) -> Cost | None:
        return self.expr(node.value, SAFE)

    def _compare(self, node: ast.Compare, pos: int) -> Cost | None:
        return seq(self.expr(node.left, SAFE), *[self.expr(c, SAFE) for c in node.comparators])

    def _subscript(self, node: ast.Subscript, pos: int) -> Cost | None:
        return seq(self.expr(node.value, SAFE), self.expr(node.slice, SAFE))

    def _slice(self, node: ast.Slice, pos: int) -> Cost | None:
        return seq(*[self.expr(p, SAFE) for p in (node.lower, node.upper, node.step)
                     if p is not None])

    def _joined_str(self, node: ast.JoinedStr, pos: int) -> Cost | None:
        return seq(*[self.expr(v, SAFE) for v in node.values])

    def _formatted_value(self, node: ast.FormattedValue, pos: int) -> Cost | None:
        self.state.func.sinks.append(node.value)
        return seq(self.expr(node.value, SAFE),
                   None if node.format_spec is None else self.expr(node.format_spec, SAFE))

    def _named_expr(self, node: ast.NamedExpr, pos: int) -> Cost | None:
        if isinstance(node.value, ast.Name):
            self.state.func.alias_refs.append(node.value.id)
        cost = self.expr(node.value, ESCAPE)
        self.state.bind_target_name(node.target, "walrus", node.value)
        return cost

    def _yield(self, node: ast.Yield | ast.YieldFrom, pos: int) -> None:
        self.state.report("R09", node, "`yield` is not allowed (no generators)",
                          "build a list and return it")

    # ---- functions as values and loops in expressions ------------------------------
    def _lambda(self, node: ast.Lambda, pos: int) -> Cost | None:
        if pos != LAMBDA_OK:
            self.state.report("R09", node, "lambda is only allowed as `key=` of "
                              "sorted/min/max or as the function of map/filter",
                              "define a helper function instead")
        self.state.lambdas += 1
        try:
            return self._lambda_parts(node)
        finally:
            self.state.lambdas -= 1

    def _lambda_parts(self, node: ast.Lambda) -> Cost | None:
        for sub in ast.walk(node.body):
            if is_ctx(sub):
                self.state.report("R09", node, "a lambda must not use ctx",
                                  "call ctx from an `async def` helper instead")
                self.state.skip(node.body)
                return None
        a = node.args
        for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
            if not is_literal(default):
                self.state.report("R09", default, "lambda defaults must be literals",
                                  "use the value inside the lambda body instead")
            self.expr(default, ESCAPE)
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
            self.state.func.bind(p.arg, "lambda", None, self.state.loops)
        self.expr(node.body, ESCAPE)  # what a lambda returns, map keeps
        return None

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                       pos: int) -> Cost | None:
        outer = self.state.loops
        costs: list[Cost | None] = []
        recs: list[LoopRec] = []
        for gen in node.generators:
            if gen.is_async:
                self.state.report("R09", gen.iter, "`async for` in a comprehension is not allowed",
                                  "iterate a bounded list with a plain comprehension")
            costs.append(self.expr(gen.iter, SAFE))
            self.state.ordered.append((gen.iter, self.state.func, "comprehension"))
            rec = self.state.open_loop("comprehension", gen.iter, gen.iter)
            recs.append(rec)
            self.state.loops = (*self.state.loops, rec)
            self.target(gen.target, "comp", None)
            inner = [self.expr(c, SAFE) for c in gen.ifs]
            if any(c is not None for c in inner):
                costs.append(times(recs, seq(*inner)))
        # The elements end up in the new container (or, for a generator, in whatever
        # consumes it): they are retained like the elements of a display.
        elt_pos = {CONTAINER: ITEM, BIND: BIND, PAYLOAD: PAYLOAD, RETURN: RETURN}.get(pos, ESCAPE)
        if isinstance(node, ast.DictComp):
            value_pos = pos if pos in (PAYLOAD, RETURN) else ESCAPE
            body = seq(self.expr(node.key, SAFE), self.expr(node.value, value_pos))
        else:
            body = self.expr(node.elt, elt_pos)
        self.state.loops = outer
        return seq(*costs, times(recs, body))

    # ---- targets and annotations ---------------------------------------------------
    def target(self, node: ast.expr, kind: str, value: ast.expr | None) -> Cost | None:
        """Bind or mutate through an assignment target; returns the cost of its sub-exprs."""
        if isinstance(node, ast.Name):
            self.state.bind_target_name(node, "del" if kind == "del" else
                                        ("unpack" if kind in ("unpack", "alias") and value is None
                                   else kind), value)
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return seq(*[self.target(e, "unpack" if kind in ("assign", "alias") else kind, None)
                         for e in node.elts])
        if isinstance(node, ast.Starred):
            return self.target(node.value, kind, None)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name):
                self._store(node, node.value, kind, value)
                return seq(self.expr(node.slice, SAFE))
            if kind == "del":
                return seq(self.expr(node.value, SAFE), self.expr(node.slice, SAFE))
            if kind != "aug" or isinstance(node.slice, ast.Slice):
                self.state.module.untracked.append(node)  # a store into a container reached by value
            # `(xs or ys)[k] = v` stores into xs: the container is retained, like an escape.
            return seq(self.expr(node.value, ESCAPE), self.expr(node.slice, SAFE))
        if isinstance(node, ast.Attribute):
            self.state.report("R07", node, f"assigning attribute `{node.attr}` is not allowed",
                              "store values in dicts: `d[\"key\"] = value`")
            return self.expr(node.value, SAFE)
        return self.expr(node, SAFE)

    def _store(self, node: ast.Subscript, name: ast.Name, kind: str, value: ast.expr | None) -> None:
        """`name[...] = value`: one more key, or, for a slice, as many items as `value` has."""
        if kind == "del" or (kind == "aug" and not isinstance(node.slice, ast.Slice)):
            self.state.mutation(name.id, "shrink", None, name)  # `aug` grows the item, not `name`
        elif kind == "aug":
            self.state.mutation(name.id, "unknown", None, name)  # `xs[0:0] += ys` inserts ys
        elif isinstance(node.slice, ast.Slice):
            self.state.mutation(name.id, "extend" if value is not None else "unknown", value, name)
        else:
            self.state.mutation(name.id, "store", None, name)

    def annotation(self, node: ast.expr) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id not in _ANNOTATION_NAMES:
                    self.state.report("R08", sub, f"annotation names `{sub.id}`, which a script "
                                      "cannot define (there are no imports)",
                                      "annotate with builtin types only (str, int, list, "
                                      "dict, ...) or drop the annotation")
            elif not isinstance(sub, ast.Constant | ast.Subscript | ast.Tuple | ast.List
                                | ast.BinOp | ast.BitOr | ast.Load | ast.expr_context):
                self.state.report("R09", sub, "annotations may only use names, subscripts and `|`",
                                  "simplify or drop the annotation")
                self.state.skip(node)
                return

