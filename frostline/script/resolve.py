"""The checker's second phase: decisions that need the whole script first.

Python decides whether a name is local over the whole function body, a list's bound depends
on every ``append`` to it, and whether an awaitable bound to a name is consumed depends on
later statements. The walk (frostline.script.rules) records references; this module resolves
them and emits R03, R04, R05, R08, R09 (recursion) and R12.
"""

from __future__ import annotations

import ast

from frostline.script.allowlists import (
    BUILTINS,
    FORBIDDEN_BUILTINS,
    ITERATORS,
)
from frostline.script.bounds import Bounds
from frostline.script.growth import hidden_growth
from frostline.script.limits import check_limits
from frostline.script.order import Order
from frostline.script.scope import FunctionInfo, ModuleInfo
from frostline.script.shapes import is_capability_call
from frostline.script.walk import WalkState


def resolve(an: WalkState, bounds: Bounds, max_fanout: int) -> None:
    module = an.module
    functions = module.all_functions
    for func in functions:
        _attach(func, module)
    module.hidden_growth = hidden_growth(module)
    _constant_defaults(an)
    for func in functions:
        _names(an, func)
        for name, call, what in func.pending:
            scope = func.defining_scope(name)
            if scope is None or name not in scope.consumed:
                an.report("R12", call, f"{what} is stored in `{name}`, which is never awaited "
                          "or handed to a container (fire-and-forget)",
                          f"await `{name}` or pass it to `await ctx.parallel({name})`")
                if is_capability_call(call):
                    an.report("R02", call, "`ctx.run(...)` is used without `await`, as if it "
                              "returned the result", 'write `result = await ctx.run("cap", '
                              'payload)`; the sync API is gone')
        for sink in func.sinks:
            if _opaque(sink, func, module, 0):
                an.report("R08", sink, "formatting an iterator, generator, lambda, function or "
                          "coroutine as text exposes a memory address (a hidden input)",
                          "convert it first, e.g. `list(...)`, or format the values you need")
    check_limits(an, bounds, max_fanout)
    order = Order(module)
    for func in functions:
        for sink in func.sinks:
            if order.nondeterministic(sink, func):
                an.report("R04", sink, "formatting a set as text follows its hash order, "
                          "which is not deterministic", "format `sorted(...)` of the set")
    for expr, func, what in an.ordered:
        if order.nondeterministic(expr, func):
            an.report("R04", expr, f"{what} iterates a set, whose order is not deterministic",
                      "iterate `sorted(...)` of the set, or keep the items in a list")
    _recursion(an)


def _attach(func: FunctionInfo, module: ModuleInfo) -> None:
    """Attach what `func` did to a name (grow it, let it escape, alias it, await it) to the
    scope that defines the name, now that every function's locals are known."""
    for name, mutation in func.mutation_refs:
        scope = func.defining_scope(name)
        if scope is not None:
            scope.mutations.setdefault(name, []).append(mutation)
    for name in func.consumed_refs:
        scope = func.defining_scope(name)
        if scope is not None:
            scope.consumed.add(name)
    # Returning a local this call created ends the function's use of it. Returning an outer
    # name or a constant hands its value to the caller, like any other escape, and so does
    # returning a parameter: its value may be a default, one object shared by every call.
    escapes = [*func.escape_refs, *(n for n in func.return_refs
                                    if func.defining_scope(n) is not func
                                    or any(b.kind == "param" for b in func.bindings[n]))]
    for names, local, constant in ((escapes, "escapes", module.escaped),
                                   (func.alias_refs, "aliased", module.aliased)):
        for name in names:
            scope = func.defining_scope(name)
            if scope is not None:
                getattr(scope, local).add(name)
            elif name in module.constants:
                constant.add(name)


def _constant_defaults(an: WalkState) -> None:
    """A default naming a module constant is its literal, unless a function rebinds the name."""
    for node in an.module.constant_defaults:
        rebound = [f.qual for f in an.module.all_functions if node.id in f.bindings]
        if rebound:
            an.report("R09", node, f"parameter default `{node.id}` names a module constant that "
                      f"`{rebound[0]}` rebinds", "use a literal default, or give the constant "
                      "a name no function assigns")


def _names(an: WalkState, func: FunctionInfo) -> None:
    module = an.module
    for name, node, use in func.loads:
        scope = func.defining_scope(name)
        if scope is not None:
            if use == "value" and name in scope.children and \
                    scope.bindings[name][0].kind == "def":
                _function_value(an, node, name)
            continue
        if name in module.functions:
            if use == "value":
                _function_value(an, node, name)
            continue
        if name in module.constants:
            if use == "data":
                an.report("R08", node, f"module-level constant `{name}` is mutated",
                          "module constants are read-only; copy it into a local first, "
                          f"e.g. `items = list({name})`")
            continue
        if name in BUILTINS:
            continue
        if name in FORBIDDEN_BUILTINS:
            an.report("R08", node, f"`{name}` is not an allowed builtin",
                      "allowed builtins: " + ", ".join(sorted(BUILTINS)))
        else:
            an.report("R08", node, f"`{name}` is not defined in the script: a free name is a "
                      "hidden input", "use a local variable, a parameter, a module-level "
                      "literal constant, a script function or an allowed builtin")


def _function_value(an: WalkState, node: ast.AST, name: str) -> None:
    an.report("R08", node, f"function `{name}` is used as a value",
              "call it, or pass it as a ctx.pipeline stage or a ctx.dag task")


def _opaque(expr: ast.expr, func: FunctionInfo, module: ModuleInfo, depth: int) -> bool:
    if depth > 10:
        return False
    if isinstance(expr, ast.GeneratorExp | ast.Lambda):
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        name = expr.func.id
        target = func.lookup_function(name, module)
        if target is not None:
            return target.is_async
        return name in ITERATORS and func.defining_scope(name) is None
    if isinstance(expr, ast.List | ast.Tuple | ast.Set):
        return any(_opaque(e, func, module, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return any(_opaque(v, func, module, depth + 1) for v in expr.values)
    if isinstance(expr, ast.Name):
        scope = func.defining_scope(expr.id)
        if scope is None:
            return False
        return any(b.value is not None and _opaque(b.value, scope, module, depth + 1)
                   for b in scope.bindings[expr.id])
    return False


def _recursion(an: WalkState) -> None:
    seen: set[frozenset[int]] = set()
    state: dict[int, int] = {}
    for root in an.module.all_functions:
        if state.get(id(root)):
            continue
        stack: list[tuple[FunctionInfo, int]] = [(root, 0)]
        path: list[FunctionInfo] = []
        while stack:
            func, index = stack.pop()
            if index == 0:
                state[id(func)] = 1
                path.append(func)
            if index < len(func.callees):
                stack.append((func, index + 1))
                callee = func.callees[index][0]
                if state.get(id(callee)) == 1:
                    cycle = path[path.index(callee):]
                    key = frozenset(id(f) for f in cycle)
                    if key not in seen:
                        seen.add(key)
                        names = " -> ".join(f.qual for f in [*cycle, callee])
                        an.report("R09", func.callees[index][1], f"recursion: {names}",
                                  "the call graph must be acyclic; use a bounded loop instead")
                elif not state.get(id(callee)):
                    stack.append((callee, 0))
            else:
                state[id(func)] = 2
                path.pop()
