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
    MAX_LOOP_BOUND,
    MAX_NESTED_PRODUCT,
)
from frostline.script.bounds import Bounds
from frostline.script.rules import Analyzer
from frostline.script.scope import FunctionInfo, LoopRec, ModuleInfo
from frostline.script.shapes import is_capability_call


def resolve(an: Analyzer, bounds: Bounds, max_fanout: int) -> None:
    module = an.module
    functions = module.all_functions
    for func in functions:
        for name, mutation in func.mutation_refs:
            scope = func.defining_scope(name)
            if scope is not None:
                scope.mutations.setdefault(name, []).append(mutation)
        for name in func.escape_refs:
            scope = func.defining_scope(name)
            if scope is not None:
                scope.escapes.add(name)
            elif name in module.constants:
                module.escaped.add(name)
        for name in func.consumed_refs:
            scope = func.defining_scope(name)
            if scope is not None:
                scope.consumed.add(name)
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
    _loops(an, bounds, max_fanout)
    for func in functions:
        for sink in func.sinks:
            if bounds.nondeterministic(sink, func):
                an.report("R04", sink, "formatting a set as text follows its hash order, "
                          "which is not deterministic", "format `sorted(...)` of the set")
    for expr, func, what in an.ordered:
        if bounds.nondeterministic(expr, func):
            an.report("R04", expr, f"{what} iterates a set, whose order is not deterministic",
                      "iterate `sorted(...)` of the set, or keep the items in a list")
    _recursion(an)


def _names(an: Analyzer, func: FunctionInfo) -> None:
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


def _function_value(an: Analyzer, node: ast.AST, name: str) -> None:
    an.report("R08", node, f"function `{name}` is used as a value",
              "call it, or pass it as a ctx.pipeline stage or a ctx.dag task")


def _loops(an: Analyzer, bounds: Bounds, max_fanout: int) -> None:
    for rec in an.module.loops:
        if rec.kind == "while":
            continue
        bound = bounds.loop(rec)
        node = _at(rec)
        if rec.kind in ("for", "comprehension"):
            label = "`for` loop" if rec.kind == "for" else "comprehension"
            if bound is None:
                an.report("R03", node, f"{label} over `{_src(rec.expr)}` has no static bound",
                          "iterate a slice with a constant bound (`xs[:6]`), `range(N)` with a "
                          "constant N, or a literal list")
            elif bound > MAX_LOOP_BOUND:
                an.report("R03", node, f"{label} bound {bound} exceeds the cap of "
                          f"{MAX_LOOP_BOUND}", f"iterate at most {MAX_LOOP_BOUND} items")
            else:
                product = bound
                for outer in rec.outer:
                    b = bounds.loop(outer)
                    product = product * b if b is not None else product
                if product > MAX_NESTED_PRODUCT and all(bounds.loop(o) is not None for o in rec.outer):
                    an.report("R03", node, f"nested loops run up to {product} iterations, above "
                              f"the cap of {MAX_NESTED_PRODUCT}", "shrink the loop bounds")
        else:
            if bound is None:
                an.report("R05", node, f"`ctx.{rec.kind}` fans out over `{_src(rec.expr)}`, "
                          "whose width is not statically bounded",
                          "fan out over a slice with a constant bound (`jobs[:8]`), a literal "
                          "list, or a comprehension over one")
            elif bound > max_fanout:
                an.report("R05", node, f"`ctx.{rec.kind}` fans out up to {bound} branches, above "
                          f"the maximum fanout of {max_fanout}",
                          f"split the work into batches of at most {max_fanout}")


class _At:
    def __init__(self, line: int, col_offset: int) -> None:
        self.lineno = line
        self.col_offset = col_offset


def _at(rec: LoopRec) -> ast.AST:
    node = rec.expr if rec.expr is not None else None
    if node is not None and rec.kind in ("for", "comprehension"):
        return node
    return _At(rec.line, 0)  # type: ignore[return-value]


def _src(expr: ast.expr | None) -> str:
    if expr is None:
        return "?"
    text = ast.unparse(expr)
    return text if len(text) <= 60 else text[:57] + "..."


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


def _recursion(an: Analyzer) -> None:
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
