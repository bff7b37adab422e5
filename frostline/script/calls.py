"""Calls in the checker's walk: ctx primitives, helper calls, builtins and data methods.

One of the walk's visitors (frostline.script.walk names them): it owns what happens at a
call expression, which is where most rules meet (R02 ctx API, R05 containers, R10 ``_site``,
R12 consumption of awaitables, the accounting of list growth for R03, and the cost tree of
the spend bound). It hands every argument back to the expression visitor with the position
the call gives it.
"""

from __future__ import annotations

import ast
from typing import Protocol

from frostline.script.allowlists import (
    BUILTINS,
    DATA_METHODS,
    GROWING_METHODS,
    PRIMITIVES,
    SHRINKING_METHODS,
)
from frostline.script.costs import seq, times
from frostline.script.scope import Cost, FunctionInfo
from frostline.script.shapes import is_capability_call, is_ctx, is_ctx_attribute
from frostline.script.sites import SITE_KEYWORD
from frostline.script.walk import (
    APPEND,
    AWAIT,
    BIND,
    CONTAINER,
    ESCAPE,
    ITEM,
    LAMBDA_OK,
    PAYLOAD,
    SAFE,
    WalkState,
)


class Expressions(Protocol):
    """What the call visitor asks of the expression visitor (frostline.script.expressions)."""

    def expr(self, node: ast.expr, pos: int) -> Cost | None: ...
    def name(self, node: ast.Name, pos: int) -> None: ...


class CallWalk:
    """Visits call expressions; the expression visitor that owns it visits their parts."""

    def __init__(self, state: WalkState, expressions: Expressions) -> None:
        self.state = state
        self.expressions = expressions

    # ---- calls ---------------------------------------------------------------------
    def awaitable(self, call: ast.Call) -> bool:
        f = call.func
        if is_ctx_attribute(f):
            return f.attr in PRIMITIVES
        if isinstance(f, ast.Name):
            target = self.state.func.lookup_function(f.id, self.state.module)
            return target is not None and target.is_async
        return False

    def _consume(self, call: ast.Call, pos: int, what: str) -> None:
        if pos in (AWAIT, ITEM):
            return
        if pos in (BIND, APPEND) and self.state.bind_target is not None:
            self.state.func.pending.append((self.state.bind_target, call, what))
            return
        self.state.report("R12", call, f"{what} is created but never awaited (fire-and-forget)",
                          "await it, or hand it to `await ctx.parallel([...])`")
        if is_capability_call(call):
            self.state.report("R02", call, "`ctx.run(...)` is used without `await`",
                              'write `await ctx.run("cap", payload)`; the sync API is gone')

    def call(self, node: ast.Call, pos: int) -> Cost | None:
        f = node.func
        if is_ctx_attribute(f):
            self.state.ctx_scope(f.value)
            if f.attr not in PRIMITIVES:
                self.state.unknown_ctx(f)
                return seq(*self._args(node, ESCAPE))
            self._consume(node, pos, f"`ctx.{f.attr}(...)`")
            if f.attr == "run":
                return self._run(node)
            return self._container(node, f.attr)
        if isinstance(f, ast.Attribute):
            return self._method(node, f)
        if isinstance(f, ast.Name):
            target = self.state.func.lookup_function(f.id, self.state.module)
            if target is not None:
                return self._helper_call(node, target, pos)
            if f.id in BUILTINS and self.state.func.defining_scope(f.id) is None:
                return self._builtin_call(node, f)
            self.expressions.name(f, SAFE)
            return seq(*self._args(node, ESCAPE))
        return seq(self.expressions.expr(f, SAFE), *self._args(node, ESCAPE))

    def _args(self, node: ast.Call, pos: int) -> list[Cost | None]:
        out = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                out.append(self.expressions.expr(arg.value, SAFE))
            elif is_ctx(arg):
                self.state.report("R02", arg, "`ctx` is passed to something that is not a script "
                                  "helper", "pass ctx only to your own helpers (parameter `ctx`)")
            else:
                out.append(self.expressions.expr(arg, pos))
        for kw in node.keywords:
            if is_ctx(kw.value):
                self.state.report("R02", kw.value, "`ctx` is passed to something that is not "
                                  "a script helper",
                                  "pass ctx only to your own helpers (parameter `ctx`)")
                continue
            out.append(self.expressions.expr(kw.value, pos))
        return out

    def _run(self, node: ast.Call) -> Cost | None:
        self.state.run_calls.append(node)
        self.state.mark_call()
        for kw in node.keywords:
            if kw.arg == SITE_KEYWORD:
                self.state.site_keywords += 1
                self.state.report("R10", kw, "`_site` is reserved for the host",
                                  "remove the `_site=` argument; the host annotates callsites")
            else:
                self.state.report("R02", kw.value, "`ctx.run` takes no keyword arguments",
                                  'call it as `await ctx.run("cap.name", {...payload...})`')
        if len(node.args) != 2 or any(isinstance(a, ast.Starred) for a in node.args):
            self.state.report("R02", node, "`ctx.run` takes exactly (capability, payload)",
                              'call it as `await ctx.run("cap.name", {...payload...})`')
        costs = []
        before = len(self.state.run_calls)
        for arg in node.args:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            costs.append(self.expressions.expr(value, PAYLOAD))
        for kw in node.keywords:
            costs.append(self.expressions.expr(kw.value, SAFE))
        if len(self.state.run_calls) == before:
            self.state.leaf_runs.add(id(node))
        cap = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) else "<dynamic>"
        return seq(*costs, ("call", cap, node))

    def _container(self, node: ast.Call, kind: str) -> Cost | None:
        hint = {"parallel": "`await ctx.parallel([job0, job1, ...])`",
                "race": "`await ctx.race([job0, job1, ...])`",
                "pipeline": "`await ctx.pipeline(items, stage0, stage1, ...)`",
                "dag": '`await ctx.dag({"a": (fa, []), "b": (fb, ["a"])})`'}[kind]
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args \
                or (kind != "pipeline" and len(node.args) != 1) or len(node.args) < (2 if kind == "pipeline" else 1):
            self.state.report("R02", node, f"malformed `ctx.{kind}(...)` call",
                              f"call it as {hint}")
            return seq(*self._args(node, SAFE))
        first = node.args[0]
        if kind in ("parallel", "race"):
            cost = self.expressions.expr(first, CONTAINER)
            rec = self.state.open_loop(kind, first, node)
            self.state.ordered.append((first, self.state.func, kind))
            self.state.containers.append(rec)
            return cost
        if kind == "pipeline":
            cost = self.expressions.expr(first, SAFE)
            self.state.ordered.append((first, self.state.func, kind))
            rec = self.state.open_loop(kind, first, node)
            self.state.containers.append(rec)
            stages: list[Cost | None] = []
            for stage in node.args[1:]:
                stages.append(self._function_ref(stage, "a pipeline stage"))
            body = seq(*stages)
            return seq(cost, times([rec], body))
        # dag
        rec = self.state.open_loop("dag", first, node)
        self.state.containers.append(rec)
        if not isinstance(first, ast.Dict):
            self.state.report("R05", first, "`ctx.dag` needs a literal dict of tasks",
                              f"write the tasks inline: {hint}")
            return self.expressions.expr(first, SAFE)
        return self._dag(first)

    def _dag(self, tasks: ast.Dict) -> Cost | None:
        names: list[str] = []
        deps: dict[str, list[str]] = {}
        costs: list[Cost | None] = []
        for key, value in zip(tasks.keys, tasks.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                self.state.report("R05", key or value,
                                  "`ctx.dag` task names must be string literals",
                                  'write `{"name": (fn, ["dep", ...]), ...}`')
                costs.append(self.expressions.expr(value, SAFE))
                if key is not None:
                    costs.append(self.expressions.expr(key, SAFE))
                continue
            names.append(key.value)
            if not (isinstance(value, ast.Tuple) and len(value.elts) == 2
                    and isinstance(value.elts[1], ast.List | ast.Tuple)
                    and all(isinstance(d, ast.Constant) and isinstance(d.value, str)
                            for d in value.elts[1].elts)):
                self.state.report("R05", value, f"`ctx.dag` task {key.value!r} must be "
                                  "(function, [dependency names])", 'write `"name": (fn, ["dep"])`')
                costs.append(self.expressions.expr(value, SAFE))
                continue
            costs.append(self._function_ref(value.elts[0], "a dag task"))
            deps[key.value] = [d.value for d in value.elts[1].elts]  # type: ignore[attr-defined]
        known = set(names)
        for name, needs in deps.items():
            for dep in needs:
                if dep not in known:
                    self.state.report("R05", tasks, f"`ctx.dag` task {name!r} depends on unknown "
                                      f"task {dep!r}", "name only tasks of the same dag")
        cycle = _find_cycle(deps)
        if cycle:
            self.state.report("R05", tasks,
                              "`ctx.dag` has a dependency cycle: " + " -> ".join(cycle),
                              "remove one of the dependencies so the graph is acyclic")
        return seq(*costs)

    def _function_ref(self, node: ast.expr, what: str) -> Cost | None:
        if isinstance(node, ast.Name):
            target = self.state.func.lookup_function(node.id, self.state.module)
            if target is not None:
                self.state.func.loads.append((node.id, node, "function"))
                self.state.func.callees.append((target, node))
                if not target.is_async:
                    self.state.report("R02", node, f"{what} must be an `async def` helper",
                                      f"make `{node.id}` an `async def`")
                return ("helper", target)
        self.state.report("R02", node, f"{what} must be the name of an `async def` helper",
                          "define `async def step(x): ...` and pass `step`")
        return self.expressions.expr(node, SAFE)

    def _sync_ref(self, node: ast.expr) -> bool:
        """A plain `def` helper handed to map/filter or as `key=`: a call made by a builtin.

        An `async def` helper there would create coroutines nobody awaits (R12)."""
        if not isinstance(node, ast.Name):
            return False
        target = self.state.func.lookup_function(node.id, self.state.module)
        if target is None:
            return False
        self.state.func.loads.append((node.id, node, "function"))
        self.state.func.callees.append((target, node))
        if target.is_async:
            self.state.report("R12", node, f"`{node.id}` is async: map/filter/key would create "
                              "coroutines that are never awaited",
                              f"use a comprehension: `[await {node.id}(x) for x in xs[:N]]` or "
                              "`await ctx.parallel([...])`")
        return True

    def _helper_call(self, node: ast.Call, target: FunctionInfo, pos: int) -> Cost | None:
        func = self.state.func
        func.loads.append((target.qual.rsplit(".", 1)[-1], node.func, "call"))  # type: ignore[arg-type]
        func.callees.append((target, node))
        if target.is_async:
            self._consume(node, pos, f"the coroutine `{target.qual}(...)`")
        params = target.params
        costs: list[Cost | None] = []
        if "ctx" in params and (any(isinstance(a, ast.Starred) for a in node.args)
                                or any(k.arg is None for k in node.keywords)):
            self.state.report("R02", node, f"`{target.qual}` takes ctx, and `*`/`**` "
                              "arguments hide what its `ctx` parameter receives",
                              "pass `ctx` explicitly by position or as `ctx=ctx`")
        for index, arg in enumerate(node.args):
            param = params[index] if index < len(params) else None
            if is_ctx(arg):
                self.state.ctx_scope(arg)
                if param != "ctx":
                    self.state.report("R02", arg, f"`ctx` is passed to `{target.qual}` at a "
                                      f"parameter named `{param}`",
                                      "name the helper's parameter `ctx`")
            elif param == "ctx":
                self.state.report("R02", arg, f"`{target.qual}` receives something other than "
                                  "ctx in its `ctx` parameter", "pass `ctx` itself")
                costs.append(self.expressions.expr(arg, ESCAPE))
            elif isinstance(arg, ast.Starred):
                costs.append(self.expressions.expr(arg.value, ESCAPE))
            else:
                costs.append(self.expressions.expr(arg, ESCAPE))
        for kw in node.keywords:
            if is_ctx(kw.value):
                self.state.ctx_scope(kw.value)
                if kw.arg != "ctx":
                    self.state.report("R02", kw.value, "`ctx` is passed under another name",
                                      "pass it as `ctx=ctx` to a parameter named `ctx`")
            else:
                if kw.arg == "ctx":
                    self.state.report("R02", kw.value, f"`{target.qual}` receives something other "
                                      "than ctx in its `ctx` parameter", "pass `ctx` itself")
                costs.append(self.expressions.expr(kw.value, ESCAPE))
        return seq(*costs, ("helper", target))

    def _builtin_call(self, node: ast.Call, f: ast.Name) -> Cost | None:
        name = f.id
        self.state.func.loads.append((name, f, "call"))
        if name in ("list", "tuple", "dict") and node.args:
            self.state.ordered.append((node.args[0], self.state.func, name + "()"))
        if name == "str" and node.args:
            self.state.func.sinks.append(node.args[0])
        costs: list[Cost | None] = []
        multi = name in ("min", "max") and len(node.args) > 1
        for index, arg in enumerate(node.args):
            # min/max of several values return one of them; `sum([], start)` returns start.
            retained = multi or (name == "sum" and index == 1)
            if isinstance(arg, ast.Starred):
                costs.append(self.expressions.expr(arg.value, SAFE))
            elif isinstance(arg, ast.Lambda) and name in ("map", "filter") and index == 0:
                costs.append(self.expressions.expr(arg, LAMBDA_OK))
            elif name in ("map", "filter") and index == 0 and (self._sync_ref(arg)
                                                                or self._method_value(arg)):
                continue
            elif is_ctx(arg):
                self.state.report("R02", arg, f"`ctx` is passed to `{name}`",
                                  "use ctx only as `ctx.<primitive>(...)`")
            else:
                costs.append(self.expressions.expr(arg, ESCAPE if retained else SAFE))
        for kw in node.keywords:
            if isinstance(kw.value, ast.Lambda) and kw.arg == "key" and name in ("sorted", "min", "max"):
                costs.append(self.expressions.expr(kw.value, LAMBDA_OK))
            elif kw.arg == "key" and name in ("sorted", "min", "max") and (
                    self._sync_ref(kw.value) or self._method_value(kw.value)):
                continue
            else:
                # `dict(k=v)` stores v, `max(xs, default=v)` returns it.
                costs.append(self.expressions.expr(kw.value, ESCAPE))
        return seq(*costs)

    def _method_value(self, node: ast.expr) -> bool:
        """A data method taken without a call as a key or a map/filter function (`key=d.get`).

        It is only called, never formatted, so no address reaches a value. Methods that
        change their object stay out: they would grow or shrink it out of sight."""
        if not isinstance(node, ast.Attribute) or is_ctx(node.value) \
                or node.attr not in DATA_METHODS or node.attr in GROWING_METHODS \
                or node.attr in SHRINKING_METHODS:
            return False
        self.expressions.expr(node.value, SAFE)
        return True

    def _method(self, node: ast.Call, f: ast.Attribute) -> Cost | None:
        self.state.check_attribute(f)
        recv = f.value
        method = f.attr
        # `list.extend(xs, ys)` is xs.extend(ys): its first argument is the object it grows.
        unbound = isinstance(recv, ast.Name) and recv.id in _BUILTIN_TYPES
        grows_by_value = method in GROWING_METHODS and not isinstance(recv, ast.Name)
        # `(xs or ys).append(v)` grows xs: a receiver reached by value is retained.
        costs: list[Cost | None] = [self.expressions.expr(recv, ESCAPE if grows_by_value else SAFE)]
        if method in GROWING_METHODS and (unbound or not isinstance(recv, ast.Name)):
            self.state.module.untracked.append(node)  # `d["k"].append(x)`: no name counts it
        if isinstance(recv, ast.Name) and (method in GROWING_METHODS or method in SHRINKING_METHODS):
            arg = None
            if method in ("append", "extend", "update", "setdefault"):
                arg = node.args[0] if node.args else None
            if method == "insert" and len(node.args) == 2:
                arg = node.args[1]
            kind = "shrink" if method in SHRINKING_METHODS else method
            self.state.mutation(recv.id, kind, arg, recv)
        if method == "join" and node.args:
            self.state.ordered.append((node.args[0], self.state.func, "join"))
        if method == "pop" and not node.args:
            self.state.ordered.append((recv, self.state.func, "pop()"))
        saved = self.state.bind_target
        for index, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                costs.append(self.expressions.expr(arg.value, SAFE))
            elif is_ctx(arg):
                self.state.report("R02", arg, f"`ctx` is passed to `.{method}()`",
                                  "use ctx only as `ctx.<primitive>(...)`")
            elif method in ("append", "insert", "setdefault") and isinstance(recv, ast.Name) \
                    and (method == "append" or index == 1):
                self.state.bind_target = recv.id
                costs.append(self.expressions.expr(arg, APPEND))
                self.state.bind_target = saved
            elif unbound:
                costs.append(self.expressions.expr(arg, ESCAPE))
            elif method in ("extend", "update", "join"):
                costs.append(self.expressions.expr(arg, SAFE))
            else:
                # A stored item, or the default `get`/`pop` hand back: both are retained.
                keeps = method in GROWING_METHODS or method in ("get", "pop")
                costs.append(self.expressions.expr(arg, ESCAPE if keeps else SAFE))
        for kw in node.keywords:
            if isinstance(kw.value, ast.Lambda) and kw.arg == "key" and method == "sort":
                costs.append(self.expressions.expr(kw.value, LAMBDA_OK))
            elif kw.arg == "key" and method == "sort" and (self._sync_ref(kw.value)
                                                           or self._method_value(kw.value)):
                continue
            else:
                costs.append(self.expressions.expr(kw.value, ESCAPE))  # `d.update(k=v)` stores v
        return seq(*costs)


#: Builtin types whose methods a script may call unbound (`str.lower`, `list.extend`).
_BUILTIN_TYPES = frozenset({"str", "list", "dict", "set", "frozenset", "tuple"})


def _find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    for start in sorted(deps):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            needs = deps.get(node, [])
            if index < len(needs):
                stack.append((node, index + 1))
                nxt = needs[index]
                if state.get(nxt) == 1:
                    return [*path[path.index(nxt):], nxt]
                if not state.get(nxt) and nxt in deps:
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return None
