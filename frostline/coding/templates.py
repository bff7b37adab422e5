"""The deterministic template generator's operators: single-site edits of one source line.

At a suspicious line, every expression that starts and ends on that line is offered each
applicable rewrite, in this order (the order is the generator's prior):

    comparison     <  <=  >  >=  ==  !=  is / is not  in / not in  (boundary swaps first)
    arithmetic     + -  * / //  %  **  << >>  & | ^ ; an augmented assignment's operator
    boolean        and <-> or
    negation       remove a `not`; add one to a condition, a returned test or an operand of
                   and/or; drop a unary minus
    constant       an integer +1 / -1, True <-> False
    off-by-one     drop a `+ 1` / `- 1`
    slice bound    a slice's lower or upper bound +1 / -1, or removed
    call           min <-> max, any <-> all
    return value   return the negation of a returned test

A site stands for the statement that starts on its line (coverage reports a statement spanning
several lines at its first), so the rewrites are offered on each line of that statement, the
site's own line first. Each candidate is one SEARCH/REPLACE edit of one line whose SEARCH is the
original line (with the lines before it when the line alone is not unique in the file), checked
to parse and to change the AST. Nothing runs here: candidates are screened by the tests elsewhere.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass

_REL = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: For each relational operator: boundary swap, direction swap, the rest.
_CMP_ORDER: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.Gt, ast.GtE, ast.NotEq, ast.Eq),
    ast.LtE: (ast.Lt, ast.GtE, ast.Gt, ast.Eq, ast.NotEq),
    ast.Gt: (ast.GtE, ast.Lt, ast.LtE, ast.NotEq, ast.Eq),
    ast.GtE: (ast.Gt, ast.LtE, ast.Lt, ast.Eq, ast.NotEq),
    ast.Eq: (ast.NotEq, ast.LtE, ast.GtE),
    ast.NotEq: (ast.Eq, ast.Lt, ast.Gt),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
}
_BIN_ORDER: dict[type[ast.operator], tuple[type[ast.operator], ...]] = {
    ast.Add: (ast.Sub, ast.Mult), ast.Sub: (ast.Add,), ast.Mult: (ast.Div, ast.FloorDiv, ast.Add),
    ast.Div: (ast.FloorDiv, ast.Mult), ast.FloorDiv: (ast.Div, ast.Mod, ast.Mult),
    ast.Mod: (ast.FloorDiv,), ast.Pow: (ast.Mult,), ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,), ast.BitAnd: (ast.BitOr,), ast.BitOr: (ast.BitAnd, ast.BitXor),
    ast.BitXor: (ast.BitOr,),
}
_CALL_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}
#: A statement longer than this is edited on its first lines only (long literals, mostly).
MAX_STATEMENT_LINES = 8


@dataclass(frozen=True)
class Rewrite:
    operator: str
    node: ast.AST  # the original node (for its span)
    text: str  # the replacement source of that span


def _one_line(node: ast.AST, line: int) -> bool:
    return getattr(node, "lineno", None) == line and getattr(node, "end_lineno", None) == line


def _compare(node: ast.Compare) -> Iterator[Rewrite]:
    for i, op in enumerate(node.ops):
        for alt in _CMP_ORDER.get(type(op), ()):
            new = copy.deepcopy(node)
            new.ops[i] = alt()
            yield Rewrite("comparison", node, ast.unparse(new))


def _binop(node: ast.BinOp) -> Iterator[Rewrite]:
    for alt in _BIN_ORDER.get(type(node.op), ()):
        new = copy.deepcopy(node)
        new.op = alt()
        yield Rewrite("arithmetic", node, ast.unparse(new))
    if isinstance(node.op, ast.Add | ast.Sub) and isinstance(node.right, ast.Constant) \
            and node.right.value == 1:
        yield Rewrite("off_by_one", node, ast.unparse(node.left))


def _constant(node: ast.Constant) -> Iterator[Rewrite]:
    v = node.value
    if isinstance(v, bool):
        yield Rewrite("constant", node, repr(not v))
    elif isinstance(v, int):
        yield Rewrite("constant", node, repr(v + 1))
        yield Rewrite("constant", node, repr(v - 1))


def _slice(node: ast.Slice) -> Iterator[Rewrite]:
    for part in ("lower", "upper"):
        bound = getattr(node, part)
        if bound is None:
            continue
        for delta in ("+ 1", "- 1"):
            new = copy.deepcopy(node)
            setattr(new, part, ast.parse(f"({ast.unparse(bound)}) {delta}", mode="eval").body)
            yield Rewrite("slice_bound", node, ast.unparse(new))
        new = copy.deepcopy(node)
        setattr(new, part, None)
        yield Rewrite("slice_bound", node, ast.unparse(new))


def _negation(node: ast.AST, tests: set[int]) -> Iterator[Rewrite]:
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)):
        yield Rewrite("negation", node, ast.unparse(node.operand))
    elif id(node) in tests:
        yield Rewrite("negation", node, f"not ({ast.unparse(node)})")


def _negated_operands(node: ast.BoolOp, line: int) -> Iterator[Rewrite]:
    for value in node.values:
        if _one_line(value, line) and not (isinstance(value, ast.UnaryOp)
                                           and isinstance(value.op, ast.Not)):
            yield Rewrite("negation", value, ast.unparse(ast.UnaryOp(ast.Not(), value)))


def rewrites(tree: ast.Module, line: int) -> Iterator[Rewrite]:
    """Every rewrite of an expression that lies on `line`, in the operator order above."""
    tests: set[int] = set()
    returns: list[ast.expr] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.If | ast.While | ast.IfExp | ast.Assert) and _one_line(n.test, line):
            tests.add(id(n.test))
        if isinstance(n, ast.Return) and n.value is not None and _one_line(n.value, line) \
                and isinstance(n.value, ast.Compare | ast.BoolOp | ast.Call):
            returns.append(n.value)
    nodes = [n for n in ast.walk(tree) if _one_line(n, line)]
    for n in nodes:
        if isinstance(n, ast.Compare):
            yield from _compare(n)
    for n in nodes:
        if isinstance(n, ast.BinOp):
            yield from _binop(n)
        elif isinstance(n, ast.AugAssign) and type(n.op) in _BIN_ORDER:
            for alt in _BIN_ORDER[type(n.op)]:
                new = copy.deepcopy(n)
                new.op = alt()
                yield Rewrite("arithmetic", n, ast.unparse(new))
    for n in nodes:
        if isinstance(n, ast.BoolOp):
            flipped = copy.deepcopy(n)
            flipped.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
            yield Rewrite("boolean", n, ast.unparse(flipped))
    for n in nodes:
        yield from _negation(n, tests)
    for n in ast.walk(tree):  # an operand of and/or on this line, its boolean operator anywhere
        if isinstance(n, ast.BoolOp):
            yield from _negated_operands(n, line)
    for n in nodes:
        if isinstance(n, ast.Constant):
            yield from _constant(n)
        elif isinstance(n, ast.Slice):
            yield from _slice(n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _CALL_SWAP:
            yield Rewrite("call", n.func, _CALL_SWAP[n.func.id])
    for r in returns:
        if id(r) not in tests:
            yield Rewrite("return_value", r, f"not ({ast.unparse(r)})")


def _splice(line_text: str, node: ast.AST, text: str) -> str:
    raw = line_text.encode("utf-8")
    start, end = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", 0)
    return (raw[:start] + text.encode("utf-8") + raw[end:]).decode("utf-8")


def _search_context(lines: list[str], index: int) -> tuple[str, int]:
    """The shortest run of lines ending at `index` that occurs once in the file, and its
    first line's index."""
    text = "".join(lines)
    first = index
    while first > 0 and text.count("".join(lines[first:index + 1])) > 1:
        first -= 1
    return "".join(lines[first:index + 1]), first


def statement_lines(tree: ast.Module, line: int) -> list[int]:
    """The lines whose expressions a site at `line` stands for: `line` itself, and when a
    simple statement (or a compound statement's header expression) starts there and goes on
    over further lines, those lines too. Coverage reports such a statement at its first line,
    while the bug may sit in any of its lines."""
    end = line
    for n in ast.walk(tree):
        if not isinstance(n, ast.stmt) or n.lineno != line:
            continue
        if isinstance(n, ast.If | ast.While):
            end = max(end, n.test.end_lineno or line)
        elif isinstance(n, ast.For | ast.AsyncFor):
            end = max(end, n.iter.end_lineno or line)
        elif isinstance(n, ast.With | ast.AsyncWith):
            end = max([end, *(i.context_expr.end_lineno or line for i in n.items)])
        elif not hasattr(n, "body"):
            end = max(end, n.end_lineno or line)
    return list(range(line, min(end, line + MAX_STATEMENT_LINES - 1) + 1))


def line_edits(file: str, source: str, line: int) -> list[dict[str, str]]:
    """Single-site candidate edits of `file` at `line` (1-based) and, when a statement starts
    there and spans further lines, at each of its lines: each a SEARCH/REPLACE dict with its
    operator, in operator order (the site's own line first), without duplicates or no-ops."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        return []
    original = ast.dump(tree)
    out: list[dict[str, str]] = []
    for target in statement_lines(tree, line):
        search, first = _search_context(lines, target - 1)
        seen: set[str] = set()
        for rw in rewrites(tree, target):
            new_line = _splice(lines[target - 1], rw.node, rw.text)
            if new_line in seen or new_line == lines[target - 1]:
                continue
            seen.add(new_line)
            candidate = "".join(lines[:target - 1]) + new_line + "".join(lines[target:])
            try:
                if ast.dump(ast.parse(candidate)) == original:
                    continue
            except SyntaxError:
                continue
            replace = "".join(lines[first:target - 1]) + new_line
            out.append({"file": file, "search": search, "replace": replace,
                        "operator": rw.operator, "line": str(target)})
    return out
