"""Statements in the checker's walk: assignments, loops, branches, ``try``, ``match``, ``def``.

The visitor of the walk (frostline.script.walk names them) that visits function bodies and
the statement lists in them, handing each expression to the expression visitor with the
position the statement gives it. It binds names (the bound analysis counts how a list
grows), opens the loops whose bounds R03 checks, rejects the statements the language leaves
out (R03 ``while``, R06 imports, R09 the rest) and combines the costs of a statement's parts:
a loop multiplies its body, and of the branches of an ``if``, the cases of a ``match`` and
the handlers of a ``try`` only one runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from frostline.script.allowlists import DATA_METHODS, EXCEPTION_NAMES
from frostline.script.calls import CallWalk
from frostline.script.costs import one_of, seq, times
from frostline.script.expressions import ExpressionWalk
from frostline.script.scope import Cost, FunctionInfo
from frostline.script.shapes import is_capability_call, is_dunder, is_literal
from frostline.script.source import MAX_AST_DEPTH, too_deep
from frostline.script.walk import AWAIT, BIND, ESCAPE, RETURN, SAFE, WalkState


class StatementWalk:
    """Visits a function's body, statement by statement (a nested `def` included)."""

    def __init__(self, state: WalkState, expressions: ExpressionWalk) -> None:
        self.state = state
        self.expressions = expressions
        self.calls: CallWalk = expressions.calls

    def block(self, stmts: list[ast.stmt]) -> Cost | None:
        return seq(*[self.stmt(s) for s in stmts])

    def stmt(self, node: ast.stmt) -> Cost | None:
        state = self.state
        depth = state.depth = state.depth + 1
        if depth > MAX_AST_DEPTH:
            raise too_deep(node)
        stack = state.stmt_stack
        stack.append(node)
        handler = _STATEMENTS.get(type(node))
        if handler is None:
            self._unsupported_stmt(node)
            cost = None
        else:
            cost = handler(self, node)
        stack.pop()
        state.depth = depth - 1
        return cost

    def _unsupported_stmt(self, node: ast.stmt) -> None:
        self.state.report("R09", node, f"`{type(node).__name__}` statements are not allowed",
                          "rewrite with plain assignments, loops and calls")
        self.state.skip(node)

    # ---- expressions and assignments -----------------------------------------------
    def _expr_stmt(self, node: ast.Expr) -> Cost | None:
        value = node.value
        if isinstance(value, ast.Call) and self.calls.awaitable(value):
            self.state.report("R12", value, "an awaitable is created and dropped "
                              "(fire-and-forget)", "put `await` in front of the call")
            if is_capability_call(value):
                self.state.report("R02", value, "`ctx.run(...)` is called without `await`",
                                  'write `await ctx.run("cap", payload)`; the sync API is gone')
            return self.expressions.expr(value, AWAIT)
        return self.expressions.expr(value, SAFE)

    def _assign(self, node: ast.Assign) -> Cost | None:
        self.state.func.alias_refs.extend(aliased_names(node.value))
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            cost = self._bound_value(node.value, name)
            self.state.bind_target_name(node.targets[0], "assign", node.value)
            return cost
        cost = self.expressions.expr(node.value, ESCAPE)
        kind = "alias" if len(node.targets) > 1 else "unpack"
        if any(isinstance(t, ast.Tuple | ast.List) for t in node.targets):
            self.state.ordered.append((node.value, self.state.func, "unpacking"))
        return seq(cost, *[self.expressions.target(t, kind, node.value) for t in node.targets])

    def _aug_assign(self, node: ast.AugAssign) -> Cost | None:
        cost = self.expressions.expr(node.value, ESCAPE)
        grows = _may_grow_in_place(node)
        if isinstance(node.target, ast.Name):
            self.state.bind_target_name(node.target, "aug", None)
            if grows:
                self.state.func.aug_refs.append(node.target.id)
            return cost
        if grows:
            self.state.module.untracked.append(node)  # `d["k"] += [...]` extends the item in place
        return seq(cost, self.expressions.target(node.target, "aug", None))

    def _ann_assign(self, node: ast.AnnAssign) -> Cost | None:
        self.expressions.annotation(node.annotation)
        if node.value is None:
            if isinstance(node.target, ast.Name):
                self.state.bind_target_name(node.target, "decl", None)
            return None
        self.state.func.alias_refs.extend(aliased_names(node.value))
        if isinstance(node.target, ast.Name):
            cost = self._bound_value(node.value, node.target.id)
            self.state.bind_target_name(node.target, "assign", node.value)
            return cost
        return seq(self.expressions.expr(node.value, ESCAPE),
                   self.expressions.target(node.target, "unpack", None))

    def _bound_value(self, value: ast.expr, name: str) -> Cost | None:
        saved = self.state.bind_target
        self.state.bind_target = name
        try:
            return self.expressions.expr(value, BIND)
        finally:
            self.state.bind_target = saved

    def _delete(self, node: ast.Delete) -> Cost | None:
        return seq(*[self.expressions.target(t, "del", None) for t in node.targets])

    # ---- loops ---------------------------------------------------------------------
    def _for(self, node: ast.For | ast.AsyncFor) -> Cost | None:
        if isinstance(node, ast.AsyncFor):
            self.state.report("R09", node, "`async for` is not allowed",
                              "iterate a bounded list with a plain `for`")
        head = self.expressions.expr(node.iter, SAFE)
        rec = self.state.open_loop("for", node.iter, node)
        self.state.ordered.append((node.iter, self.state.func, "for"))
        outer = self.state.loops
        self.state.loops = (*outer, rec)
        self.expressions.target(node.target, "for", None)
        body = self._loop_body(node.body)
        self.state.loops = outer
        orelse = self.block(node.orelse)
        return seq(head, times([rec], body), orelse)

    def _while(self, node: ast.While) -> Cost | None:
        self.state.report("R03", node, "`while` loops have no static bound",
                          "use `for i in range(N):` with a constant N and `break` when done")
        rec = self.state.open_loop("while", None, node)
        outer = self.state.loops
        self.state.loops = (*outer, rec)
        head = self.expressions.expr(node.test, SAFE)
        body = self._loop_body(node.body)
        self.state.loops = outer
        orelse = self.block(node.orelse)
        return seq(times([rec], seq(head, body)), orelse)

    def _loop_body(self, body: list[ast.stmt]) -> Cost | None:
        self.state.flow.append("loop")
        cost = self.block(body)
        self.state.flow.pop()
        return cost

    def _break(self, node: ast.Break | ast.Continue) -> None:
        if self.state.flow and self.state.flow[-1] == "finally":
            self._swallow(node, "break" if isinstance(node, ast.Break) else "continue")

    # ---- branches ------------------------------------------------------------------
    def _if(self, node: ast.If) -> Cost | None:
        head = self.expressions.expr(node.test, SAFE)
        return seq(head, one_of(self.block(node.body), self.block(node.orelse)))

    def _with(self, node: ast.With | ast.AsyncWith) -> Cost | None:
        if isinstance(node, ast.AsyncWith):
            self.state.report("R09", node, "`async with` is not allowed",
                              "scripts have no async context managers; remove the `async with`")
        costs: list[Cost | None] = []
        for item in node.items:
            costs.append(self.expressions.expr(item.context_expr, ESCAPE))
            if item.optional_vars is not None:
                costs.append(self.expressions.target(item.optional_vars, "with", None))
        return seq(*costs, self.block(node.body))

    def _match(self, node: ast.Match) -> Cost | None:
        # A capture pattern (`case x:`) binds the subject itself under a second name.
        captures = any(getattr(sub, "name", None) or getattr(sub, "rest", None)
                       for case in node.cases for sub in ast.walk(case.pattern))
        head = self.expressions.expr(node.subject, ESCAPE if captures else SAFE)
        cases: list[Cost | None] = []
        for case in node.cases:
            self._pattern(case.pattern)
            guard = None if case.guard is None else self.expressions.expr(case.guard, SAFE)
            cases.append(seq(guard, self.block(case.body)))
        return seq(head, one_of(*cases))

    def _pattern(self, pattern: ast.pattern) -> None:
        for sub in ast.walk(pattern):
            if isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
                self.state.func.bind(sub.name, "match", None, self.state.loops)
            elif isinstance(sub, ast.MatchMapping) and sub.rest:
                self.state.func.bind(sub.rest, "match", None, self.state.loops)
            elif isinstance(sub, ast.MatchValue):
                self.expressions.expr(sub.value, SAFE)
            elif isinstance(sub, ast.MatchClass):
                self.expressions.expr(sub.cls, SAFE)
                for attr in sub.kwd_attrs:
                    if is_dunder(attr) or attr not in DATA_METHODS:
                        self.state.report("R07", sub, f"class pattern reads attribute `{attr}`",
                                          "match on dicts and literals instead")
            elif isinstance(sub, ast.MatchMapping):
                for key in sub.keys:
                    self.expressions.expr(key, SAFE)

    # ---- exceptions ----------------------------------------------------------------
    def _try(self, node: ast.Try | ast.TryStar) -> Cost | None:
        if isinstance(node, ast.TryStar):
            self.state.report("R09", node, "`try/except*` is not allowed",
                              "use a plain `try/except Exception`")
        handlers: list[Cost | None] = []
        for handler in node.handlers:
            self._handler_type(handler)
            if handler.name is not None:
                self.state.func.bind(handler.name, "except", None, self.state.loops)
            handlers.append(self.block(handler.body))
        body = self.block(node.body)
        orelse = self.block(node.orelse)
        self.state.flow.append("finally")
        final = self.block(node.finalbody)
        self.state.flow.pop()
        return seq(body, one_of(*handlers), orelse, final)

    def _handler_type(self, handler: ast.ExceptHandler) -> None:
        if handler.type is not None:
            self.expressions.expr(handler.type, SAFE)
        if handler.type is None:
            self.state.report("R09", handler, "bare `except:` would swallow the host's stop signal",
                              "catch `Exception` (or a narrower class) instead")
            return
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for name in names:
            if isinstance(name, ast.Name) and name.id in EXCEPTION_NAMES:
                continue
            label = name.id if isinstance(name, ast.Name) else ast.unparse(name)
            self.state.report("R09", name, f"`except {label}` is not allowed",
                              "catch `Exception` or one of: " + ", ".join(sorted(EXCEPTION_NAMES)))

    def _raise(self, node: ast.Raise) -> Cost | None:
        return seq(None if node.exc is None else self.expressions.expr(node.exc, SAFE),
                   None if node.cause is None else self.expressions.expr(node.cause, SAFE))

    def _assert(self, node: ast.Assert) -> Cost | None:
        return seq(self.expressions.expr(node.test, SAFE),
                   None if node.msg is None else self.expressions.expr(node.msg, SAFE))

    def _return(self, node: ast.Return) -> Cost | None:
        if "finally" in self.state.flow:
            self._swallow(node, "return")
        return None if node.value is None else self.expressions.expr(node.value, RETURN)

    def _swallow(self, node: ast.stmt, word: str) -> None:
        self.state.report("R09", node, f"`{word}` inside `finally:` discards the exception in "
                          "flight, including the host's stop signal",
                          f"move the `{word}` out of the `finally:` block")

    # ---- definitions and statements the language leaves out ------------------------
    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        child = self.state.func.children.get(node.name)
        if child is not None and child.node is node:
            self.function(child)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.state.report("R06", node, "imports are not allowed",
                          "remove the import; every effect goes through `await ctx.run(...)`")

    def _global(self, node: ast.Global | ast.Nonlocal) -> None:
        kw = "global" if isinstance(node, ast.Global) else "nonlocal"
        self.state.report("R09", node, f"`{kw}` is not allowed",
                          "return values from helpers instead of rebinding outer names")

    def _class(self, node: ast.ClassDef) -> None:
        self.state.report("R09", node, "class definitions are not allowed",
                          "use dicts for data and functions for behaviour")
        self.state.skip(node)

    def _pass(self, node: ast.Pass) -> None:
        return None

    # ---- functions -----------------------------------------------------------------
    def function(self, info: FunctionInfo) -> None:
        """Walk a function: its decorators, defaults and annotations where the def stands,
        then its body with the function as the walk's scope."""
        node = info.node
        assert node is not None
        for dec in node.decorator_list:
            self.state.report("R09", dec, "decorators are not allowed", "remove the decorator")
            self.expressions.expr(dec, ESCAPE)
        # Defaults are evaluated where the def stands, in the enclosing scope.
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            if isinstance(default, ast.Name) and default.id in self.state.module.constants:
                # As good as its literal unless some function rebinds the name (decided once
                # every function is walked, in frostline.script.resolve).
                self.state.module.constant_defaults.append(default)
                self.expressions.expr(default, ESCAPE)
            elif not is_literal(default):
                self.state.report("R09", default, "parameter defaults must be literals",
                                  "use a literal default (a number, string, None), a module-level "
                                  "constant, or pass the value")
                self.expressions.expr(default, ESCAPE)
        a = node.args
        # Annotations, like defaults, are evaluated where the def stands.
        for param in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]:
            if param.annotation is not None:
                self.expressions.annotation(param.annotation)
        if node.returns is not None:
            self.expressions.annotation(node.returns)
        state = self.state
        saved = (state.func, state.loops, state.bind_target, state.stmt_stack, state.flow)
        state.func, state.loops, state.bind_target, state.stmt_stack, state.flow = (
            info, (), None, [], [])
        a = node.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        for extra in (a.vararg, a.kwarg):
            if extra is not None:
                every.append(extra)
        for param in every:
            if is_dunder(param.arg):
                self.state.report("R07", param, f"dunder name `{param.arg}` is not allowed",
                                  "use a plain parameter name")
            info.bind(param.arg, "param", None, ())
        if is_dunder(node.name):
            self.state.report("R07", node, f"dunder name `{node.name}` is not allowed",
                              "use a plain function name")
        self._predeclare(node.body, info)
        info.cost = self.block(node.body)
        state.func, state.loops, state.bind_target, state.stmt_stack, state.flow = saved

    def _predeclare(self, body: list[ast.stmt], info: FunctionInfo) -> None:
        """Register nested definitions first: a name's meaning does not depend on order."""
        stack = [body]
        while stack:
            for stmt in stack.pop():
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    if stmt.name in info.children:
                        self.state.report("R01", stmt,
                                          f"`{stmt.name}` is defined twice in `{info.qual}`",
                                          "give each helper its own name")
                        continue
                    info.children[stmt.name] = self.state.new_function(stmt, info)
                    info.bind(stmt.name, "def", None, ())
                elif not isinstance(stmt, ast.ClassDef):
                    for field in ("body", "orelse", "finalbody"):
                        sub = getattr(stmt, field, None)
                        if sub:
                            stack.append(sub)
                    for handler in getattr(stmt, "handlers", ()):
                        stack.append(handler.body)
                    for case in getattr(stmt, "cases", ()):
                        stack.append(case.body)


def aliased_names(value: ast.expr) -> list[str]:
    """The names whose object `target = value` binds to a second name (`ys = xs`,
    `ys = xs or []`): the bound analysis counts growth per name, so both lose their bound."""
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, ast.IfExp):
        return aliased_names(value.body) + aliased_names(value.orelse)
    if isinstance(value, ast.BoolOp):
        return [name for v in value.values for name in aliased_names(v)]
    if isinstance(value, ast.NamedExpr):
        return aliased_names(value.value)
    return []


def _may_grow_in_place(node: ast.AugAssign) -> bool:
    """Whether `target op= value` can grow a container in place (`+=`, `*=`, `|=`, `^=`).

    Adding a number cannot: a container plus a number is a TypeError."""
    if isinstance(node.op, ast.Add):
        value = node.value
        return not (isinstance(value, ast.Constant) and isinstance(value.value, int | float))
    return isinstance(node.op, ast.Mult | ast.BitOr | ast.BitXor)


#: The handler of every statement type; any other type is R09.
_STATEMENTS: dict[type[ast.stmt], Callable[[StatementWalk, Any], Cost | None]] = {
    ast.Expr: StatementWalk._expr_stmt,
    ast.Assign: StatementWalk._assign,
    ast.AugAssign: StatementWalk._aug_assign,
    ast.AnnAssign: StatementWalk._ann_assign,
    ast.Delete: StatementWalk._delete,
    ast.Return: StatementWalk._return,
    ast.For: StatementWalk._for,
    ast.AsyncFor: StatementWalk._for,
    ast.While: StatementWalk._while,
    ast.Break: StatementWalk._break,
    ast.Continue: StatementWalk._break,
    ast.If: StatementWalk._if,
    ast.With: StatementWalk._with,
    ast.AsyncWith: StatementWalk._with,
    ast.Match: StatementWalk._match,
    ast.Try: StatementWalk._try,
    ast.TryStar: StatementWalk._try,
    ast.Raise: StatementWalk._raise,
    ast.Assert: StatementWalk._assert,
    ast.FunctionDef: StatementWalk._def,
    ast.AsyncFunctionDef: StatementWalk._def,
    ast.ClassDef: StatementWalk._class,
    ast.Import: StatementWalk._import,
    ast.ImportFrom: StatementWalk._import,
    ast.Global: StatementWalk._global,
    ast.Nonlocal: StatementWalk._global,
    ast.Pass: StatementWalk._pass,
}
