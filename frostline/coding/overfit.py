"""Guards against overfit patches, from evidence the workflow may see (the base tree and the
candidate; never the hidden tests).

A patch can make the visible failing tests pass by switching the code off: a loop condition
made constant-false (`while not (True):`), an `if` test replaced by `True` or `False`, a
computed condition replaced by `return False`. Where no passing test runs the changed line,
nothing visible objects, and the patch is accepted and wrong. Two guards:

    degenerate(base, new)   the rewrites of a decision into a constant, each with its line:
                            an if/elif/ternary/assert test that was computed in the base and is
                            a constant after; a while test that becomes constant-false; a
                            return value that was computed and becomes True or False. A
                            constant changed into another constant (`return True` made
                            `return False`, `while False:` made `while True:`) is not one: it
                            is how a flipped literal is fixed.
    change_size(candidate)  how much a candidate changes: the characters removed plus added
                            over its edits, compared as Python tokens (string literals by value,
                            so a rewrite that only requotes a string costs nothing; one space
                            between tokens). An operator nudged (`>=` to `>`: 1) costs less
                            than a condition negated (`not `: 4), which costs less than a
                            condition replaced by a constant. `smallest_first` orders a pool by
                            it within each site, keeping the sites in the localization's order
                            (which statement is faulty is the localization's evidence, not the
                            size's).
"""

from __future__ import annotations

import ast
import difflib
import io
import operator
import re
import tokenize
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["change_size", "degenerate", "smallest_first"]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_UNKNOWN = object()
_LAYOUT = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
           tokenize.ENDMARKER}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _normal(text: str) -> str:
    """`text` as its Python tokens joined by one space, string literals by value (`repr`);
    a fragment that does not tokenize is split into words and symbols instead."""
    out: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _LAYOUT:
                continue
            if tok.type == tokenize.STRING:
                try:
                    out.append(repr(ast.literal_eval(tok.string)))
                    continue
                except (ValueError, SyntaxError):
                    pass
            out.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        out = _TOKEN.findall(text)
    return " ".join(out)


def change_size(candidate: Mapping[str, Any]) -> int:
    """Characters removed plus characters added by the candidate's search/replace edits,
    compared in their normal form (`_normal`)."""
    size = 0
    for edit in candidate.get("edits", ()):
        a = _normal(str(edit.get("search", "")))
        b = _normal(str(edit.get("replace", "")))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False
                                                           ).get_opcodes():
            if tag != "equal":
                size += (i2 - i1) + (j2 - j1)
    return size


def smallest_first(pool: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`pool` with each site's candidates ordered by change size (stable), the sites kept in
    the order they first appear."""
    items = list(pool)
    first: dict[str, int] = {}
    for i, c in enumerate(items):
        first.setdefault(str(c.get("site", "")), i)
    return [c for _, _, _, c in sorted(
        (first[str(c.get("site", ""))], change_size(c), i, c) for i, c in enumerate(items))]


def _fold(node: ast.expr) -> Any:
    """The constant value of an expression made of literals only, else _UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = _fold(node.operand)
        return _UNKNOWN if v is _UNKNOWN else not v
    if isinstance(node, ast.BoolOp):
        values = [_fold(v) for v in node.values]
        if any(v is _UNKNOWN for v in values):
            return _UNKNOWN
        result = values[0]
        for v in values[1:]:
            result = (result and v) if isinstance(node.op, ast.And) else (result or v)
        return result
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = _fold(node.left), _fold(node.comparators[0])
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        try:
            return _COMPARE[type(node.ops[0])](left, right)
        except TypeError:
            return _UNKNOWN
    return _UNKNOWN


def _decisions(tree: ast.AST) -> dict[int, list[tuple[str, ast.expr]]]:
    """Line -> the decisions made there: (kind, expression) of if/while/ternary/assert tests
    and return values."""
    out: dict[int, list[tuple[str, ast.expr]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            kind = type(node).__name__.lower()
            out.setdefault(node.test.lineno, []).append((kind, node.test))
        elif isinstance(node, ast.Return) and node.value is not None:
            out.setdefault(node.lineno, []).append(("return", node.value))
    return out


def _line_map(base: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """1-based new line -> the base line it replaced or kept (lines a hunk inserted beyond
    the ones it replaced have none)."""
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, base, new, autojunk=False
                                                       ).get_opcodes():
        if tag in ("equal", "replace"):
            for j in range(j1, j2):
                i = i1 + (j - j1)
                if i < i2:
                    mapping[j + 1] = i + 1
    return mapping


def _why(kind: str, before: ast.expr, after: ast.expr, value: Any) -> str | None:
    was = _fold(before)
    if kind == "while":
        if not value and (was is _UNKNOWN or bool(was) != bool(value)):
            return "a loop condition made constant-false (the loop never runs)"
        return None
    if was is not _UNKNOWN:
        return None  # a constant changed into another: how a flipped literal is fixed
    if kind == "return":
        return "a computed return value replaced by a constant" if isinstance(value, bool) \
            else None
    return "a condition replaced by a constant"


def degenerate(base: str, new: str) -> list[str]:
    """The degenerate rewrites `new` makes of `base` (one module's texts), one line each;
    empty when there are none or either text does not parse."""
    try:
        before, after = ast.parse(base), ast.parse(new)
    except SyntaxError:
        return []
    base_lines, new_lines = base.splitlines(), new.splitlines()
    ops = difflib.SequenceMatcher(None, base_lines, new_lines, autojunk=False).get_opcodes()
    changed = {j + 1 for tag, _, _, j1, j2 in ops if tag != "equal" for j in range(j1, j2)}
    mapping = _line_map(base_lines, new_lines)
    was = _decisions(before)
    found: list[str] = []
    for line, decisions in sorted(_decisions(after).items()):
        if line not in changed or line not in mapping:
            continue
        olds = was.get(mapping[line], [])
        for kind, expr in decisions:
            value = _fold(expr)
            if value is _UNKNOWN:
                continue
            # the base decision this one replaced: the same kind on that line, else any
            old = next((e for k, e in olds if k == kind), olds[0][1] if olds else None)
            if old is None:
                continue
            why = _why(kind, old, expr, value)
            if why:
                found.append(f"line {line}: {why}: `{ast.unparse(old)}` became "
                             f"`{ast.unparse(expr)}`")
    return found
