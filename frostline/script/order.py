"""Iteration order (R04): whether iterating a value follows a set's hash order.

A set's iteration order depends on string hashing, which is randomized per process, so a
payload built by iterating one can differ between attempts. ``sorted(...)`` restores a
deterministic order; ``list``, ``tuple``, ``enumerate``, ``zip``, ... keep the order of
what they are given, and a name keeps the order of every value it is bound to.
"""

from __future__ import annotations

import ast

from frostline.script.scope import FunctionInfo, ModuleInfo

_KEEP_ORDER = frozenset({"list", "tuple", "enumerate", "reversed", "zip", "map", "filter", "dict"})
_MAX_DEPTH = 20


class Order:
    """R04 queries over one analysed module."""

    def __init__(self, module: ModuleInfo) -> None:
        self.module = module
        self._active: set[tuple[int, str]] = set()

    def nondeterministic(self, expr: ast.expr, func: FunctionInfo, depth: int = 0) -> bool:
        """Whether iterating `expr` follows a set's order (hash order, not source order)."""
        if depth > _MAX_DEPTH:
            return False
        d = depth + 1
        if isinstance(expr, ast.Set | ast.SetComp):
            return True
        if isinstance(expr, ast.Call):
            return self._call(expr, func, d)
        if isinstance(expr, ast.ListComp | ast.GeneratorExp | ast.DictComp):
            return any(self.nondeterministic(g.iter, func, d) for g in expr.generators)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr | ast.BitAnd |
                                                      ast.Sub | ast.BitXor):
            return (self.nondeterministic(expr.left, func, d)
                    or self.nondeterministic(expr.right, func, d))
        if isinstance(expr, ast.IfExp):
            return (self.nondeterministic(expr.body, func, d)
                    or self.nondeterministic(expr.orelse, func, d))
        if isinstance(expr, ast.BoolOp):
            return any(self.nondeterministic(v, func, d) for v in expr.values)
        if isinstance(expr, ast.Name):
            return self._name(expr.id, func, d)
        return False

    def _call(self, expr: ast.Call, func: FunctionInfo, d: int) -> bool:
        f = expr.func
        if isinstance(f, ast.Name) and func.defining_scope(f.id) is None \
                and f.id not in self.module.constants and f.id not in self.module.functions:
            if f.id in ("set", "frozenset"):
                return True
            if f.id in _KEEP_ORDER:
                return any(self.nondeterministic(a, func, d) for a in expr.args)
            return False
        if isinstance(f, ast.Attribute) and f.attr == "copy":
            return self.nondeterministic(f.value, func, d)
        return False

    def _name(self, name: str, func: FunctionInfo, d: int) -> bool:
        scope = func.defining_scope(name)
        if scope is None:
            value = self.module.constants.get(name)
            return value is not None and self.nondeterministic(value, func, d)
        key = (id(scope), name)
        if key in self._active:
            return False  # a binding cycle adds no order of its own
        self._active.add(key)
        try:
            return any(b.value is not None and b.kind in ("assign", "walrus", "alias")
                       and self.nondeterministic(b.value, scope, d) for b in scope.bindings[name])
        finally:
            self._active.discard(key)
