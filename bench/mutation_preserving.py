"""Preserving mutation operators: edits that must not change the checker's verdict.

Local and helper renames, layout (unparse, re-indent), comments (some quoting forbidden code, which
the rules must ignore), a docstring, a swap of two independent statements, a payload hoisted
into a temporary, a call wrapped in a re-raising try, and a module constant inlined. Renames go through ``ast.unparse`` so that every reference changes together;
the others edit the text at AST positions.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import random

from bench.mutation_ops import (
    MUTATING_METHODS,
    Edit,
    Operator,
    Text,
    _entry,
    _first_stmt,
    _funcs,
    _inside_fstring,
    _prepend,
    _run_calls,
)


def reformat(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """Layout only: ast.unparse (comments and formatting dropped) and a two-space re-indent."""
    out = [(ast.unparse(tree) + "\n", "ast.unparse")]
    lines = []
    for line in source.splitlines(keepends=True):
        n = len(line) - len(line.lstrip(" "))
        lines.append(" " * (n // 2) + line[n:] if n % 4 == 0 else line)
    out.append(("".join(lines), "two-space indent"))
    return [(s, w) for s, w in out if s != source]


_SCARY_COMMENTS = ("# import os; ctx.call(...) would be the old API",
                   "# do not use __class__ or getattr here",
                   "# while True: retry forever? no: bounded below",
                   '# ctx.run(f"image.{kind}", payload, _site="x")')
_PLAIN_COMMENTS = ("# keep the shots in storyboard order", "# the provider returns a ref",
                   "# bounded on purpose", "# TODO: tune the prompt")


def add_comments(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """Comment lines and blank lines above statements; one variant quotes forbidden code."""
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    starts = sorted({(n.lineno, n.col_offset) for n in stmts})
    # only statements that start their line (no `a; b`, no one-line compound bodies)
    text = Text(source)
    own = [(ln, col) for ln, col in starts
           if text.lines[ln - 1][:col].strip() == "" and len(text.lines[ln - 1]) > col]
    out = []
    for pool, label in ((_PLAIN_COMMENTS, "plain"), (_SCARY_COMMENTS, "quoting forbidden code")):
        chosen = sorted(rng.sample(own, min(3, len(own))), reverse=True)
        new = source
        for ln, col in chosen:
            t = Text(new)
            new = t.insert_before_line(ln, " " * col + rng.choice(pool) + "\n\n")
        out.append((new, f"{len(chosen)} comments, {label}"))
    return out


def add_docstring(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """A docstring added to orchestrate (docstrings do not exist for the rules)."""
    entry = _entry(tree)
    if entry is None or _first_stmt(entry) is not entry.body[0]:
        return []
    return _prepend(source, tree, ['"""Run the workflow for one job."""'])


def _assigned_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _protected_names(tree: ast.Module) -> set[str]:
    """Names a consistent rename must not touch: parameters (keyword call sites use them),
    keyword argument names, functions, module constants, builtins, ctx and args."""
    names = {"ctx", "args"} | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            names.add(node.arg)  # type: ignore[arg-type]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name:
            node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node


def _rename(source: str, mapping: dict[str, str]) -> str:
    return ast.unparse(_Renamer(mapping).visit(ast.parse(source))) + "\n"


def _fresh(base: str, taken: set[str], rng: random.Random) -> str:
    for stem in (f"{base}_value", f"the_{base}", f"{base}_item", f"{base}2"):
        if stem not in taken:
            return stem
    return f"{base}_{rng.randrange(10**6)}"


def rename_locals(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """Local variables renamed consistently (then unparsed)."""
    candidates = sorted(_assigned_names(tree) - _protected_names(tree))
    if not candidates:
        return []
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | _protected_names(tree)
    mapping = {}
    for name in candidates:
        mapping[name] = _fresh(name, taken, rng)
        taken.add(mapping[name])
    return [(_rename(source, mapping), f"{len(mapping)} locals")]


def rename_helper(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """A helper function renamed with every reference to it (then unparsed)."""
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | _protected_names(tree)
    out = []
    for func in sorted(_funcs(tree), key=lambda f: f.lineno):
        if func.name == "orchestrate":
            continue
        new = _fresh(func.name, taken, rng)
        out.append((_rename(source, {func.name: new}), f"{func.name} -> {new}"))
    return out


def _names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(every name a statement mentions, the names it may write)."""
    seen, written = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            seen.add(n.id)
            if not isinstance(n.ctx, ast.Load):
                written.add(n.id)
        elif (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
              and n.attr in MUTATING_METHODS):
            written.add(n.value.id)
        elif isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load):
            written |= {m.id for m in ast.walk(n.value) if isinstance(m, ast.Name)}
    return seen, written


def _movable(stmt: ast.stmt, helpers: set[str]) -> bool:
    if not isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return False  # a docstring stops being one when it moves
    for n in ast.walk(stmt):
        if isinstance(n, ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr | ast.Lambda):
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers:
            return False
    return True


def reorder_independent(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """Two adjacent statements with no data dependency and no effect swapped."""
    helpers = {f.name for f in _funcs(tree)}
    text = Text(source)
    out = []
    blocks = [getattr(n, f) for n in ast.walk(tree) for f in ("body", "orelse", "finalbody")
              if isinstance(getattr(n, f, None), list)]
    for block in blocks:
        for a, b in itertools.pairwise(block):
            if not (_movable(a, helpers) and _movable(b, helpers)):
                continue
            seen_a, wr_a = _names(a)
            seen_b, wr_b = _names(b)
            if wr_a & seen_b or wr_b & seen_a:
                continue
            a0, a1 = text.starts[a.lineno - 1], text.starts[a.end_lineno]
            b0, b1 = text.starts[b.lineno - 1], text.starts[b.end_lineno]
            if text.lines[a.lineno - 1][:a.col_offset].strip() or a.col_offset != b.col_offset:
                continue
            new = source[:a0] + source[b0:b1] + source[a1:b0] + source[a0:a1] + source[b1:]
            out.append((new, f"lines {a.lineno} and {b.lineno}"))
    return sorted(out, key=lambda e: e[1])


def split_expression(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """A ctx.run payload hoisted into a temporary on the line before the statement."""
    text = Text(source)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    out = []
    for call in _run_calls(tree):
        if len(call.args) < 2 or not isinstance(call.args[1], ast.Dict):
            continue
        # the statement that holds `await ctx.run(...)` as its value, or as the one argument
        # of `xs.append(...)`: the payload is then the first thing the statement evaluates
        await_ = parents.get(id(call))
        stmt = parents.get(id(await_)) if isinstance(await_, ast.Await) else None
        if isinstance(stmt, ast.Call) and len(stmt.args) == 1:
            stmt = parents.get(id(stmt)) if isinstance(stmt.func, ast.Attribute) else None
            stmt = stmt if isinstance(stmt, ast.Expr) else None
        if not isinstance(stmt, ast.Assign | ast.Expr | ast.Return):
            continue
        name = next(n for n in ("payload", "request", "params", "body") if n not in taken)
        payload = call.args[1]
        hoisted = f"{text.indent_of(stmt)}{name} = {text.segment(payload)}\n"
        edited = Text(text.replace(payload, name))
        out.append((edited.insert_before_line(stmt.lineno, hoisted), f"line {call.lineno}"))
    return out


def wrap_try(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """A statement with a capability call wrapped in `try: ... except Exception: raise`."""
    text = Text(source)
    out = []
    for stmt in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.Expr)),
                       key=lambda n: n.lineno):
        if not any(isinstance(n, ast.Await) for n in ast.walk(stmt)):
            continue
        line = text.lines[stmt.lineno - 1]
        if line[:stmt.col_offset].strip() or stmt.end_lineno is None:
            continue
        start, end = text.starts[stmt.lineno - 1], text.starts[stmt.end_lineno]
        indent = " " * stmt.col_offset
        body = "".join("    " + ln if ln.strip() else ln
                       for ln in source[start:end].splitlines(keepends=True))
        new = f"{indent}try:\n{body}{indent}except Exception:\n{indent}    raise\n"
        out.append((source[:start] + new + source[end:], f"line {stmt.lineno}"))
    return out


def inline_constant(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """Every use of a module-level integer or string constant replaced by its literal."""
    consts = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, int | str)):
            consts[node.targets[0].id] = node.value
    text = Text(source)
    out = []
    for name, value in sorted(consts.items()):
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                and isinstance(n.ctx, ast.Load) and not _inside_fstring(tree, n)]
        if not uses:
            continue
        new = source
        for use in sorted(uses, key=lambda n: (n.lineno, n.col_offset), reverse=True):
            new = Text(new).replace(use, text.segment(value))
        out.append((new, f"{name} inlined ({len(uses)} uses)"))
    return out



PRESERVING: tuple[Operator, ...] = (
    Operator("rename_locals", "preserving", None, "local variables renamed", rename_locals),
    Operator("rename_helper", "preserving", None, "helper function renamed", rename_helper),
    Operator("reformat", "preserving", None, "unparse / re-indent", reformat),
    Operator("add_comments", "preserving", None, "comments and blank lines", add_comments),
    Operator("add_docstring", "preserving", None, "docstring in orchestrate", add_docstring),
    Operator("reorder_independent", "preserving", None, "independent statements swapped",
             reorder_independent),
    Operator("split_expression", "preserving", None, "payload hoisted into a temporary",
             split_expression),
    Operator("wrap_try", "preserving", None, "call wrapped in try/except Exception: raise",
             wrap_try),
    Operator("inline_constant", "preserving", None, "module constant replaced by its literal",
             inline_constant),
)
