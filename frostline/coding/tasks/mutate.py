"""Single-site mutation operators over Python source: where a bug can be injected, and how.

Pure functions over text (no I/O). A candidate is one edit inside one line, found from the
module's `ast` and applied to the line's text at the node's position, so the mutant differs
from the original in exactly one place of one line. Operators (each has an obvious inverse,
which is what makes injected bugs an upper bound for a generator that knows the operators):

| operator       | edit                                              |
|----------------|---------------------------------------------------|
| arith          | + ↔ -, * ↔ /, // → /, << ↔ >>, & ↔ |             |
| compare        | < ↔ <=, > ↔ >=, == ↔ !=, is ↔ is not, in ↔ not in |
| boolean        | and ↔ or                                          |
| drop_not       | not x → x                                         |
| negate_cond    | if x: → if not (x):  (if / while / elif)          |
| number         | n → n + 1 (int literals), True ↔ False            |
| aug_assign     | += ↔ -=                                           |
| loop_control   | break ↔ continue                                  |

`bytecode_identical` compiles both versions: a mutant whose code objects equal the original's
(`x = 1.0` vs `x = 1.00`, a constant folded away) cannot be told apart by any test and is
discarded.
"""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Iterable, Iterator

from frostline.coding.interface import Mutation

__all__ = ["OPERATORS", "apply", "bytecode_identical", "candidates"]

OPERATORS = ("arith", "compare", "boolean", "drop_not", "negate_cond", "number", "aug_assign",
             "loop_control")

_ARITH: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<"),
    ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"),
}
_COMPARE: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}
_AUG: dict[type[ast.operator], tuple[str, str]] = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+=")}


def _norm(gap: str) -> str:
    """The operator text of a gap between two operands: parentheses and spaces removed, inner
    runs of spaces kept as one (`is  not` → `is not`)."""
    return " ".join(gap.replace("(", " ").replace(")", " ").split())


class _Line:
    """One line's text addressed by the UTF-8 byte offsets `ast` reports."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = text.encode("utf-8")

    def span(self, start: int, end: int) -> str:
        return self.raw[start:end].decode("utf-8")

    def replace(self, start: int, end: int, new: str) -> str:
        return (self.raw[:start] + new.encode("utf-8") + self.raw[end:]).decode("utf-8")

    def swap_in_gap(self, start: int, end: int, old: str, new: str) -> str | None:
        """Replace the operator `old` that is all a gap holds besides parentheses."""
        gap = self.span(start, end)
        if _norm(gap) != old:
            return None
        pattern = r"\s+".join(re.escape(part) for part in old.split())
        found = list(re.finditer(pattern, gap))
        if len(found) != 1:
            return None
        m = found[0]
        head = len(gap[:m.start()].encode("utf-8"))
        tail = len(gap[:m.end()].encode("utf-8"))
        return self.replace(start + head, start + tail, new)


def _single_line(node: ast.AST) -> bool:
    return getattr(node, "lineno", None) is not None and node.lineno == node.end_lineno  # type: ignore[attr-defined]


def _edits(node: ast.AST, line: _Line) -> Iterator[tuple[str, str]]:
    """(operator, new line text) for each mutation of `node` within `line`."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        old, new = _ARITH[type(node.op)]
        after = line.swap_in_gap(node.left.end_col_offset or 0, node.right.col_offset, old, new)
        if after is not None:
            yield "arith", after
    elif isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            old, new = _COMPARE[type(op)]
            after = line.swap_in_gap(left.end_col_offset or 0, right.col_offset, old, new)
            if after is not None:
                yield "compare", after
            left = right
    elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        first, second = node.values[0], node.values[1]
        after = line.swap_in_gap(first.end_col_offset or 0, second.col_offset, old, new)
        if after is not None:
            yield "boolean", after
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        operand = line.span(node.operand.col_offset, node.operand.end_col_offset or 0)
        yield "drop_not", line.replace(node.col_offset, node.end_col_offset or 0, operand)
    elif isinstance(node, ast.Constant) and not isinstance(node.value, str | bytes):
        yield from _constant(node, line)
    elif isinstance(node, ast.AugAssign) and type(node.op) in _AUG:
        old, new = _AUG[type(node.op)]
        after = line.swap_in_gap(node.target.end_col_offset or 0, node.value.col_offset, old, new)
        if after is not None:
            yield "aug_assign", after
    elif isinstance(node, ast.Break | ast.Continue):
        word = "continue" if isinstance(node, ast.Break) else "break"
        yield "loop_control", line.replace(node.col_offset, node.end_col_offset or 0, word)


def _constant(node: ast.Constant, line: _Line) -> Iterator[tuple[str, str]]:
    value = node.value
    start, end = node.col_offset, node.end_col_offset or 0
    if isinstance(value, bool):
        yield "number", line.replace(start, end, "False" if value else "True")
    elif isinstance(value, int) and line.span(start, end).isdigit():
        yield "number", line.replace(start, end, str(value + 1))


def _condition(node: ast.AST, lines: list[_Line]) -> Iterator[tuple[int, str, str]]:
    """negate_cond for an if/while whose test sits on the statement's first line."""
    if isinstance(node, ast.If | ast.While) and _single_line(node.test):
        test = node.test
        line = lines[test.lineno - 1]
        inner = line.span(test.col_offset, test.end_col_offset or 0)
        if not isinstance(test, ast.UnaryOp | ast.Constant):
            yield test.lineno, "negate_cond", line.replace(
                test.col_offset, test.end_col_offset or 0, f"not ({inner})")


def candidates(source: str, file: str, covered: Iterable[int]) -> list[Mutation]:
    """Every single-site mutant of `source` on a line in `covered`, in source order, without
    duplicates; a mutant that does not compile is left out."""
    tree = ast.parse(source)
    lines = [_Line(t) for t in source.split("\n")]
    wanted = set(covered)
    seen: set[tuple[int, str]] = set()
    found: list[Mutation] = []
    for node in ast.walk(tree):
        edits: list[tuple[int, str, str]] = list(_condition(node, lines))
        if _single_line(node) and node.lineno in wanted:  # type: ignore[attr-defined]
            n = node.lineno  # type: ignore[attr-defined]
            edits += [(n, op, after) for op, after in _edits(node, lines[n - 1])]
        for lineno, op, after in edits:
            before = lines[lineno - 1].text
            if lineno not in wanted or after == before or (lineno, after) in seen:
                continue
            seen.add((lineno, after))
            mutation = Mutation(file=file, line=lineno, operator=op, before=before, after=after)
            if _compiles(apply(source, mutation)):
                found.append(mutation)
    found.sort(key=lambda m: (m.line, m.operator, m.after))
    return found


def apply(source: str, mutation: Mutation) -> str:
    """`source` with `mutation` applied. Raises ValueError when the line is not `before`."""
    lines = source.split("\n")
    index = mutation.line - 1
    if not 0 <= index < len(lines) or lines[index] != mutation.before:
        raise ValueError(f"{mutation.file}:{mutation.line} does not read {mutation.before!r}")
    lines[index] = mutation.after
    return "\n".join(lines)


def _compiles(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """What a code object does, without where its source sits: bytecode, exception table,
    names, flags and constants (nested code objects by their own shape); positions (the line
    and column table) are left out, since a respelling moves columns and nothing else."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, code.co_exceptiontable, code.co_names, code.co_varnames,
            code.co_freevars, code.co_cellvars, code.co_flags, code.co_argcount,
            code.co_posonlyargcount, code.co_kwonlyargcount, code.co_name, consts)


def bytecode_identical(original: str, mutant: str, filename: str = "<module>") -> bool:
    """Whether both sources compile to the same code objects (same bytecode, constants and
    names, positions aside): no test can tell such a mutant from the original."""
    a = compile(original, filename, "exec", dont_inherit=True)
    b = compile(mutant, filename, "exec", dont_inherit=True)
    return _shape(a) == _shape(b)
