"""Where the checker's walk stands, and what it has found: the state its visitors share.

The walk is one pass over the script, done by three visitors that recurse into each other:
expressions with the calls among them (frostline.script.expressions, frostline.script.calls),
and statements with the function bodies they define (frostline.script.statements); the module
level drives them (frostline.script.rules). None of them keeps state of its own: each reads
and writes one `WalkState` — the function being walked, the loops around the current node,
the violations, and the references the resolution phase (frostline.script.resolve) decides
once the whole script is known. After the walk the state is the walk's record: resolution,
the limits and the checker's facts read it, and add their violations to it.
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
BIND = 6       # the value of `name = ...` (target in state.bind_target)
APPEND = 7     # the argument of `name.append(...)` (receiver in state.bind_target)
LAMBDA_OK = 8  # a place where a lambda is allowed
RETURN = 9     # the value of `return`, or an element of a display that is that value


class WalkState:
    """The walk's position and record, and the checks every visitor applies (R02, R07)."""

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

    def mark_call(self) -> None:
        """The statements being walked contain a capability call."""
        contains = self.contains
        for st in reversed(self.stmt_stack):
            key = id(st)
            if key in contains:
                break
            contains.add(key)

    def skip(self, node: ast.AST) -> None:
        """A subtree the walk does not descend into: bound its depth, assume it has calls."""
        depth_check(node, self.depth)
        if isinstance(node, ast.stmt):
            self.stmt_stack.append(node)
            self.mark_call()
            self.stmt_stack.pop()
        else:
            self.mark_call()

    # ---- reporting -----------------------------------------------------------------
    def report(self, rule: str, node: ast.AST, message: str, hint: str,
               severity: str = "error") -> None:
        line = getattr(node, "lineno", 1)
        col = char_col(self.lines, line, getattr(node, "col_offset", 0))
        self.violations.append(Violation(rule, severity, line, col, message, hint))  # type: ignore[arg-type]

    # ---- bookkeeping for the resolution phase --------------------------------------
    def new_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef,
                     parent: FunctionInfo | None) -> FunctionInfo:
        qual = node.name if parent is None else f"{parent.qual}.{node.name}"
        a = node.args
        params = [p.arg for p in [*a.posonlyargs, *a.args]]
        info = FunctionInfo(qual, node, parent, params=params,
                            is_async=isinstance(node, ast.AsyncFunctionDef))
        self.module.all_functions.append(info)
        return info

    def bind_target_name(self, node: ast.Name, kind: str, value: ast.expr | None) -> None:
        if node.id == "ctx":
            self.report("R02", node, "`ctx` is rebound", "never assign to `ctx`; it is the "
                        "host's object and only `ctx.<primitive>(...)` may use it")
        if is_dunder(node.id):
            self.report("R07", node, f"dunder name `{node.id}` is not allowed", "use a plain name")
        self.func.bind(node.id, kind, value, self.loops)

    def mutation(self, name: str, method: str, arg: ast.expr | None, node: ast.Name) -> None:
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

    def open_loop(self, kind: str, expr: ast.expr | None, node: ast.AST) -> LoopRec:
        rec = LoopRec(kind, expr, self.func, self.loops, getattr(node, "lineno", 1),
                      char_col(self.lines, getattr(node, "lineno", 1), getattr(node, "col_offset", 0)))
        self.module.loops.append(rec)
        return rec

    # ---- ctx and attributes (R02, R07) ---------------------------------------------
    def check_attribute(self, node: ast.Attribute) -> None:
        if is_dunder(node.attr) or node.attr.startswith("_"):
            self.report("R07", node, f"attribute `{node.attr}` is not allowed",
                        "private and dunder attributes reach interpreter internals")
        elif node.attr not in DATA_METHODS:
            if node.attr == "format" or node.attr == "format_map":
                hint = "use an f-string with plain names, e.g. f\"{name}\""
            else:
                hint = "only the data methods of str, list and dict may be used"
            self.report("R07", node, f"attribute `.{node.attr}` is outside the allowlist", hint)

    def unknown_ctx(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.report("R07", node, f"attribute `{node.attr}` is not allowed",
                        "private and dunder attributes reach interpreter internals")
        hint = MIGRATIONS.get(node.attr, "the ctx primitives are run, parallel, race, pipeline "
                              "and dag; call them with `await ctx.<primitive>(...)`")
        self.report("R02", node, f"`ctx.{node.attr}` is not part of the ctx API", hint)

    def ctx_scope(self, node: ast.AST) -> None:
        """R02 unless the function being walked (or one around it) has a `ctx` parameter."""
        scope: FunctionInfo | None = self.func
        while scope is not None:
            if scope.has_ctx:
                return
            scope = scope.parent
        self.report("R02", node, f"`ctx` is not a parameter of `{self.func.qual}`",
                    "add `ctx` as the first parameter of the helper and pass it: "
                    "`await helper(ctx, ...)`")
