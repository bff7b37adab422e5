"""Refactorings that move committed calls without changing their requests (issue 30).

Each takes a script's source and the index of one of its `ctx.run` calls (in source order)
and returns the refactored source, or None when the refactoring does not apply there:

- `helper`   — the call moves into a new module-level helper (`await _moved_i(ctx, P)`);
- `wrap`     — the statement holding the call moves under `if True:`;
- `loop`     — the statement holding the call moves under `for _once in range(1):`;
- `computed` — the payload expression ``P`` becomes ``{**P}`` (same value, new AST);
- `reorder`  — two adjacent independent assignments (no call, no shared names) swap.

`payload_change` edits a literal inside the call's payload: the request changes, so the trace
check must stop it. The property tests (tests/rebind) and the bench (bench/rebind.py) share
these, so a figure and a proof are about the same edits.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable

Refactoring = Callable[[str, int], str | None]


class _Src:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.lines = source.splitlines(keepends=True)
        self.parents = {c: n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}

    def offset(self, line: int, col: int) -> int:
        before = sum(len(s) for s in self.lines[:line - 1])
        return before + len(self.lines[line - 1].encode()[:col].decode())

    def replace(self, node: ast.AST, text: str) -> str:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.source[:start] + text + self.source[end:]

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def calls(self) -> list[ast.Call]:
        found = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "run"
                 and isinstance(n.func.value, ast.Name) and n.func.value.id == "ctx"]
        return sorted(found, key=lambda c: (c.lineno, c.col_offset))

    def statement(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parents[node]
        return node

    def indent_block(self, stmt: ast.stmt, header: str) -> str | None:
        if isinstance(stmt, ast.Return) or _is_def(stmt):
            return None  # a return moved into a block would change nothing to test; defs stay
        start, end = stmt.lineno, stmt.end_lineno or stmt.lineno
        first = self.lines[start - 1]
        indent = first[:len(first) - len(first.lstrip())]
        lines = list(self.lines)
        body = ["    " + s if s.strip() else s for s in lines[start - 1:end]]
        lines[start - 1:end] = [f"{indent}{header}\n", *body]
        return "".join(lines)


def _is_def(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)


def _call(src: _Src, i: int) -> ast.Call | None:
    calls = src.calls()
    return calls[i] if 0 <= i < len(calls) else None


def helper(source: str, i: int) -> str | None:
    src = _Src(source)
    call = _call(src, i)
    if call is None or len(call.args) != 2 or call.keywords:
        return None
    cap = call.args[0]
    if not isinstance(cap, ast.Constant) or not isinstance(cap.value, str):
        return None
    name = f"_moved_{i}"
    out = src.replace(call, f"{name}(ctx, {src.segment(call.args[1])})")
    return out.rstrip("\n") + (f"\n\n\nasync def {name}(ctx, payload):\n"
                               f"    return await ctx.run({cap.value!r}, payload)\n")


def wrap(source: str, i: int) -> str | None:
    src = _Src(source)
    call = _call(src, i)
    return None if call is None else src.indent_block(src.statement(call), "if True:")


def loop(source: str, i: int) -> str | None:
    src = _Src(source)
    call = _call(src, i)
    return (None if call is None
            else src.indent_block(src.statement(call), "for _once in range(1):"))


def computed(source: str, i: int) -> str | None:
    src = _Src(source)
    call = _call(src, i)
    if call is None or len(call.args) < 2:
        return None
    return src.replace(call.args[1], "{**" + src.segment(call.args[1]) + "}")


def reorder(source: str, i: int) -> str | None:
    """Swap the `i`-th pair (in source order) of adjacent independent assignments."""
    src = _Src(source)
    pairs = []
    for node in ast.walk(src.tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for a, b in itertools.pairwise(block):
                if _independent(a, b):
                    pairs.append((a, b))
    pairs.sort(key=lambda p: p[0].lineno)
    if not 0 <= i < len(pairs):
        return None
    a, b = pairs[i]
    lines = list(src.lines)
    a_lines = lines[a.lineno - 1:a.end_lineno]
    b_lines = lines[b.lineno - 1:b.end_lineno]
    lines[a.lineno - 1:b.end_lineno] = [*b_lines, *a_lines]
    return "".join(lines)


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign)):
        return False
    if a.end_lineno is None or b.lineno != a.end_lineno + 1:
        return False
    if any(isinstance(n, ast.Await | ast.Call) for s in (a, b) for n in ast.walk(s)):
        return False
    wrote_a, wrote_b = _targets(a), _targets(b)
    if wrote_a is None or wrote_b is None:
        return False
    read_a, read_b = _reads(a.value), _reads(b.value)
    return not (wrote_a & (wrote_b | read_b) or wrote_b & read_a)


def _targets(stmt: ast.Assign) -> set[str] | None:
    names = set()
    for t in stmt.targets:
        if not isinstance(t, ast.Name):
            return None
        names.add(t.id)
    return names


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def payload_change(source: str, i: int) -> str | None:
    """Edit the first string or number literal of call `i`'s payload."""
    src = _Src(source)
    call = _call(src, i)
    if call is None or len(call.args) < 2:
        return None
    for node in ast.walk(call.args[1]):
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            if isinstance(node.value, str):
                return src.replace(node, repr(node.value + " (revised)"))
            if isinstance(node.value, int | float):
                return src.replace(node, repr(node.value + 1))
    return None


REFACTORINGS: dict[str, Refactoring] = {"helper": helper, "wrap": wrap, "loop": loop,
                                        "computed": computed, "reorder": reorder}


def call_count(source: str) -> int:
    return len(_Src(source).calls())
