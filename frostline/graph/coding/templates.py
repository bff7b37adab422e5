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

Each candidate is one SEARCH/REPLACE edit whose SEARCH is the original line (with the lines
before it when the line alone is not unique in the file), checked to parse and to change the
AST. Nothing runs here: candidates are screened by the tests elsewhere.
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


def line_edits(file: str, source: str, line: int) -> list[dict[str, str]]:
    """Single-site candidate edits of `file` at `line` (1-based), each a SEARCH/REPLACE dict
    with its operator, in operator order, without duplicates or no-ops."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        return []
    original = ast.dump(tree)
    search, first = _search_context(lines, line - 1)
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for rw in rewrites(tree, line):
        new_line = _splice(lines[line - 1], rw.node, rw.text)
        if new_line in seen or new_line == lines[line - 1]:
            continue
        seen.add(new_line)
        candidate = "".join(lines[:line - 1]) + new_line + "".join(lines[line:])
        try:
            if ast.dump(ast.parse(candidate)) == original:
                continue
        except SyntaxError:
            continue
        replace = "".join(lines[first:line - 1]) + new_line
        out.append({"file": file, "search": search, "replace": replace,
                    "operator": rw.operator, "line": str(line)})
    return out
