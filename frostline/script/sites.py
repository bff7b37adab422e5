"""Callsites σ and call-expression fingerprints (docs/script.md; the paper's Lemma 1).

σ names a ``ctx.run(...)`` expression by its structural position in the normalized AST:
``<qualified function>/<block>/…/#<j>``, e.g. ``orchestrate/for#0.body/if#0.orelse/#1``.

Definitions (pinned by tests/script/test_sites.py):

- Only ``ctx.run(...)`` calls are capability calls; container primitives are not.
- The qualified function is the dotted chain of enclosing ``def``/``async def`` names, e.g.
  ``orchestrate.gen`` for a helper nested in orchestrate, ``gen_one`` for a top-level helper.
  A nested function is never a block of its parent: its calls belong to it alone.
- A block label is ``<kind>#<ordinal>.<part>``. Kinds: ``for`` (also ``async for``), ``while``,
  ``if``, ``with`` (also ``async with``), ``try`` (also ``try/except*``), ``match``. Parts:
  ``body``, ``orelse``, ``handler<i>``, ``finalbody``, ``case<i>``. An ``elif`` is an ``if``
  nested in the ``orelse`` part. The ordinal counts the preceding sibling statements of the
  same kind, in the same statement list, that contain a capability call anywhere (header or
  parts, nested functions excluded). A statement without capability calls never shifts an
  ordinal, which is Lemma 1 (iii).
- ``j`` numbers the capability calls that belong directly to one statement list (calls in
  nested blocks belong to those blocks), in evaluation order: statements in order; inside a
  statement, arguments before the call and operands left to right (post-order), an
  assignment's value before its targets, a dict's key before its value, a comprehension's
  iterables and conditions before its element. Comprehensions and lambdas are expressions of
  their statement, not blocks. The header of a compound statement (``for`` iterable, ``if``
  / ``while`` test, ``with`` items, ``match`` subject) is evaluated in the enclosing list;
  a ``case`` guard belongs to its case part, an ``except`` type to its handler part.

The fingerprint is the hex SHA-256 of ``ast.dump(call, include_attributes=False)`` with every
``_site`` keyword removed (also from capability calls nested in the payload): a literal payload edit changes it, an edit to a variable that the
payload merely names does not (the runtime digest catches that).
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterator

from frostline.script.report import SiteInfo
from frostline.script.shapes import is_capability_call
from frostline.script.source import char_col, parse_or_reject, source_lines

SITE_KEYWORD = "_site"
Leaves = set[int] | frozenset[int]

_BLOCK_KINDS: dict[type[ast.stmt], str] = {
    ast.For: "for", ast.AsyncFor: "for", ast.While: "while", ast.If: "if", ast.With: "with",
    ast.AsyncWith: "with", ast.Try: "try", ast.TryStar: "try", ast.Match: "match",
}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def fingerprint(call: ast.Call, strip_nested: bool = True) -> str:
    """Hex SHA-256 of the call's normalized AST, without positions and without ``_site``."""
    if strip_nested and any(isinstance(n, ast.Call) and any(k.arg == SITE_KEYWORD for k in n.keywords)
           for n in ast.walk(call)):
        # Strip _site from the call and from calls nested in its payload, on a copy.
        call = copy.deepcopy(call)
        for n in ast.walk(call):
            if isinstance(n, ast.Call):
                n.keywords = [k for k in n.keywords if k.arg != SITE_KEYWORD]
    bare = ast.Call(func=call.func, args=call.args, keywords=call.keywords)
    return hashlib.sha256(dump(bare).encode("utf-8")).hexdigest()


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def dump(node: object) -> str:
    """Exactly ``ast.dump(node, include_attributes=False)``, about twice as fast.

    The checker computes one fingerprint per call on every check, and ast.dump's generic
    formatter was the largest cost after parsing. The equality with ast.dump is pinned by
    tests over the corpora and generated scripts.
    """
    if isinstance(node, ast.AST):
        cls = type(node)
        fields = _FIELDS.get(cls)
        if fields is None:
            fields = _FIELDS[cls] = tuple(
                (name, getattr(cls, name, ...) is None) for name in cls._fields)
        parts = []
        for name, optional in fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if value is None and optional:
                continue
            parts.append(f"{name}={dump(value)}")
        return f"{cls.__name__}({', '.join(parts)})"
    if isinstance(node, list):
        return f"[{', '.join([dump(x) for x in node])}]"
    return repr(node)


def literal_capability(call: ast.Call) -> str | None:
    """The capability name when the first argument is a string literal, else None."""
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def sites(source: str) -> list[SiteInfo]:
    """Every capability callsite of `source`, in source order.

    Raises ScriptRejected (R00) when the source cannot be parsed. The script need not pass
    the other rules: σ is defined for any parseable source.

    Example: ``[s.site for s in sites(src)] == ["orchestrate/#0", "orchestrate/for#0.body/#0"]``
    """
    tree = parse_or_reject(source)
    return [info for _, info in assign_sites(tree, source_lines(source))]


def assign_sites(tree: ast.Module, lines: list[str], contains: set[int] | None = None,
                 strip_nested: bool = True, leaves: set[int] | None = None,
                 ) -> list[tuple[ast.Call, SiteInfo]]:
    """σ for every capability call in a parsed module, sorted by source position.

    `contains` (from the checker's walk) names the statements that may hold a capability
    call; the expressions of the others are not visited. `strip_nested` False promises that
    no call carries a ``_site`` keyword (the fingerprint then skips looking for one).
    `leaves` names capability calls known to hold no capability call in their arguments.
    """
    out: list[tuple[ast.Call, str, str]] = []
    _Assigner(out, contains, leaves if leaves is not None else _NO_LEAVES).function_body(
        tree.body, "<module>")
    result = []
    for call, site, func in out:
        result.append((call, SiteInfo(
            site=site, capability=literal_capability(call),
            fingerprint=fingerprint(call, strip_nested),
            line=call.lineno, col=char_col(lines, call.lineno, call.col_offset), function=func,
        )))
    result.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
    return result


class _Assigner:
    def __init__(self, out: list[tuple[ast.Call, str, str]], contains: set[int] | None,
                 leaves: set[int] | frozenset[int]) -> None:
        self.out = out
        self.contains = contains
        self.leaves = leaves

    def function_body(self, body: list[ast.stmt], qual: str) -> None:
        self.block(body, qual, qual)

    def block(self, stmts: list[ast.stmt], path: str, qual: str, j: int = 0) -> int:
        """Assign sites in one statement list whose first `j` ordinals are already taken (by a
        case guard or an except type); returns how many calls the list contains."""
        total = 0
        ordinals: dict[str, int] = {}
        out = self.out
        contains = self.contains
        for stmt in stmts:
            if contains is not None and id(stmt) not in contains:
                if isinstance(stmt, _DEFS):
                    self.function_body(stmt.body, f"{qual}.{stmt.name}" if qual != "<module>"
                                       else stmt.name)
                continue
            if isinstance(stmt, _DEFS):
                # Decorators, defaults and annotations run in this block; the body is its own
                # function (a class body is treated like one so that σ stays defined).
                calls: list[ast.Call] = []
                _def_header_calls(stmt, calls, self.leaves)
                for call in calls:
                    out.append((call, f"{path}/#{j}", qual))
                    j += 1
                total += len(calls)
                self.function_body(stmt.body, f"{qual}.{stmt.name}" if qual != "<module>"
                                   else stmt.name)
                continue
            kind = _BLOCK_KINDS.get(type(stmt))
            calls = []
            if kind is None:
                _stmt_calls(stmt, calls, self.leaves)
                for call in calls:
                    out.append((call, f"{path}/#{j}", qual))
                    j += 1
                total += len(calls)
                continue
            _header_calls(stmt, calls, self.leaves)
            for call in calls:
                out.append((call, f"{path}/#{j}", qual))
                j += 1
            ordinal = ordinals.get(kind, 0)
            inner = 0
            for part, part_stmts, prelude in _parts(stmt):
                label = f"{path}/{kind}#{ordinal}.{part}"
                first: list[ast.Call] = []
                for expr in prelude:
                    _expr_calls(expr, first, self.leaves)
                for k, call in enumerate(first):
                    out.append((call, f"{label}/#{k}", qual))
                inner += len(first) + self.block(part_stmts, label, qual, len(first))
            if calls or inner:
                ordinals[kind] = ordinal + 1
            total += len(calls) + inner
        return total


def _parts(stmt: ast.stmt) -> Iterator[tuple[str, list[ast.stmt], list[ast.expr]]]:
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.If):
        yield "body", stmt.body, []
        if stmt.orelse:
            yield "orelse", stmt.orelse, []
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        yield "body", stmt.body, []
    elif isinstance(stmt, ast.Try | ast.TryStar):
        yield "body", stmt.body, []
        for i, handler in enumerate(stmt.handlers):
            yield f"handler{i}", handler.body, [handler.type] if handler.type else []
        if stmt.orelse:
            yield "orelse", stmt.orelse, []
        if stmt.finalbody:
            yield "finalbody", stmt.finalbody, []
    elif isinstance(stmt, ast.Match):
        for i, case in enumerate(stmt.cases):
            yield f"case{i}", case.body, [case.guard] if case.guard else []


def _header_calls(stmt: ast.stmt, out: list[ast.Call], leaves: Leaves) -> None:
    if isinstance(stmt, ast.For | ast.AsyncFor):
        _expr_calls(stmt.iter, out, leaves)
        _expr_calls(stmt.target, out, leaves)
    elif isinstance(stmt, ast.While | ast.If):
        _expr_calls(stmt.test, out, leaves)
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        for item in stmt.items:
            _expr_calls(item.context_expr, out, leaves)
            if item.optional_vars is not None:
                _expr_calls(item.optional_vars, out, leaves)
    elif isinstance(stmt, ast.Match):
        _expr_calls(stmt.subject, out, leaves)


def _def_header_calls(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                      out: list[ast.Call], leaves: Leaves) -> None:
    for dec in stmt.decorator_list:
        _expr_calls(dec, out, leaves)
    if isinstance(stmt, ast.ClassDef):
        for base in stmt.bases:
            _expr_calls(base, out, leaves)
        for kw in stmt.keywords:
            _expr_calls(kw.value, out, leaves)
        return
    a = stmt.args
    for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
        _expr_calls(default, out, leaves)
    for arg in [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                *([a.kwarg] if a.kwarg else [])]:
        if arg.annotation is not None:
            _expr_calls(arg.annotation, out, leaves)
    if stmt.returns is not None:
        _expr_calls(stmt.returns, out, leaves)


def _stmt_calls(stmt: ast.stmt, out: list[ast.Call], leaves: Leaves) -> None:
    if isinstance(stmt, ast.Assign):
        _expr_calls(stmt.value, out, leaves)
        for target in stmt.targets:
            _expr_calls(target, out, leaves)
    elif isinstance(stmt, ast.AnnAssign):
        if stmt.value is not None:
            _expr_calls(stmt.value, out, leaves)
        _expr_calls(stmt.target, out, leaves)
        _expr_calls(stmt.annotation, out, leaves)
    else:
        for child in ast.iter_child_nodes(stmt):
            _expr_calls(child, out, leaves)


_NO_LEAVES: frozenset[int] = frozenset()
_ATOMS = (ast.Constant, ast.Name, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop,
          ast.boolop)


def _expr_calls(node: ast.AST, out: list[ast.Call], leaves: Leaves) -> None:
    """Capability calls inside an expression, in evaluation order (post-order)."""
    if isinstance(node, _ATOMS):
        return
    if id(node) in leaves:
        out.append(node)  # type: ignore[arg-type]
        return
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                _expr_calls(key, out, leaves)
            _expr_calls(value, out, leaves)
        return
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        for gen in node.generators:
            _expr_calls(gen.iter, out, leaves)
            _expr_calls(gen.target, out, leaves)
            for cond in gen.ifs:
                _expr_calls(cond, out, leaves)
        if isinstance(node, ast.DictComp):
            _expr_calls(node.key, out, leaves)
            _expr_calls(node.value, out, leaves)
        else:
            _expr_calls(node.elt, out, leaves)
        return
    if isinstance(node, ast.NamedExpr):
        _expr_calls(node.value, out, leaves)
        return
    for child in ast.iter_child_nodes(node):
        _expr_calls(child, out, leaves)
    if is_capability_call(node):
        out.append(node)
