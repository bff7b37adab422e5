"""Whether a container can grow where the bound analysis cannot count it.

A name's bound counts the growth made through that name (frostline.script.bounds). Its value
can also be reached through another reference once it escapes: an alias (``ys = xs``), a
container that holds it (``d = {"k": xs}`` then ``d["k"].append(...)``), a helper parameter,
a loop variable, a capture pattern. Growth through such a reference happens at a receiver
that is not a name bound only to new objects. The walk records every growth; this module
decides whether any of it is hidden. When none is, an escaped value can still grow only
through its own name, so its bound stands; when some is, every escaped value is unbounded.
"""

from __future__ import annotations

import ast

from frostline.script.scope import Binding, FunctionInfo, ModuleInfo
from frostline.script.shapes import is_ctx_attribute

#: Builtins whose result is never one of their arguments (a new or an immutable object).
#: `min`, `max` and `sum` (whose start value is returned for an empty iterable) are left out.
_NEW_VALUE_BUILTINS = frozenset({
    "list", "dict", "set", "frozenset", "tuple", "sorted", "str", "int", "float", "bool",
    "len", "abs", "round", "any", "all", "isinstance", "range", "enumerate", "zip", "map",
    "filter", "reversed",
})
#: Data methods that hand back an object the receiver holds.
_ALIASING_METHODS = frozenset({"get", "pop", "setdefault"})
#: ctx primitives whose awaited result is new data (JSON from the host, or a new list/dict);
#: `race` returns whatever the winning branch returned.
_NEW_VALUE_PRIMITIVES = frozenset({"run", "parallel", "pipeline", "dag"})


def hidden_growth(module: ModuleInfo) -> bool:
    """Whether some container in the script can grow through a reference the analysis
    cannot attribute to the name it was bound to."""
    if module.untracked:
        return True
    for func in module.all_functions:
        for name, mutation in func.mutation_refs:
            if mutation.method == "shrink":
                continue
            scope = func.defining_scope(name)
            if scope is not None and not _own_object(scope, name, module):
                return True
        for name in func.aug_refs:
            scope = func.defining_scope(name)
            if scope is not None and not _own_object(scope, name, module):
                return True
    return False


def _own_object(scope: FunctionInfo, name: str, module: ModuleInfo) -> bool:
    """Whether every value `name` is ever bound to is a new object (or an immutable one),
    so that growing it through `name` grows nothing another name can see."""
    return all(_new_binding(b, scope, module) for b in scope.bindings[name])


def _new_binding(binding: Binding, scope: FunctionInfo, module: ModuleInfo) -> bool:
    if binding.kind in ("aug", "del", "decl"):
        return True  # `x += ...` keeps x's own object; del and a bare annotation bind nothing
    if binding.kind in ("assign", "walrus") and binding.value is not None:
        return is_new(binding.value, scope, module)
    return False


def is_new(expr: ast.expr, func: FunctionInfo, module: ModuleInfo) -> bool:
    """Whether evaluating `expr` yields an object no other reference holds yet (or an
    immutable one): a display, a comprehension, a slice, an operator's result, a copy."""
    if isinstance(expr, ast.Constant | ast.JoinedStr | ast.List | ast.Tuple | ast.Set
                  | ast.Dict | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
                  | ast.BinOp | ast.UnaryOp | ast.Compare | ast.Lambda):
        return True
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.slice, ast.Slice)
    if isinstance(expr, ast.IfExp):
        return is_new(expr.body, func, module) and is_new(expr.orelse, func, module)
    if isinstance(expr, ast.NamedExpr):
        return is_new(expr.value, func, module)
    if isinstance(expr, ast.Await):
        call = expr.value
        return isinstance(call, ast.Call) and is_ctx_attribute(call.func) \
            and call.func.attr in _NEW_VALUE_PRIMITIVES
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Name):
            return f.id in _NEW_VALUE_BUILTINS and func.defining_scope(f.id) is None \
                and f.id not in module.functions and f.id not in module.constants
        if isinstance(f, ast.Attribute) and not is_ctx_attribute(f):
            return f.attr not in _ALIASING_METHODS
    return False
