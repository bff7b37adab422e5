"""The checker's single walk over a parsed script (rules R01, R02, R06, R07, R09, R10 and the
raw material for R03, R04, R05, R08, R11, R12 and the spend bound).

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

from frostline.script.allowlists import (
    DATA_METHODS,
    EXCEPTION_NAMES,
    MIGRATIONS,
    PRIMITIVES,
)
from frostline.script.calls import (
    APPEND,
    AWAIT,
    BIND,
    CONTAINER,
    ESCAPE,
    ITEM,
    LAMBDA_OK,
    PAYLOAD,
    SAFE,
    CallRules,
    _is_run,
    _max,
    _seq,
    _times,
)
from frostline.script.report import Violation
from frostline.script.scope import Cost, FunctionInfo, LoopRec, ModuleInfo, Mutation
from frostline.script.source import MAX_AST_DEPTH, char_col, depth_check, too_deep

_TYPE_NAMES = frozenset({"str", "list", "dict"})
_LITERAL_TYPES = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.UnaryOp)
_ANNOTATION_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "set",
                               "frozenset"})
_DANGEROUS = frozenset({"open", "eval", "exec", "compile", "getattr", "setattr", "delattr",
                        "hasattr", "globals", "locals", "vars", "type", "id", "hash", "print",
                        "input", "__import__", "breakpoint", "help", "dir", "object", "super",
                        "memoryview", "bytearray", "bytes", "iter", "next", "aiter", "anext",
                        "repr", "format", "classmethod", "staticmethod", "property", "exit",
                        "quit", "callable", "chr", "ord", "ascii", "issubclass",
                        "BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"})


def is_literal(node: ast.AST) -> bool:
    """A module-level constant value: numbers, strings, and displays of literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, int | float)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k) for k in node.keys) and all(
            is_literal(v) for v in node.values)
    return False


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


class Analyzer(CallRules):
    """Walks a module once, collecting violations, symbol tables, loops and costs."""

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.tree = tree
        self.lines = lines
        self.module = ModuleInfo()
        self.violations: list[Violation] = []
        self.func: FunctionInfo = FunctionInfo("<module>", None, None)
        self.module.all_functions.append(self.func)
        self.loops: tuple[LoopRec, ...] = ()
        self.bind_target: str | None = None
        self.run_calls: list[ast.Call] = []
        self.containers: list[LoopRec] = []
        self.ordered: list[tuple[ast.expr, FunctionInfo, str]] = []  # R04 candidates
        self.depth = 0
        # Statements being walked, and the ids of those that contain a capability call
        # (conservatively: skipped subtrees count as containing one). σ assignment uses it
        # to skip the expressions of statements without calls.
        self.stmt_stack: list[ast.stmt] = []
        self.contains: set[int] = set()
        self.site_keywords = 0
        self.flow: list[str] = []  # enclosing "loop" bodies and "finally" blocks
        self.leaf_runs: set[int] = set()  # ctx.run calls with no capability call inside

    def _mark(self) -> None:
        contains = self.contains
        for st in reversed(self.stmt_stack):
            key = id(st)
            if key in contains:
                break
            contains.add(key)

    def _skip(self, node: ast.AST) -> None:
        """A subtree the walk does not descend into: bound its depth, assume it has calls."""
        depth_check(node, self.depth)
        if isinstance(node, ast.stmt):
            self.stmt_stack.append(node)
            self._mark()
            self.stmt_stack.pop()
        else:
            self._mark()

    # ---- reporting -----------------------------------------------------------------
    def report(self, rule: str, node: ast.AST, message: str, hint: str,
               severity: str = "error") -> None:
        line = getattr(node, "lineno", 1)
        col = char_col(self.lines, line, getattr(node, "col_offset", 0))
        self.violations.append(Violation(rule, severity, line, col, message, hint))  # type: ignore[arg-type]

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
        if _dunder(name):
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
            if not is_literal(default):
                self.report("R09", default, "parameter defaults must be literals",
                            "use a literal default (a number, string, None) or pass the value")
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
            if _dunder(param.arg):
                self.report("R07", param, f"dunder name `{param.arg}` is not allowed",
                            "use a plain parameter name")
            info.bind(param.arg, "param", None, ())
        if _dunder(node.name):
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

    def _annotation(self, node: ast.expr) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id not in _ANNOTATION_NAMES:
                    self.report("R08", sub, f"annotation names `{sub.id}`, which a script "
                                "cannot define (there are no imports)",
                                "annotate with builtin types only (str, int, list, dict, ...) "
                                "or drop the annotation")
            elif not isinstance(sub, ast.Constant | ast.Subscript | ast.Tuple | ast.List
                                | ast.BinOp | ast.BitOr | ast.Load | ast.expr_context):
                self.report("R09", sub, "annotations may only use names, subscripts and `|`",
                            "simplify or drop the annotation")
                self._skip(node)
                return

    # ---- statements ----------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> Cost | None:
        parts = [c for c in (self.stmt(s) for s in stmts) if c is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else ("seq", parts)

    def stmt(self, node: ast.stmt) -> Cost | None:
        depth = self.depth = self.depth + 1
        if depth > MAX_AST_DEPTH:
            raise too_deep(node)
        self.stmt_stack.append(node)
        cost = self._stmt(node)
        self.stmt_stack.pop()
        self.depth = depth - 1
        return cost

    def _stmt(self, node: ast.stmt) -> Cost | None:
        func = self.func
        if isinstance(node, ast.Expr):
            value = node.value
            if isinstance(value, ast.Call) and self._awaitable(value):
                self.report("R12", value, "an awaitable is created and dropped "
                            "(fire-and-forget)", "put `await` in front of the call")
                if _is_run(value):
                    self.report("R02", value, "`ctx.run(...)` is called without `await`",
                                'write `await ctx.run("cap", payload)`; the sync API is gone')
                return self.expr(value, AWAIT)
            return self.expr(value, SAFE)
        if isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                cost = self._bound_value(node.value, name)
                self.bind_target_name(node.targets[0], "assign", node.value)
                return cost
            cost = self.expr(node.value, ESCAPE)
            kind = "alias" if len(node.targets) > 1 else "unpack"
            if any(isinstance(t, ast.Tuple | ast.List) for t in node.targets):
                self.ordered.append((node.value, func, "unpacking"))
            return _seq(cost, *[self.target(t, kind, node.value) for t in node.targets])
        if isinstance(node, ast.AugAssign):
            cost = self.expr(node.value, ESCAPE)
            if isinstance(node.target, ast.Name):
                self.bind_target_name(node.target, "aug", None)
                return cost
            return _seq(cost, self.target(node.target, "aug", None))
        if isinstance(node, ast.AnnAssign):
            self._annotation(node.annotation)
            if node.value is None:
                if isinstance(node.target, ast.Name):
                    self.bind_target_name(node.target, "decl", None)
                return None
            if isinstance(node.target, ast.Name):
                cost = self._bound_value(node.value, node.target.id)
                self.bind_target_name(node.target, "assign", node.value)
                return cost
            return _seq(self.expr(node.value, ESCAPE), self.target(node.target, "unpack", None))
        if isinstance(node, ast.Return):
            if "finally" in self.flow:
                self._swallow(node, "return")
            return None if node.value is None else self.expr(node.value, SAFE)
        if isinstance(node, ast.For | ast.AsyncFor):
            if isinstance(node, ast.AsyncFor):
                self.report("R09", node, "`async for` is not allowed",
                            "iterate a bounded list with a plain `for`")
            head = self.expr(node.iter, SAFE)
            rec = self._loop("for", node.iter, node)
            self.ordered.append((node.iter, func, "for"))
            outer = self.loops
            self.loops = (*outer, rec)
            self.target(node.target, "for", None)
            body = self._loop_body(node.body)
            self.loops = outer
            orelse = self.block(node.orelse)
            return _seq(head, None if body is None else ("times", rec, body), orelse)
        if isinstance(node, ast.While):
            self.report("R03", node, "`while` loops have no static bound",
                        "use `for i in range(N):` with a constant N and `break` when done")
            rec = self._loop("while", None, node)
            outer = self.loops
            self.loops = (*outer, rec)
            head = self.expr(node.test, SAFE)
            body = self._loop_body(node.body)
            self.loops = outer
            orelse = self.block(node.orelse)
            inner = _seq(head, body)
            return _seq(None if inner is None else ("times", rec, inner), orelse)
        if isinstance(node, ast.If):
            head = self.expr(node.test, SAFE)
            return _seq(head, _max(self.block(node.body), self.block(node.orelse)))
        if isinstance(node, ast.With | ast.AsyncWith):
            if isinstance(node, ast.AsyncWith):
                self.report("R09", node, "`async with` is not allowed",
                            "scripts have no async context managers; remove the `async with`")
            costs: list[Cost | None] = []
            for item in node.items:
                costs.append(self.expr(item.context_expr, ESCAPE))
                if item.optional_vars is not None:
                    costs.append(self.target(item.optional_vars, "with", None))
            return _seq(*costs, self.block(node.body))
        if isinstance(node, ast.Try | ast.TryStar):
            if isinstance(node, ast.TryStar):
                self.report("R09", node, "`try/except*` is not allowed",
                            "use a plain `try/except Exception`")
            handlers: list[Cost | None] = []
            for handler in node.handlers:
                self._handler_type(handler)
                if handler.name is not None:
                    func.bind(handler.name, "except", None, self.loops)
                handlers.append(self.block(handler.body))
            body = self.block(node.body)
            orelse = self.block(node.orelse)
            self.flow.append("finally")
            final = self.block(node.finalbody)
            self.flow.pop()
            return _seq(body, _max(*handlers), orelse, final)
        if isinstance(node, ast.Match):
            head = self.expr(node.subject, SAFE)
            cases: list[Cost | None] = []
            for case in node.cases:
                self._pattern(case.pattern)
                guard = None if case.guard is None else self.expr(case.guard, SAFE)
                cases.append(_seq(guard, self.block(case.body)))
            return _seq(head, _max(*cases))
        if isinstance(node, ast.Raise):
            return _seq(None if node.exc is None else self.expr(node.exc, SAFE),
                        None if node.cause is None else self.expr(node.cause, SAFE))
        if isinstance(node, ast.Assert):
            return _seq(self.expr(node.test, SAFE),
                        None if node.msg is None else self.expr(node.msg, SAFE))
        if isinstance(node, ast.Delete):
            return _seq(*[self.target(t, "del", None) for t in node.targets])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            child = func.children.get(node.name)
            if child is not None and child.node is node:
                self._function(child)
            return None
        if isinstance(node, ast.Import | ast.ImportFrom):
            self.report("R06", node, "imports are not allowed",
                        "remove the import; every effect goes through `await ctx.run(...)`")
            return None
        if isinstance(node, ast.Global | ast.Nonlocal):
            kw = "global" if isinstance(node, ast.Global) else "nonlocal"
            self.report("R09", node, f"`{kw}` is not allowed",
                        "return values from helpers instead of rebinding outer names")
            return None
        if isinstance(node, ast.ClassDef):
            self.report("R09", node, "class definitions are not allowed",
                        "use dicts for data and functions for behaviour")
            self._skip(node)
            return None
        if isinstance(node, ast.Break | ast.Continue):
            if self.flow and self.flow[-1] == "finally":
                self._swallow(node, "break" if isinstance(node, ast.Break) else "continue")
            return None
        if isinstance(node, ast.Pass):
            return None
        self.report("R09", node, f"`{type(node).__name__}` statements are not allowed",
                    "rewrite with plain assignments, loops and calls")
        self._skip(node)
        return None

    def _swallow(self, node: ast.stmt, word: str) -> None:
        self.report("R09", node, f"`{word}` inside `finally:` discards the exception in flight, "
                    "including the host's stop signal", f"move the `{word}` out of the "
                    "`finally:` block")

    def _loop_body(self, body: list[ast.stmt]) -> Cost | None:
        self.flow.append("loop")
        cost = self.block(body)
        self.flow.pop()
        return cost

    def _bound_value(self, value: ast.expr, name: str) -> Cost | None:
        saved = self.bind_target
        self.bind_target = name
        try:
            return self.expr(value, BIND)
        finally:
            self.bind_target = saved

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
                    if _dunder(attr) or attr not in DATA_METHODS:
                        self.report("R07", sub, f"class pattern reads attribute `{attr}`",
                                    "match on dicts and literals instead")
            elif isinstance(sub, ast.MatchMapping):
                for key in sub.keys:
                    self.expr(key, SAFE)

    def bind_target_name(self, node: ast.Name, kind: str, value: ast.expr | None) -> None:
        if node.id == "ctx":
            self.report("R02", node, "`ctx` is rebound", "never assign to `ctx`; it is the "
                        "host's object and only `ctx.<primitive>(...)` may use it")
        if _dunder(node.id):
            self.report("R07", node, f"dunder name `{node.id}` is not allowed", "use a plain name")
        self.func.bind(node.id, kind, value, self.loops)

    def target(self, node: ast.expr, kind: str, value: ast.expr | None) -> Cost | None:
        """Bind or mutate through an assignment target; returns the cost of its sub-exprs."""
        if isinstance(node, ast.Name):
            self.bind_target_name(node, "del" if kind == "del" else
                                  ("unpack" if kind in ("unpack", "alias") and value is None
                                   else kind), value)
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return _seq(*[self.target(e, "unpack" if kind in ("assign", "alias") else kind, None)
                          for e in node.elts])
        if isinstance(node, ast.Starred):
            return self.target(node.value, kind, None)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name):
                method = "shrink" if kind in ("del", "aug") else "store"
                self._mutation(node.value.id, method, None, node.value)
                return _seq(self.expr(node.slice, SAFE))
            return _seq(self.expr(node.value, SAFE), self.expr(node.slice, SAFE))
        if isinstance(node, ast.Attribute):
            self.report("R07", node, f"assigning attribute `{node.attr}` is not allowed",
                        "store values in dicts: `d[\"key\"] = value`")
            return self.expr(node.value, SAFE)
        return self.expr(node, SAFE)

    def _mutation(self, name: str, method: str, arg: ast.expr | None, node: ast.Name) -> None:
        if name == "ctx":
            self.report("R02", node, "`ctx` is used as data",
                        "only `ctx.<primitive>(...)` may use ctx")
            return
        self.func.mutation_refs.append((name, Mutation(method, arg, self.loops, self.func)))
        self.func.loads.append((name, node, "data"))

    def _loop(self, kind: str, expr: ast.expr | None, node: ast.AST) -> LoopRec:
        rec = LoopRec(kind, expr, self.func, self.loops, getattr(node, "lineno", 1),
                      char_col(self.lines, getattr(node, "lineno", 1), getattr(node, "col_offset", 0)))
        self.module.loops.append(rec)
        return rec

    # ---- expressions ---------------------------------------------------------------
    def expr(self, node: ast.expr, pos: int) -> Cost | None:
        # Leaves first: they cannot nest, so they skip the depth bookkeeping.
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            self._name(node, pos)
            return None
        depth = self.depth = self.depth + 1
        if depth > MAX_AST_DEPTH:
            raise too_deep(node)
        try:  # zero-cost in 3.11 when nothing is raised
            return self._expr(node, pos)
        finally:
            self.depth = depth - 1

    def _expr(self, node: ast.expr, pos: int) -> Cost | None:
        if isinstance(node, ast.Call):
            return self._call(node, pos)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Await):
            if not self.func.is_async:
                self.report("R09", node, "`await` outside an `async def`",
                            "make the enclosing helper `async def`")
            return self.expr(node.value, AWAIT)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            inner = {CONTAINER: ITEM, BIND: BIND, PAYLOAD: PAYLOAD, ITEM: ESCAPE}.get(pos, ESCAPE)
            costs = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    self.ordered.append((elt.value, self.func, "unpacking"))
                    costs.append(self.expr(elt.value, SAFE))
                else:
                    costs.append(self.expr(elt, inner))
            return _seq(*costs)
        if isinstance(node, ast.Dict):
            inner = PAYLOAD if pos == PAYLOAD else ESCAPE
            costs = []
            for key, value in zip(node.keys, node.values, strict=True):
                if key is not None:
                    costs.append(self.expr(key, SAFE))
                costs.append(self.expr(value, inner if key is not None else SAFE))
            return _seq(*costs)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self._comprehension(node, pos)
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test, SAFE)
            return _seq(test, _max(self.expr(node.body, pos), self.expr(node.orelse, pos)))
        if isinstance(node, ast.BoolOp):
            return _seq(*[self.expr(v, pos) for v in node.values])
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant | ast.JoinedStr) \
                    and isinstance(getattr(node.left, "value", ""), str):
                self.func.sinks.append(node.right)
            return _seq(self.expr(node.left, SAFE), self.expr(node.right, SAFE))
        if isinstance(node, ast.UnaryOp):
            return self.expr(node.operand, SAFE)
        if isinstance(node, ast.Compare):
            return _seq(self.expr(node.left, SAFE), *[self.expr(c, SAFE) for c in node.comparators])
        if isinstance(node, ast.Subscript):
            return _seq(self.expr(node.value, SAFE), self.expr(node.slice, SAFE))
        if isinstance(node, ast.Slice):
            return _seq(*[self.expr(p, SAFE) for p in (node.lower, node.upper, node.step)
                          if p is not None])
        if isinstance(node, ast.JoinedStr):
            return _seq(*[self.expr(v, SAFE) for v in node.values])
        if isinstance(node, ast.FormattedValue):
            self.func.sinks.append(node.value)
            return _seq(self.expr(node.value, SAFE),
                        None if node.format_spec is None else self.expr(node.format_spec, SAFE))
        if isinstance(node, ast.NamedExpr):
            cost = self.expr(node.value, ESCAPE)
            self.bind_target_name(node.target, "walrus", node.value)
            return cost
        if isinstance(node, ast.Starred):
            return self.expr(node.value, SAFE)
        if isinstance(node, ast.Lambda):
            return self._lambda(node, pos)
        if isinstance(node, ast.Yield | ast.YieldFrom):
            self.report("R09", node, "`yield` is not allowed (no generators)",
                        "build a list and return it")
            return None
        self.report("R09", node, f"`{type(node).__name__}` expressions are not allowed",
                    "rewrite the expression with plain operations")
        self._skip(node)
        return None

    def _name(self, node: ast.Name, pos: int) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            self.bind_target_name(node, "unpack", None)
            return
        if name == "ctx":
            self.report("R02", node, "`ctx` is used as a value (aliased, stored, returned or "
                        "formatted)", "use ctx only as `ctx.<primitive>(...)` or pass it to a "
                        "helper whose parameter is named `ctx`")
            return
        if name[0] == "_" and _dunder(name):
            self.report("R07", node, f"dunder name `{name}` is not allowed",
                        "dunder names reach interpreter internals; use plain names")
        func = self.func
        func.loads.append((name, node, "value"))
        if pos in (ESCAPE, BIND, APPEND):
            func.escape_refs.append(name)
        elif pos in (AWAIT, CONTAINER, ITEM):
            func.consumed_refs.append(name)

    def _attribute(self, node: ast.Attribute) -> Cost | None:
        value = node.value
        if isinstance(value, ast.Name) and value.id == "ctx":
            self._ctx_scope(value)
            if node.attr in PRIMITIVES:
                self.report("R02", node, f"`ctx.{node.attr}` is used without being called",
                            f"call it directly: `await ctx.{node.attr}(...)`")
            else:
                self._unknown_ctx(node)
            return None
        self._check_attr(node)
        if node.attr in DATA_METHODS and not (isinstance(value, ast.Name)
                                              and value.id in _TYPE_NAMES
                                              and self.func.defining_scope(value.id) is None):
            # Every allowlisted attribute is a method; taken without a call it is a bound
            # method whose text carries a memory address. `str.strip` (unbound) is fine.
            self.report("R08", node, f"method `.{node.attr}` is used as a value (its text "
                        "carries a memory address, a hidden input)",
                        f"call it: `.{node.attr}(...)`, or use `str.{node.attr}` / a lambda")
        return self.expr(value, SAFE)

    def _check_attr(self, node: ast.Attribute) -> None:
        if _dunder(node.attr) or node.attr.startswith("_"):
            self.report("R07", node, f"attribute `{node.attr}` is not allowed",
                        "private and dunder attributes reach interpreter internals")
        elif node.attr not in DATA_METHODS:
            if node.attr == "format" or node.attr == "format_map":
                hint = "use an f-string with plain names, e.g. f\"{name}\""
            else:
                hint = "only the data methods of str, list and dict may be used"
            self.report("R07", node, f"attribute `.{node.attr}` is outside the allowlist", hint)

    def _unknown_ctx(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.report("R07", node, f"attribute `{node.attr}` is not allowed",
                        "private and dunder attributes reach interpreter internals")
        hint = MIGRATIONS.get(node.attr, "the ctx primitives are run, parallel, race, pipeline "
                              "and dag; call them with `await ctx.<primitive>(...)`")
        self.report("R02", node, f"`ctx.{node.attr}` is not part of the ctx API", hint)

    def _ctx_scope(self, node: ast.Name) -> None:
        scope: FunctionInfo | None = self.func
        while scope is not None:
            if scope.has_ctx:
                return
            scope = scope.parent
        self.report("R02", node, f"`ctx` is not a parameter of `{self.func.qual}`",
                    "add `ctx` as the first parameter of the helper and pass it: "
                    "`await helper(ctx, ...)`")

    def _lambda(self, node: ast.Lambda, pos: int) -> Cost | None:
        if pos != LAMBDA_OK:
            self.report("R09", node, "lambda is only allowed as `key=` of sorted/min/max or as "
                        "the function of map/filter", "define a helper function instead")
        for sub in ast.walk(node.body):
            if isinstance(sub, ast.Name) and sub.id == "ctx":
                self.report("R09", node, "a lambda must not use ctx",
                            "call ctx from an `async def` helper instead")
                self._skip(node.body)
                return None
        a = node.args
        for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
            if not is_literal(default):
                self.report("R09", default, "lambda defaults must be literals",
                            "use the value inside the lambda body instead")
            self.expr(default, ESCAPE)
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
            self.func.bind(p.arg, "lambda", None, self.loops)
        self.expr(node.body, SAFE)
        return None

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                       pos: int) -> Cost | None:
        outer = self.loops
        costs: list[Cost | None] = []
        recs: list[LoopRec] = []
        for gen in node.generators:
            if gen.is_async:
                self.report("R09", gen.iter, "`async for` in a comprehension is not allowed",
                            "iterate a bounded list with a plain comprehension")
            costs.append(self.expr(gen.iter, SAFE))
            self.ordered.append((gen.iter, self.func, "comprehension"))
            rec = self._loop("comprehension", gen.iter, gen.iter)
            recs.append(rec)
            self.loops = (*self.loops, rec)
            self.target(gen.target, "comp", None)
            inner = [self.expr(c, SAFE) for c in gen.ifs]
            if any(c is not None for c in inner):
                costs.append(_times(recs, _seq(*inner)))
        elt_pos = {CONTAINER: ITEM, BIND: BIND}.get(pos, SAFE)
        if isinstance(node, ast.DictComp):
            body = _seq(self.expr(node.key, SAFE), self.expr(node.value, ESCAPE))
        else:
            body = self.expr(node.elt, elt_pos)
        self.loops = outer
        return _seq(*costs, _times(recs, body))
