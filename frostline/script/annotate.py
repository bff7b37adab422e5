"""Annotation: the host writes ``_site="σ"`` into every ``ctx.run`` call of a checked script.

The sandboxed ``ctx.run`` reports the site it was given, and the host admits a call only for
a site of its own annotation, so the host (never the model) owns ``_site``. The text is edited
in place, never re-generated from the AST, so that no line moves: the runtime's tracebacks,
the frozen sites' source lines and the UI all keep pointing at the lines the model wrote.

How: for each call, the keyword is inserted just before its closing parenthesis (AST end
positions; ``col_offset`` values are UTF-8 byte offsets, so the edit works on bytes), with a
separating comma unless the call already ends with a trailing comma. Inserting at the closing
parenthesis rather than after the last argument keeps a parenthesized argument intact
(``(x)`` must not become the tuple ``(x, _site=…)``), and a comment before the parenthesis
stays where it was. Insertions are applied from
the last to the first so earlier offsets stay valid.

An existing ``_site`` is accepted only when it is a string literal equal to the computed σ;
anything else raises ScriptRejected naming R10.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from frostline.errors import ScriptRejected
from frostline.script.sites import SITE_KEYWORD, assign_sites
from frostline.script.source import parse_or_reject, source_lines

Offset = Callable[[int | None, int | None], int]


def annotate(source: str) -> str:
    """Return `source` with ``_site="σ"`` in every ``ctx.run`` call; line numbers unchanged.

    Example: ``annotate(src)`` turns ``await ctx.run("echo", {})`` into
    ``await ctx.run("echo", {}, _site="orchestrate/#0")``.
    """
    tree = parse_or_reject(source)
    raw = source.encode("utf-8")
    at = _offsets(raw)
    fstrings = _fstring_quotes(tree, raw, at)
    edits: list[tuple[int, bytes]] = []
    for call, info in assign_sites(tree, source_lines(source)):
        if _already_annotated(call, info.site):
            continue
        quote = _free_quote(call, fstrings, at)
        literal = b"_site=" + quote + info.site.encode() + quote
        edits.extend(_insertion(call, literal, raw, at))
    for offset, text in sorted(edits, reverse=True):
        raw = raw[:offset] + text + raw[offset:]
    return raw.decode("utf-8")


def _offsets(raw: bytes) -> Offset:
    """Turn an AST position (line, UTF-8 byte column) into an absolute offset in `raw`."""
    starts = [0]
    for line in raw.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def at(line: int | None, col: int | None) -> int:
        return starts[(line or 1) - 1] + (col or 0)
    return at


def _fstring_quotes(tree: ast.Module, raw: bytes, at: Offset) -> list[tuple[int, int, bytes]]:
    """(start, end, quote character) of every f-string: inside f"..." the keyword's string
    must use the other quote (Python 3.11 cannot nest the same quote)."""
    fstrings: list[tuple[int, int, bytes]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            begin = at(node.lineno, node.col_offset)
            head = raw[begin : begin + 8].lstrip(b"rRfFbBuU")
            fstrings.append((begin, at(node.end_lineno, node.end_col_offset), head[:1]))
    return fstrings


def _already_annotated(call: ast.Call, site: str) -> bool:
    """True when the call carries exactly ``_site="<site>"``; any other ``_site`` is R10."""
    existing = [k for k in call.keywords if k.arg == SITE_KEYWORD]
    if not existing:
        return False
    value = existing[0].value
    if len(existing) == 1 and isinstance(value, ast.Constant) and value.value == site:
        return True
    raise ScriptRejected(
        f"R10: line {call.lineno}: ctx.run carries _site={ast.unparse(value)}, but its "
        f"callsite is {site!r}; the host owns _site",
        rule="R10", line=call.lineno, site=site,
    )


def _free_quote(call: ast.Call, fstrings: list[tuple[int, int, bytes]], at: Offset) -> bytes:
    start = at(call.lineno, call.col_offset)
    used = {q for b, e, q in fstrings if b < start < e}
    quote = next((q for q in (b'"', b"'") if q not in used), None)
    if quote is None:
        raise ScriptRejected(
            f"line {call.lineno}: a ctx.run inside f-strings that use both quote "
            "characters cannot be annotated; move the call out of the f-string",
            rule="R00", line=call.lineno)
    return quote


def _insertion(call: ast.Call, literal: bytes, raw: bytes, at: Offset) -> list[tuple[int, bytes]]:
    """The edits that add `literal` as the call's last argument, before its ')'."""
    close = at(call.end_lineno, call.end_col_offset) - 1
    last = _last_argument(call)
    if last is None:
        return [(close, literal)]
    if (len(call.args) == 1 and not call.keywords and isinstance(last, ast.GeneratorExp)
            and at(last.end_lineno, last.end_col_offset) == close + 1):
        # `f(x for x in xs)`: the generator shares the call's parentheses and must get
        # its own before another argument can follow it.
        return [(at(last.lineno, last.col_offset) + 1, b"("), (close, b"), " + literal)]
    after = at(last.end_lineno, last.end_col_offset)
    sep = b" " if _has_comma(raw[after:close]) else b", "
    return [(close, sep + literal)]


def _last_argument(call: ast.Call) -> ast.expr | ast.keyword | None:
    nodes: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    if not nodes:
        return None
    return max(nodes, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))


def _has_comma(between: bytes) -> bool:
    """Whether the text between the last argument and ')' holds a trailing comma.

    That text holds only blanks, comments, closing parentheses of a parenthesized argument
    and at most one comma, so every '#' there starts a comment.
    """
    i = 0
    while i < len(between):
        ch = between[i : i + 1]
        if ch == b",":
            return True
        if ch == b"#":
            while i < len(between) and between[i : i + 1] not in (b"\n", b"\r"):
                i += 1
            continue
        i += 1
    return False
