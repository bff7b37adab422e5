"""The checker's single walk over a parsed script (rules R01, R02, R06, R07, R09, R10 and the
raw material for R03, R04, R05, R08, R11, R12 and the spend bound).

``Analyzer`` is the walk: it visits the module level here and hands each function to the
statement visitor, which hands expressions to the expression and call visitors; all of them
share one `WalkState` (frostline.script.walk names the parts). The walk gives every function
a cost tree (frostline.script.costs builds them); the resolution phase
(frostline.script.resolve) turns the state it leaves into the remaining rules.

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

from frostline.script.expressions import ExpressionWalk
from frostline.script.shapes import is_dunder, is_literal
from frostline.script.statements import StatementWalk
from frostline.script.walk import WalkState


class Analyzer:
    """Walks a module once, collecting violations, symbol tables, loops and costs.

    Example: ``walk = Analyzer(tree, lines).run()``; ``walk.violations``, ``walk.module``
    """

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.state = WalkState(tree, lines)
        self.expressions = ExpressionWalk(self.state)
        self.statements = StatementWalk(self.state, self.expressions)

    # ---- module --------------------------------------------------------------------
    def run(self) -> WalkState:
        """Walk the module and return the walk's record."""
        body = self.state.tree.body
        module = self.state.module
        defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for index, stmt in enumerate(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                if stmt.name in module.functions or stmt.name in module.constants:
                    self.state.report("R01", stmt,
                                      f"`{stmt.name}` is defined twice at module level",
                                      "give each function and constant its own name")
                    continue
                info = self.state.new_function(stmt, None)
                module.functions[stmt.name] = info
                defs.append(stmt)
            elif (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                  and isinstance(stmt.value.value, str)):
                continue
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._module_constant(stmt)
            elif isinstance(stmt, ast.Import | ast.ImportFrom):
                self.state.report("R06", stmt, "imports are not allowed", "remove the import; "
                                  "every effect goes through `await ctx.run(...)`")
            elif isinstance(stmt, ast.ClassDef):
                self.state.report("R09", stmt, "class definitions are not allowed",
                                  "use dicts for data and functions for behaviour")
                self.state.skip(stmt)
            else:
                self.state.skip(stmt)
                self.state.report("R01", stmt,
                                  f"top-level `{type(stmt).__name__}` statement is not allowed",
                                  "the module may hold only function definitions, a docstring and "
                                  "literal constants; move this code into orchestrate")
        self._check_orchestrate()
        for stmt in defs:
            self.statements.function(self.state.module.functions[stmt.name])
        return self.state

    def _module_constant(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if isinstance(stmt, ast.AnnAssign):
            self.expressions.annotation(stmt.annotation)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or value is None \
                or not is_literal(value):
            self.state.skip(stmt)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or value is None:
            self.state.report("R01", stmt, "module-level assignments must be `NAME = <literal>`",
                              "assign one literal constant per statement, e.g. `MAX_SHOTS = 6`")
            return
        name = targets[0].id
        if is_dunder(name):
            self.state.report("R07", stmt, f"dunder name `{name}` is not allowed",
                              "use a plain name")
            return
        if not is_literal(value):
            self.state.report("R01", stmt, f"module-level constant `{name}` is not a literal",
                              "module-level values must be literals (numbers, strings, lists, "
                              "tuples, dicts of literals); compute values inside orchestrate")
            return
        if name in self.state.module.constants or name in self.state.module.functions:
            self.state.report("R01", stmt, f"`{name}` is defined twice at module level",
                              "give each function and constant its own name")
            return
        self.state.module.constants[name] = value

    def _check_orchestrate(self) -> None:
        info = self.state.module.functions.get("orchestrate")
        if info is None or info.node is None:
            tree = self.state.tree
            self.state.report("R01", tree.body[0] if tree.body else tree,
                              "the script has no `async def orchestrate(ctx, args)`",
                              "define the entry point `async def orchestrate(ctx, args):`")
            return
        node = info.node
        if not isinstance(node, ast.AsyncFunctionDef):
            self.state.report("R01", node, "orchestrate must be `async def`",
                              "write `async def orchestrate(ctx, args):`")
        a = node.args
        names = [p.arg for p in a.args]
        if (names != ["ctx", "args"] or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg
                or a.defaults):
            self.state.report("R01", node,
                              "orchestrate must take exactly the parameters (ctx, args)",
                              "write `async def orchestrate(ctx, args):` with no other parameters "
                              "or defaults")
