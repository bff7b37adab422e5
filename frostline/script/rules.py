"""The checker's single walk over a parsed script (rules R01, R02, R06, R07, R09, R10 and the
raw material for R03, R04, R05, R08, R11, R12 and the spend bound).

``Analyzer`` is the assembled walk: it visits the module and its functions here and extends
the statement, expression and call parts below it (frostline.script.walk lists them). The
walk returns a cost tree for every function (frostline.script.costs builds them); the
resolution phase (frostline.script.resolve) turns its records into the remaining rules.

Decisions (kept strict on purpose; the tests pin each one):

- **ctx** is the parameter named ``ctx`` of ``orchestrate`` and of helpers that declare it
  (nested helpers may also read their parent's ``ctx`` as a closure). The only accepted uses
  are ``ctx.<primitive>(...)`` and passing ``ctx`` to a script function whose parameter at
  that position (or keyword) is named ``ctx``. Aliasing, storing, returning, formatting,
  rebinding or deleting ``ctx`` is R02, as is any attribute other than the five primitives.
- ``ctx.run`` takes exactly ``(capability, payload)`` positionally; ``_site`` is R10.
- **Positions**: every expression is visited with the position it occupies, which decides
  whether an awaitable there is consumed (R12) and whether a name's value escapes (aliasing
  makes a list's growth invisible to the bound analysis). An awaitable (a ``ctx``
  primitive call or a call of an ``async`` script function) is consumed when it is awaited,
  is an element of the list handed to ``ctx.parallel``/``ctx.race`` (a display or a
  comprehension), or is bound once to a name (or appended to a list name) that is itself
  awaited or handed to a container. A bare ``ctx.run(...)`` statement is the old sync API
  (R02); every other unconsumed awaitable is R12.
- **Functions** are values only as callees, as ``ctx.pipeline`` stages and as ``ctx.dag``
  tasks; anywhere else their value (and the value of an iterator, generator or lambda, once
  formatted as text) would expose a memory address, a hidden input (R08). Lambdas are allowed
  only as ``key=`` of ``sorted``/``min``/``max``/``.sort`` and as the function of
  ``map``/``filter``, and never touch ``ctx`` (R09). Definitions may appear in any block; a
  name defined twice in one scope is R01.
- **Module level** holds only function definitions, a docstring and literal constants
  (``NAME = <literal>``); constants are read-only (mutating one is R08).
"""

from __future__ import annotations

import ast

from frostline.script.scope import FunctionInfo
from frostline.script.shapes import is_dunder, is_literal
from frostline.script.statements import StatementRules
from frostline.script.walk import ESCAPE


class Analyzer(StatementRules):
    """Walks a module once, collecting violations, symbol tables, loops and costs."""

    # ---- module --------------------------------------------------------------------
    def run(self) -> None:
        body = self.tree.body
        defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for index, stmt in enumerate(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                if stmt.name in self.module.functions or stmt.name in self.module.constants:
                    self.report("R01", stmt, f"`{stmt.name}` is defined twice at module level",
                                "give each function and constant its own name")
                    continue
                info = self._new_function(stmt, None)
                self.module.functions[stmt.name] = info
                defs.append(stmt)
            elif (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                  and isinstance(stmt.value.value, str)):
                continue
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._module_constant(stmt)
            elif isinstance(stmt, ast.Import | ast.ImportFrom):
                self.report("R06", stmt, "imports are not allowed",
                            "remove the import; every effect goes through `await ctx.run(...)`")
            elif isinstance(stmt, ast.ClassDef):
                self.report("R09", stmt, "class definitions are not allowed",
                            "use dicts for data and functions for behaviour")
                self._skip(stmt)
            else:
                self._skip(stmt)
                self.report("R01", stmt,
                            f"top-level `{type(stmt).__name__}` statement is not allowed",
                            "the module may hold only function definitions, a docstring and "
                            "literal constants; move this code into orchestrate")
        self._check_orchestrate()
        for stmt in defs:
            self._function(self.module.functions[stmt.name])

    def _module_constant(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if isinstance(stmt, ast.AnnAssign):
            self._annotation(stmt.annotation)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or value is None \
                or not is_literal(value):
            self._skip(stmt)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or value is None:
            self.report("R01", stmt, "module-level assignments must be `NAME = <literal>`",
                        "assign one literal constant per statement, e.g. `MAX_SHOTS = 6`")
            return
        name = targets[0].id
        if is_dunder(name):
            self.report("R07", stmt, f"dunder name `{name}` is not allowed",
                        "use a plain name")
            return
        if not is_literal(value):
            self.report("R01", stmt, f"module-level constant `{name}` is not a literal",
                        "module-level values must be literals (numbers, strings, lists, "
                        "tuples, dicts of literals); compute values inside orchestrate")
            return
        if name in self.module.constants or name in self.module.functions:
            self.report("R01", stmt, f"`{name}` is defined twice at module level",
                        "give each function and constant its own name")
            return
        self.module.constants[name] = value

    def _check_orchestrate(self) -> None:
        info = self.module.functions.get("orchestrate")
        if info is None or info.node is None:
            self.report("R01", self.tree.body[0] if self.tree.body else self.tree,
                        "the script has no `async def orchestrate(ctx, args)`",
                        "define the entry point `async def orchestrate(ctx, args):`")
            return
        node = info.node
        if not isinstance(node, ast.AsyncFunctionDef):
            self.report("R01", node, "orchestrate must be `async def`",
                        "write `async def orchestrate(ctx, args):`")
        a = node.args
        names = [p.arg for p in a.args]
        if (names != ["ctx", "args"] or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg
                or a.defaults):
            self.report("R01", node, "orchestrate must take exactly the parameters (ctx, args)",
                        "write `async def orchestrate(ctx, args):` with no other parameters "
                        "or defaults")

    def _new_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef,
                      parent: FunctionInfo | None) -> FunctionInfo:
        qual = node.name if parent is None else f"{parent.qual}.{node.name}"
        a = node.args
        params = [p.arg for p in [*a.posonlyargs, *a.args]]
        info = FunctionInfo(qual, node, parent, params=params,
                            is_async=isinstance(node, ast.AsyncFunctionDef))
        self.module.all_functions.append(info)
        return info

    # ---- functions -----------------------------------------------------------------
    def _function(self, info: FunctionInfo) -> None:
        node = info.node
        assert node is not None
        for dec in node.decorator_list:
            self.report("R09", dec, "decorators are not allowed", "remove the decorator")
            self.expr(dec, ESCAPE)
        # Defaults are evaluated where the def stands, in the enclosing scope.
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            if isinstance(default, ast.Name) and default.id in self.module.constants:
                # As good as its literal unless some function rebinds the name (decided once
                # every function is walked, in frostline.script.resolve).
                self.module.constant_defaults.append(default)
                self.expr(default, ESCAPE)
            elif not is_literal(default):
                self.report("R09", default, "parameter defaults must be literals",
                            "use a literal default (a number, string, None), a module-level "
                            "constant, or pass the value")
                self.expr(default, ESCAPE)
        a = node.args
        # Annotations, like defaults, are evaluated where the def stands.
        for param in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]:
            if param.annotation is not None:
                self._annotation(param.annotation)
        if node.returns is not None:
            self._annotation(node.returns)
        saved = (self.func, self.loops, self.bind_target, self.stmt_stack, self.flow)
        self.func, self.loops, self.bind_target, self.stmt_stack, self.flow = info, (), None, [], []
        a = node.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        for extra in (a.vararg, a.kwarg):
            if extra is not None:
                every.append(extra)
        for param in every:
            if is_dunder(param.arg):
                self.report("R07", param, f"dunder name `{param.arg}` is not allowed",
                            "use a plain parameter name")
            info.bind(param.arg, "param", None, ())
        if is_dunder(node.name):
            self.report("R07", node, f"dunder name `{node.name}` is not allowed",
                        "use a plain function name")
        self._predeclare(node.body, info)
        info.cost = self.block(node.body)
        self.func, self.loops, self.bind_target, self.stmt_stack, self.flow = saved

    def _predeclare(self, body: list[ast.stmt], info: FunctionInfo) -> None:
        """Register nested definitions first: a name's meaning does not depend on order."""
        stack = [body]
        while stack:
            for stmt in stack.pop():
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    if stmt.name in info.children:
                        self.report("R01", stmt,
                                    f"`{stmt.name}` is defined twice in `{info.qual}`",
                                    "give each helper its own name")
                        continue
                    info.children[stmt.name] = self._new_function(stmt, info)
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
