"""What every part of the checker's single walk shares: its state, positions and reports.

The walk is one pass, split by what it visits: calls (frostline.script.calls), expressions
(frostline.script.expressions), statements (frostline.script.statements), and the module
with its functions (frostline.script.rules, whose Analyzer is the assembled walk). Each part
extends the one below it; this base holds what all of them read and write: the function
being walked, the loops around the current node, the violations, and the references that
the resolution phase (frostline.script.resolve) decides once the whole script is known.
"""

from __future__ import annotations

import ast

from frostline.script.allowlists import DATA_METHODS, MIGRATIONS
from frostline.script.report import Violation
from frostline.script.scope import FunctionInfo, LoopRec, ModuleInfo, Mutation
from frostline.script.shapes import is_dunder
from frostline.script.source import char_col, depth_check

# Expression positions: where an expression stands decides whether an awaitable there is
# consumed (R12) and whether a name's value escapes.
ESCAPE = 0     # the value may be retained (stored, aliased, passed to a helper)
SAFE = 1       # read-only use
AWAIT = 2      # operand of await
CONTAINER = 3  # the list argument of ctx.parallel / ctx.race
ITEM = 4       # an element of that list
PAYLOAD = 5    # inside ctx.run's arguments (serialized for the host)
BIND = 6       # the value of `name = ...` (target in self.bind_target)
APPEND = 7     # the argument of `name.append(...)` (receiver in self.bind_target)
LAMBDA_OK = 8  # a place where a lambda is allowed
RETURN = 9     # the value of `return`, or an element of a display that is that value


class Walk:
    """The walk's state and the rules that calls, expressions and statements all apply."""

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
        self.lambdas = 0  # lambdas around the current node (they run an unknown number of times)

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

    # ---- bookkeeping for the resolution phase --------------------------------------
    def bind_target_name(self, node: ast.Name, kind: str, value: ast.expr | None) -> None:
        if node.id == "ctx":
            self.report("R02", node, "`ctx` is rebound", "never assign to `ctx`; it is the "
                        "host's object and only `ctx.<primitive>(...)` may use it")
        if is_dunder(node.id):
            self.report("R07", node, f"dunder name `{node.id}` is not allowed", "use a plain name")
        self.func.bind(node.id, kind, value, self.loops)

    def _mutation(self, name: str, method: str, arg: ast.expr | None, node: ast.Name) -> None:
        if name == "ctx":
            self.report("R02", node, "`ctx` is used as data",
                        "only `ctx.<primitive>(...)` may use ctx")
            return
        if self.lambdas and method != "shrink":
            # A lambda runs once per item of whatever calls it (a sort key, map, filter):
            # the loops around it do not count its calls.
            method, arg = "unknown", None
        self.func.mutation_refs.append((name, Mutation(method, arg, self.loops, self.func)))
        self.func.loads.append((name, node, "data"))

    def _loop(self, kind: str, expr: ast.expr | None, node: ast.AST) -> LoopRec:
        rec = LoopRec(kind, expr, self.func, self.loops, getattr(node, "lineno", 1),
                      char_col(self.lines, getattr(node, "lineno", 1), getattr(node, "col_offset", 0)))
        self.module.loops.append(rec)
        return rec

    # ---- ctx and attributes (R02, R07) ---------------------------------------------
    def _check_attr(self, node: ast.Attribute) -> None:
        if is_dunder(node.attr) or node.attr.startswith("_"):
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

    def _ctx_scope(self, node: ast.AST) -> None:
        """R02 unless the function being walked (or one around it) has a `ctx` parameter."""
        scope: FunctionInfo | None = self.func
        while scope is not None:
            if scope.has_ctx:
                return
            scope = scope.parent
        self.report("R02", node, f"`ctx` is not a parameter of `{self.func.qual}`",
                    "add `ctx` as the first parameter of the helper and pass it: "
                    "`await helper(ctx, ...)`")
