"""Statements in the checker's walk: assignments, loops, branches, ``try``, ``match``.

The part of the walk (frostline.script.walk lists the parts) that visits statement lists.
It binds names (the bound analysis counts how a list grows), opens the loops whose bounds
R03 checks, rejects the statements the language leaves out (R03 ``while``, R06 imports,
R09 the rest) and combines the costs of a statement's parts: a loop multiplies its body,
and of the branches of an ``if``, the cases of a ``match`` and the handlers of a ``try``
only one runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from frostline.script.allowlists import DATA_METHODS, EXCEPTION_NAMES
from frostline.script.costs import one_of, seq, times
from frostline.script.expressions import ExpressionRules
from frostline.script.scope import Cost, FunctionInfo
from frostline.script.shapes import is_capability_call, is_dunder
from frostline.script.source import MAX_AST_DEPTH, too_deep
from frostline.script.walk import AWAIT, BIND, ESCAPE, RETURN, SAFE


class StatementRules(ExpressionRules):
    """The statement part of the checker's walk."""

    if TYPE_CHECKING:  # the function part of the walk (frostline.script.rules.Analyzer)
        def _function(self, info: FunctionInfo) -> None: ...

    def block(self, stmts: list[ast.stmt]) -> Cost | None:
        return seq(*[self.stmt(s) for s in stmts])

    def stmt(self, node: ast.stmt) -> Cost | None:
        depth = self.depth = self.depth + 1
        if depth > MAX_AST_DEPTH:
            raise too_deep(node)
        self.stmt_stack.append(node)
        handler = _STATEMENTS.get(type(node))
        if handler is None:
            self._unsupported_stmt(node)
            cost = None
        else:
            cost = handler(self, node)
        self.stmt_stack.pop()
        self.depth = depth - 1
        return cost

    def _unsupported_stmt(self, node: ast.stmt) -> None:
        self.report("R09", node, f"`{type(node).__name__}` statements are not allowed",
                    "rewrite with plain assignments, loops and calls")
        self._skip(node)

    # ---- expressions and assignments -----------------------------------------------
    def _expr_stmt(self, node: ast.Expr) -> Cost | None:
        value = node.value
        if isinstance(value, ast.Call) and self._awaitable(value):
            self.report("R12", value, "an awaitable is created and dropped "
                        "(fire-and-forget)", "put `await` in front of the call")
            if is_capability_call(value):
                self.report("R02", value, "`ctx.run(...)` is called without `await`",
                            'write `await ctx.run("cap", payload)`; the sync API is gone')
            return self.expr(value, AWAIT)
        return self.expr(value, SAFE)

    def _assign(self, node: ast.Assign) -> Cost | None:
        self.func.alias_refs.extend(aliased_names(node.value))
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            cost = self._bound_value(node.value, name)
            self.bind_target_name(node.targets[0], "assign", node.value)
            return cost
        cost = self.expr(node.value, ESCAPE)
        kind = "alias" if len(node.targets) > 1 else "unpack"
        if any(isinstance(t, ast.Tuple | ast.List) for t in node.targets):
            self.ordered.append((node.value, self.func, "unpacking"))
        return seq(cost, *[self.target(t, kind, node.value) for t in node.targets])

    def _aug_assign(self, node: ast.AugAssign) -> Cost | None:
        cost = self.expr(node.value, ESCAPE)
        grows = _may_grow_in_place(node)
        if isinstance(node.target, ast.Name):
            self.bind_target_name(node.target, "aug", None)
            if grows:
                self.func.aug_refs.append(node.target.id)
            return cost
        if grows:
            self.module.untracked.append(node)  # `d["k"] += [...]` extends the item in place
        return seq(cost, self.target(node.target, "aug", None))

    def _ann_assign(self, node: ast.AnnAssign) -> Cost | None:
        self._annotation(node.annotation)
        if node.value is None:
            if isinstance(node.target, ast.Name):
                self.bind_target_name(node.target, "decl", None)
            return None
        self.func.alias_refs.extend(aliased_names(node.value))
        if isinstance(node.target, ast.Name):
            cost = self._bound_value(node.value, node.target.id)
            self.bind_target_name(node.target, "assign", node.value)
            return cost
        return seq(self.expr(node.value, ESCAPE), self.target(node.target, "unpack", None))

    def _bound_value(self, value: ast.expr, name: str) -> Cost | None:
        saved = self.bind_target
        self.bind_target = name
        try:
            return self.expr(value, BIND)
        finally:
            self.bind_target = saved

    def _delete(self, node: ast.Delete) -> Cost | None:
        return seq(*[self.target(t, "del", None) for t in node.targets])

    # ---- loops ---------------------------------------------------------------------
    def _for(self, node: ast.For | ast.AsyncFor) -> Cost | None:
        if isinstance(node, ast.AsyncFor):
            self.report("R09", node, "`async for` is not allowed",
                        "iterate a bounded list with a plain `for`")
        head = self.expr(node.iter, SAFE)
        rec = self._loop("for", node.iter, node)
        self.ordered.append((node.iter, self.func, "for"))
        outer = self.loops
        self.loops = (*outer, rec)
        self.target(node.target, "for", None)
        body = self._loop_body(node.body)
        self.loops = outer
        orelse = self.block(node.orelse)
        return seq(head, times([rec], body), orelse)

    def _while(self, node: ast.While) -> Cost | None:
        self.report("R03", node, "`while` loops have no static bound",
                    "use `for i in range(N):` with a constant N and `break` when done")
        rec = self._loop("while", None, node)
        outer = self.loops
        self.loops = (*outer, rec)
        head = self.expr(node.test, SAFE)
        body = self._loop_body(node.body)
        self.loops = outer
        orelse = self.block(node.orelse)
        return seq(times([rec], seq(head, body)), orelse)

    def _loop_body(self, body: list[ast.stmt]) -> Cost | None:
        self.flow.append("loop")
        cost = self.block(body)
        self.flow.pop()
        return cost

    def _break(self, node: ast.Break | ast.Continue) -> None:
        if self.flow and self.flow[-1] == "finally":
            self._swallow(node, "break" if isinstance(node, ast.Break) else "continue")

    # ---- branches ------------------------------------------------------------------
    def _if(self, node: ast.If) -> Cost | None:
        head = self.expr(node.test, SAFE)
        return seq(head, one_of(self.block(node.body), self.block(node.orelse)))

    def _with(self, node: ast.With | ast.AsyncWith) -> Cost | None:
        if isinstance(node, ast.AsyncWith):
            self.report("R09", node, "`async with` is not allowed",
                        "scripts have no async context managers; remove the `async with`")
        costs: list[Cost | None] = []
        for item in node.items:
            costs.append(self.expr(item.context_expr, ESCAPE))
            if item.optional_vars is not None:
                costs.append(self.target(item.optional_vars, "with", None))
        return seq(*costs, self.block(node.body))

    def _match(self, node: ast.Match) -> Cost | None:
        # A capture pattern (`case x:`) binds the subject itself under a second name.
        captures = any(getattr(sub, "name", None) or getattr(sub, "rest", None)
                       for case in node.cases for sub in ast.walk(case.pattern))
        head = self.expr(node.subject, ESCAPE if captures else SAFE)
        cases: list[Cost | None] = []
        for case in node.cases:
            self._pattern(case.pattern)
            guard = None if case.guard is None else self.expr(case.guard, SAFE)
            cases.append(seq(guard, self.block(case.body)))
        return seq(head, one_of(*cases))

    def _pattern(self, pattern: ast.pattern) -> None:
        for sub in ast.walk(pattern):
            if isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
                self.func.bind(sub.name, "match", None, self.loops)
            elif isinstance(sub, ast.MatchMapping) and sub.rest:
                self.func.bind(sub.rest, "match", None, self.loops)
            elif isinstance(sub, ast.MatchValue):
                self.expr(sub.value, SAFE)
            elif isinstance(sub, ast.MatchClass):
                self.expr(sub.cls, SAFE)
                for attr in sub.kwd_attrs:
                    if is_dunder(attr) or attr not in DATA_METHODS:
                        self.report("R07", sub, f"class pattern reads attribute `{attr}`",
                                    "match on dicts and literals instead")
            elif isinstance(sub, ast.MatchMapping):
                for key in sub.keys:
                    self.expr(key, SAFE)

    # ---- exceptions ----------------------------------------------------------------
    def _try(self, node: ast.Try | ast.TryStar) -> Cost | None:
        if isinstance(node, ast.TryStar):
            self.report("R09", node, "`try/except*` is not allowed",
                        "use a plain `try/except Exception`")
        handlers: list[Cost | None] = []
        for handler in node.handlers:
            self._handler_type(handler)
            if handler.name is not None:
                self.func.bind(handler.name, "except", None, self.loops)
            handlers.append(self.block(handler.body))
        body = self.block(node.body)
        orelse = self.block(node.orelse)
        self.flow.append("finally")
        final = self.block(node.finalbody)
        self.flow.pop()
        return seq(body, one_of(*handlers), orelse, final)

    def _handler_type(self, handler: ast.ExceptHandler) -> None:
        if handler.type is not None:
            self.expr(handler.type, SAFE)
        if handler.type is None:
            self.report("R09", handler, "bare `except:` would swallow the host's stop signal",
                        "catch `Exception` (or a narrower class) instead")
            return
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for name in names:
            if isinstance(name, ast.Name) and name.id in EXCEPTION_NAMES:
                continue
            label = name.id if isinstance(name, ast.Name) else ast.unparse(name)
            self.report("R09", name, f"`except {label}` is not allowed",
                        "catch `Exception` or one of: " + ", ".join(sorted(EXCEPTION_NAMES)))

    def _raise(self, node: ast.Raise) -> Cost | None:
        return seq(None if node.exc is None else self.expr(node.exc, SAFE),
                   None if node.cause is None else self.expr(node.cause, SAFE))

    def _assert(self, node: ast.Assert) -> Cost | None:
        return seq(self.expr(node.test, SAFE),
                   None if node.msg is None else self.expr(node.msg, SAFE))

    def _return(self, node: ast.Return) -> Cost | None:
        if "finally" in self.flow:
            self._swallow(node, "return")
        return None if node.value is None else self.expr(node.value, RETURN)

    def _swallow(self, node: ast.stmt, word: str) -> None:
        self.report("R09", node, f"`{word}` inside `finally:` discards the exception in flight, "
                    "including the host's stop signal", f"move the `{word}` out of the "
                    "`finally:` block")

    # ---- definitions and statements the language leaves out ------------------------
    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        child = self.func.children.get(node.name)
        if child is not None and child.node is node:
            self._function(child)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.report("R06", node, "imports are not allowed",
                    "remove the import; every effect goes through `await ctx.run(...)`")

    def _global(self, node: ast.Global | ast.Nonlocal) -> None:
        kw = "global" if isinstance(node, ast.Global) else "nonlocal"
        self.report("R09", node, f"`{kw}` is not allowed",
                    "return values from helpers instead of rebinding outer names")

    def _class(self, node: ast.ClassDef) -> None:
        self.report("R09", node, "class definitions are not allowed",
                    "use dicts for data and functions for behaviour")
        self._skip(node)

    def _pass(self, node: ast.Pass) -> None:
        return None


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
_STATEMENTS: dict[type[ast.stmt], Callable[[StatementRules, Any], Cost | None]] = {
    ast.Expr: StatementRules._expr_stmt,
    ast.Assign: StatementRules._assign,
    ast.AugAssign: StatementRules._aug_assign,
    ast.AnnAssign: StatementRules._ann_assign,
    ast.Delete: StatementRules._delete,
    ast.Return: StatementRules._return,
    ast.For: StatementRules._for,
    ast.AsyncFor: StatementRules._for,
    ast.While: StatementRules._while,
    ast.Break: StatementRules._break,
    ast.Continue: StatementRules._break,
    ast.If: StatementRules._if,
    ast.With: StatementRules._with,
    ast.AsyncWith: StatementRules._with,
    ast.Match: StatementRules._match,
    ast.Try: StatementRules._try,
    ast.TryStar: StatementRules._try,
    ast.Raise: StatementRules._raise,
    ast.Assert: StatementRules._assert,
    ast.FunctionDef: StatementRules._def,
    ast.AsyncFunctionDef: StatementRules._def,
    ast.ClassDef: StatementRules._class,
    ast.Import: StatementRules._import,
    ast.ImportFrom: StatementRules._import,
    ast.Global: StatementRules._global,
    ast.Nonlocal: StatementRules._global,
    ast.Pass: StatementRules._pass,
}
