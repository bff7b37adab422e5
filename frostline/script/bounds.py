"""Static bounds: how many items an iterable can yield, how wide a container can fan out.

The checker accepts a loop or a container only when this module can bound it (R03, R05),
and the spend bound multiplies these numbers. Accepted shapes (anything else is unbounded):

- ``range(stop)``, ``range(start, stop[, step])``: ``start``/``step`` exact integer constants,
  ``stop`` an exact constant or an upper bound (``len(<bounded>)``, ``min(x, 8)``);
- a slice with constant bounds: ``xs[:6]`` (6), ``xs[2:8]`` (6), ``xs[-4:]`` (4), ``xs[:MAX]``;
  ``xs[2:]`` and ``xs[:-1]`` depend on ``len(xs)``, so they are bounded only by ``xs``'s own
  bound; a negative step needs both ends;
- a list, tuple, set or dict literal, a string literal (its length), a comprehension over
  bounded iterables (the product of its generators);
- ``enumerate``, ``reversed``, ``sorted``, ``list``, ``tuple``, ``set``, ``frozenset``,
  ``dict``, ``filter`` of a bounded iterable; ``zip``/``map`` of at least one bounded
  iterable (they stop at the shortest); ``.items()``/``.keys()``/``.values()``/``.copy()``
  of a bounded dict or list; ``a + b``; ``xs * <const>``;
- the awaited result of ``ctx.parallel(xs)`` or ``ctx.pipeline(xs, ...)`` (one result per
  item of ``xs``) and of a literal ``ctx.dag({...})`` (one per task);
- a name bound exactly once (in its function, or a module-level literal constant) to one of
  these, that grows only through ``append``/``insert``/``extend``/``update``/``setdefault``/
  item and slice stores counted with the bounds of the loops around them (``jobs = []`` then
  ``jobs.append(...)`` inside ``for s in shots[:4]`` gives 4). If its value escapes
  (``ys = xs``, storing it in a container, passing it to a helper, returning it from a
  nested helper) the bound stands only while the script has no hidden growth
  (frostline.script.growth): growth through a reference that is not a name bound to new
  objects, which the count above cannot see;
- a helper's parameter, bounded by what every call of the helper passes it
  (frostline.script.arguments).

Integer constants are literals, module-level literal constants, names bound once to a
constant, parameters every call passes the same constant, and ``+ - * // %`` of constants
(``**`` is folded only to explain a rejection: it could build a huge number). Upper bounds
of non-negative integers (``range`` stops, slice ends) also take ``len``, ``min``, ``max``,
``+`` and ``*`` of bounded values.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

from frostline.script.arguments import CallIndex
from frostline.script.scope import Binding, FunctionInfo, LoopRec, ModuleInfo
from frostline.script.shapes import is_ctx_attribute

_T = TypeVar("_T")

_BIG = 10**12
_DIAGNOSTIC_BITS = 256  # how large `**` may fold when a rejection is explained


class Bounds:
    """Bound queries over one analysed module; results are memoized per name and loop."""

    def __init__(self, module: ModuleInfo, *, diagnostic: bool = False) -> None:
        """`diagnostic` folds `**` and lifts the integer cap: only to tell a bound that is
        too large from one that does not exist, never to accept a loop."""
        self.module = module
        self.diagnostic = diagnostic
        self._cap = 2**_DIAGNOSTIC_BITS if diagnostic else _BIG
        self._names: dict[tuple[int, str], int | None] = {}
        self._active: set[tuple[int, str]] = set()
        self._loops: dict[int, int | None] = {}
        self._calls = CallIndex(module)

    # ---- loops and containers --------------------------------------------------------
    def loop(self, rec: LoopRec) -> int | None:
        key = id(rec)
        if key not in self._loops:
            self._loops[key] = None  # set first: a loop that depends on itself is unbounded
            self._loops[key] = None if rec.expr is None else self.iterable(rec.expr, rec.func)
        return self._loops[key]

    # ---- iterables -----------------------------------------------------------------
    def iterable(self, expr: ast.expr, func: FunctionInfo) -> int | None:
        """Upper bound on the number of items `expr` yields, or None."""
        if isinstance(expr, ast.Constant):
            return len(expr.value) if isinstance(expr.value, str | bytes) else None
        if isinstance(expr, ast.List | ast.Tuple | ast.Set):
            total = 0
            for elt in expr.elts:
                if isinstance(elt, ast.Starred):
                    sub = self.iterable(elt.value, func)
                    if sub is None:
                        return None
                    total += sub
                else:
                    total += 1
            return total
        if isinstance(expr, ast.Dict):
            total = 0
            for key, value in zip(expr.keys, expr.values, strict=True):
                if key is None:
                    sub = self.iterable(value, func)
                    if sub is None:
                        return None
                    total += sub
                else:
                    total += 1
            return total
        if isinstance(expr, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            total = 1
            for gen in expr.generators:
                sub = self.iterable(gen.iter, func)
                if sub is None:
                    return None
                total *= sub
            return total
        if isinstance(expr, ast.Subscript):
            return self._sliced(expr, func)
        if isinstance(expr, ast.Name):
            return self.name(expr.id, func)
        if isinstance(expr, ast.Call):
            return self._call(expr, func)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Add):
                left, right = self.iterable(expr.left, func), self.iterable(expr.right, func)
                return None if left is None or right is None else left + right
            if isinstance(expr.op, ast.Mult):
                for seq, count in ((expr.left, expr.right), (expr.right, expr.left)):
                    k = self.exact(count, func)
                    if k is not None:
                        sub = self.iterable(seq, func)
                        return None if sub is None else sub * max(k, 0)
            return None
        if isinstance(expr, ast.IfExp):
            return _max_all([self.iterable(expr.body, func), self.iterable(expr.orelse, func)])
        if isinstance(expr, ast.BoolOp):
            return _max_all([self.iterable(v, func) for v in expr.values])
        if isinstance(expr, ast.Await):
            return self._awaited(expr.value, func)
        return None

    def _awaited(self, call: ast.expr, func: FunctionInfo) -> int | None:
        """The length of a container's result: one item per branch, stage item or task."""
        if not (isinstance(call, ast.Call) and is_ctx_attribute(call.func)) or call.keywords \
                or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        kind, args = call.func.attr, call.args
        if (kind == "parallel" and len(args) == 1) or (kind == "pipeline" and len(args) >= 2):
            return self.iterable(args[0], func)
        if kind == "dag" and len(args) == 1 and isinstance(args[0], ast.Dict):
            return len(args[0].keys)
        return None

    def _call(self, call: ast.Call, func: FunctionInfo) -> int | None:
        if call.keywords and not (isinstance(call.func, ast.Name) and call.func.id in
                                  ("sorted", "zip", "enumerate", "dict")):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        args = call.args
        if isinstance(call.func, ast.Attribute):
            if call.func.attr in ("items", "keys", "values", "copy") and not args:
                return self.iterable(call.func.value, func)
            return None
        if not isinstance(call.func, ast.Name) or not self._is_builtin(call.func.id, func):
            return None
        name = call.func.id
        if name == "range":
            return self._range(args, func)
        if name in ("enumerate", "reversed", "sorted", "list", "tuple", "set", "frozenset",
                    "dict"):
            if not args:
                return len(call.keywords) if name == "dict" else 0
            if name == "dict" and call.keywords:
                return None
            return self.iterable(args[0], func)
        if name == "filter" and len(args) == 2:
            return self.iterable(args[1], func)
        if name in ("zip", "map"):
            seqs = args if name == "zip" else args[1:]
            bounds = [b for b in (self.iterable(a, func) for a in seqs) if b is not None]
            return min(bounds) if bounds else None
        return None

    def _range(self, args: list[ast.expr], func: FunctionInfo) -> int | None:
        if len(args) == 1:
            stop = self.upper(args[0], func)
            return None if stop is None else max(stop, 0)
        if len(args) in (2, 3):
            start = self.exact(args[0], func)
            step = self.exact(args[2], func) if len(args) == 3 else 1
            if start is None or step is None or step == 0:
                return None
            if step > 0:
                stop = self.upper(args[1], func)
                return None if stop is None else max(0, -(-(stop - start) // step))
            exact_stop = self.exact(args[1], func)
            return None if exact_stop is None else max(0, -(-(start - exact_stop) // -step))
        return None

    def _sliced(self, expr: ast.Subscript, func: FunctionInfo) -> int | None:
        """A slice holds no more than its ends allow, nor more than the sequence it cuts
        (`refs[1:]` of a bounded `refs`)."""
        if not isinstance(expr.slice, ast.Slice):
            return None
        found = [b for b in (self._slice(expr.slice, func), self.iterable(expr.value, func))
                 if b is not None]
        return min(found) if found else None

    def _slice(self, sl: ast.Slice, func: FunctionInfo) -> int | None:
        lower = upper = None
        inexact = False  # `xs[:n]` with 0 <= n <= upper: at most `upper` items
        if sl.lower is not None:
            lower = self.exact(sl.lower, func)
            if lower is None:
                return None
        if sl.upper is not None:
            upper = self.exact(sl.upper, func)
            if upper is None and self.nonneg(sl.upper, func):
                upper, inexact = self.upper(sl.upper, func), True
            if upper is None:
                return None
        step = 1
        if sl.step is not None:
            s = self.exact(sl.step, func)
            if s is None or s == 0:
                return None
            step = s
        if step < 0:
            if inexact or lower is None or upper is None or (lower < 0) != (upper < 0):
                return None
            return max(0, -(-(lower - upper) // -step))
        candidates = []
        if upper is not None and upper >= 0:
            candidates.append(upper - lower if lower is not None and lower >= 0 else upper)
        if lower is not None and lower < 0:
            candidates.append(-lower if upper is None or upper >= 0 else upper - lower)
        if not candidates:
            return None
        return -(-max(0, min(candidates)) // step)

    # ---- integers ------------------------------------------------------------------
    def exact(self, expr: ast.expr, func: FunctionInfo) -> int | None:
        """The value of an integer constant expression, or None."""
        if isinstance(expr, ast.Constant):
            v = expr.value
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            v = self.exact(expr.operand, func)
            return None if v is None else (-v if isinstance(expr.op, ast.USub) else v)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub | ast.Mult |
                                                      ast.FloorDiv | ast.Mod | ast.Pow):
            a, b = self.exact(expr.left, func), self.exact(expr.right, func)
            if a is None or b is None:
                return None
            if isinstance(expr.op, ast.Pow):
                if not self.diagnostic or b < 0 or b * abs(a).bit_length() > _DIAGNOSTIC_BITS:
                    return None
                r = a**b
            elif isinstance(expr.op, ast.Add):
                r = a + b
            elif isinstance(expr.op, ast.Sub):
                r = a - b
            elif isinstance(expr.op, ast.Mult):
                r = a * b
            elif b == 0:
                return None
            else:
                r = a // b if isinstance(expr.op, ast.FloorDiv) else a % b
            return r if abs(r) <= self._cap else None
        if isinstance(expr, ast.Name):
            return self._through_name(expr.id, func, "=", self.exact, _same)
        return None

    def upper(self, expr: ast.expr, func: FunctionInfo) -> int | None:
        """An upper bound of a non-negative integer expression (for range stops)."""
        v = self.exact(expr, func)
        if v is not None:
            return v
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.keywords \
                and self._is_builtin(expr.func.id, func):
            name, args = expr.func.id, expr.args
            if name == "len" and len(args) == 1:
                return self.iterable(args[0], func)
            if name == "min" and len(args) >= 2:
                found = [b for b in (self.upper(a, func) for a in args) if b is not None]
                return min(found) if found else None
            if name == "max" and len(args) >= 2:
                return _max_all([self.upper(a, func) for a in args])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mult):
            a, b = self.upper(expr.left, func), self.upper(expr.right, func)
            if a is None or b is None or not (self.nonneg(expr.left, func)
                                              and self.nonneg(expr.right, func)):
                return None
            return a + b if isinstance(expr.op, ast.Add) else a * b
        if isinstance(expr, ast.Name):
            return self._through_name(expr.id, func, "<", self.upper, _max_all)
        return None

    def nonneg(self, expr: ast.expr, func: FunctionInfo) -> bool:
        """Whether an integer expression is never negative (a slice end `xs[:n]` needs it)."""
        value = self.exact(expr, func)
        if value is not None:
            return value >= 0
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.keywords \
                and expr.args and self._is_builtin(expr.func.id, func):
            name, args = expr.func.id, expr.args
            if name in ("len", "abs"):
                return True
            if name == "min":
                return all(self.nonneg(a, func) for a in args)
            if name == "max":
                return any(self.nonneg(a, func) for a in args)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mult):
            return self.nonneg(expr.left, func) and self.nonneg(expr.right, func)
        if isinstance(expr, ast.Name):
            values = self._values(expr.id, func)
            key = (id(func.defining_scope(expr.id)), "+" + expr.id)
            return values is not None and self._guarded(
                key, False, lambda: all(self.nonneg(v, f) for v, f in values))
        return False

    def _through_name(self, name: str, func: FunctionInfo, tag: str,
                      bound: Callable[[ast.expr, FunctionInfo], int | None],
                      combine: Callable[[list[int | None]], int | None]) -> int | None:
        """`bound` of every value a name can hold, combined; guarded against cycles."""
        values = self._values(name, func)
        if values is None:
            return None
        key = (id(func.defining_scope(name)), tag + name)
        return self._guarded(key, None, lambda: combine([bound(v, f) for v, f in values]))

    def _guarded(self, key: tuple[int, str], cyclic: _T, compute: Callable[[], _T]) -> _T:
        """`compute()`, or `cyclic` when `key` is already being computed (a binding cycle)."""
        if key in self._active:
            return cyclic
        self._active.add(key)
        try:
            return compute()
        finally:
            self._active.discard(key)

    # ---- names ---------------------------------------------------------------------
    def _is_builtin(self, name: str, func: FunctionInfo) -> bool:
        return (func.defining_scope(name) is None and name not in self.module.constants
                and name not in self.module.functions)

    def _values(self, name: str, func: FunctionInfo) -> list[tuple[ast.expr, FunctionInfo]] | None:
        """Every value a name bound once (never rebound, never mutated) can hold, with the
        scope it is evaluated in: its assignment, its module constant, or, for a parameter,
        what each call passes (frostline.script.arguments); None otherwise."""
        scope = func.defining_scope(name)
        if scope is None:
            value = self.module.constants.get(name)
            return None if value is None else [(value, func)]
        bindings = scope.bindings[name]
        if len(bindings) != 1 or scope.mutations.get(name):
            return None
        if bindings[0].kind == "assign" and bindings[0].value is not None:
            return [(bindings[0].value, scope)]
        if bindings[0].kind == "param":
            return self._calls.arguments(scope, name)
        return None

    def name(self, name: str, func: FunctionInfo) -> int | None:
        scope = func.defining_scope(name)
        if scope is None:
            value = self.module.constants.get(name)
            if value is None:
                return None
            # Module constants are read-only (mutating one by name is R08), so their literal
            # is exact, unless a mutable one escapes into a script with hidden growth
            # (`xs = NAMES; xs.append(...)`).
            escaped = name in self.module.aliased or (name in self.module.escaped
                                                      and self.module.hidden_growth)
            if escaped and isinstance(value, ast.List | ast.Dict | ast.Set):
                return None
            return self.iterable(value, func)
        key = (id(scope), name)
        if key in self._names:
            return self._names[key]
        if key in self._active:
            return None
        result = self._guarded(key, None, lambda: self._name_bound(name, scope))
        self._names[key] = result
        return result

    def _name_bound(self, name: str, scope: FunctionInfo) -> int | None:
        bindings = scope.bindings[name]
        if len(bindings) != 1 or name in scope.aliased or (name in scope.escapes
                                                           and self.module.hidden_growth):
            return None
        binding = bindings[0]
        if binding.kind == "param":
            return self._param_bound(name, scope)
        if binding.kind != "assign" or binding.value is None:
            return None
        total = self.iterable(binding.value, scope)
        if total is None:
            return None
        for mutation in scope.mutations.get(name, []):
            if mutation.method == "shrink":
                continue
            if mutation.func is not scope:
                return None  # grown from another function: its call count is not local
            times = self._times(binding, mutation.loops)
            if times is None:
                return None
            if mutation.method in ("append", "insert", "setdefault", "store"):
                grow: int | None = 1
            elif mutation.method in ("extend", "update") and mutation.arg is not None:
                grow = self.iterable(mutation.arg, scope)
            else:
                grow = None
            if grow is None:
                return None
            total += grow * times
        return total

    def _param_bound(self, name: str, scope: FunctionInfo) -> int | None:
        """The largest bound of what the calls of `scope` pass its parameter `name`."""
        if any(m.method != "shrink" for m in scope.mutations.get(name, [])):
            return None  # grown through a parameter: hidden growth, counted nowhere
        values = self._calls.arguments(scope, name)
        if values is None:
            return None
        return _max_all([self.iterable(value, caller) for value, caller in values])

    def _times(self, binding: Binding, loops: tuple[LoopRec, ...]) -> int | None:
        outer = binding.loops
        if loops[: len(outer)] != outer or any(a is not b for a, b in zip(loops, outer, strict=False)):
            return None
        times = 1
        for rec in loops[len(outer):]:
            b = self.loop(rec)
            if b is None:
                return None
            times *= b
        return times


def _max_all(values: list[int | None]) -> int | None:
    if any(v is None for v in values):
        return None
    return max(v for v in values if v is not None) if values else None


def _same(values: list[int | None]) -> int | None:
    """The one value every element equals, or None."""
    first = values[0] if values else None
    return first if first is not None and all(v == first for v in values) else None
