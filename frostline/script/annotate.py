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

from frostline.errors import ScriptRejected
from frostline.script.sites import SITE_KEYWORD, assign_sites
from frostline.script.source import source_lines


def annotate(source: str) -> str:
    """Return `source` with ``_site="σ"`` in every ``ctx.run`` call; line numbers unchanged.

    Example: ``annotate(src)`` turns ``await ctx.run("echo", {})`` into
    ``await ctx.run("echo", {}, _site="orchestrate/#0")``.
    """
    from frostline.script.checker import parse_or_reject

    tree = parse_or_reject(source)
    raw = source.encode("utf-8")
    lines = raw.splitlines(keepends=True)
    # Byte offset of the start of each line, to turn (line, byte col) into an absolute offset.
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, bytes]] = []
    for call, info in assign_sites(tree, source_lines(source)):
        existing = [k for k in call.keywords if k.arg == SITE_KEYWORD]
        if existing:
            value = existing[0].value
            if (len(existing) == 1 and isinstance(value, ast.Constant)
                    and value.value == info.site):
                continue
            raise ScriptRejected(
                f"R10: line {call.lineno}: ctx.run carries _site={ast.unparse(value)}, but its "
                f"callsite is {info.site!r}; the host owns _site",
                rule="R10", line=call.lineno, site=info.site,
            )
        literal = f'_site="{info.site}"'.encode()
        close = starts[(call.end_lineno or 1) - 1] + (call.end_col_offset or 1) - 1
        last = _last_argument(call)
        if last is None:
            edits.append((close, literal))
        else:
            after = starts[(last.end_lineno or 1) - 1] + (last.end_col_offset or 0)
            sep = b" " if _has_comma(raw[after:close]) else b", "
            edits.append((close, sep + literal))
    for offset, text in sorted(edits, reverse=True):
        raw = raw[:offset] + text + raw[offset:]
    return raw.decode("utf-8")


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
