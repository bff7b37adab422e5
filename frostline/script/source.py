"""The parse boundary: the only place where untrusted text becomes an AST.

Every failure here becomes one R00 violation with a message a model can act on, never a
traceback and never a hang:

- a size cap (``MAX_SOURCE_BYTES``) checked before the parser sees the text, so a 10 MB file
  costs nothing;
- strict UTF-8 decoding for bytes (``decode_source``), NUL bytes and lone surrogates rejected;
- the parser's own limits (too many nested parentheses, too many indentation levels, its
  recursion and memory guards) caught as SyntaxError/RecursionError/MemoryError/ValueError;
- a depth bound (``MAX_AST_DEPTH`` nested statements and expressions). Every recursive pass
  in this package either runs after ``check_depth`` (an iterative walk) or carries its own
  depth counter and raises ``SourceError`` before it descends past the bound (the checker's
  main walk does, which saves a separate pass); either way no walk can reach the
  interpreter's recursion limit.
"""

from __future__ import annotations

import ast
import threading

from frostline.errors import ScriptRejected

#: One parse at a time in this process. CPython 3.11 keeps the AST constructor's recursion
#: depth in state shared by every thread, so two parses on two threads (the API checks scripts
#: on a thread pool) can fail with "SystemError: AST constructor recursion depth mismatch"
#: (python/cpython#106905). A parse takes milliseconds; serializing them costs little.
_PARSE_LOCK = threading.Lock()

MAX_SOURCE_BYTES = 256 * 1024
MAX_AST_DEPTH = 100


class SourceError(Exception):
    """The source cannot be analysed; carries the R00 message, hint and position."""

    def __init__(self, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.line = line
        self.col = col


def decode_source(data: bytes) -> str:
    """Decode script bytes as strict UTF-8 (a leading BOM is accepted and dropped)."""
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(
            f"script is {len(data)} bytes; the limit is {MAX_SOURCE_BYTES} bytes",
            "keep the script small: move data into args instead of embedding it in the source",
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(
            f"script is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            "save the script as UTF-8 text", line=line,
        ) from None


def parse_source(source: str, *, check_depth: bool = True) -> ast.Module:
    """Parse `source` into a module, or raise SourceError.

    With `check_depth` (the default) the tree's depth is verified too; a caller that passes
    False must bound its own walk (see frostline.script.rules.Analyzer).
    """
    if not isinstance(source, str):
        raise SourceError(f"script must be text, not {type(source).__name__}",
                          "pass the script source as a str (or bytes to check_bytes)")
    # Each character is at least one UTF-8 byte, so this avoids encoding a huge string.
    if len(source) > MAX_SOURCE_BYTES or _utf8_len(source) > MAX_SOURCE_BYTES:
        raise SourceError(
            f"script exceeds the size limit of {MAX_SOURCE_BYTES} bytes",
            "keep the script small: move data into args instead of embedding it in the source",
        )
    if not source.strip():
        raise SourceError("script is empty",
                          "write `async def orchestrate(ctx, args):` with the workflow's body")
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        raise SourceError("script contains a NUL byte", "remove the NUL character", line=line)
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source, "<script>", "exec")
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        raise SourceError(f"script does not parse: {exc.msg}",
                          "fix the syntax error; the script must be valid Python 3.11",
                          line=line, col=max(col, 1)) from None
    except (RecursionError, MemoryError):
        raise SourceError("script nests too deeply for the parser",
                          "flatten deeply nested expressions into several statements") from None
    except ValueError as exc:  # e.g. source code string cannot contain null bytes
        raise SourceError(f"script cannot be parsed: {exc}", "remove invalid characters") from None
    if not tree.body:
        raise SourceError("script is empty (only comments)",
                          "write `async def orchestrate(ctx, args):` with the workflow's body")
    if check_depth:
        depth_check(tree)
    return tree


def parse_or_reject(source: str) -> ast.Module:
    """Parse through the R00 boundary, raising ScriptRejected instead of returning a report.

    For the entry points that answer with a value rather than a report (sites, annotate).
    """
    try:
        return parse_source(source)
    except SourceError as exc:
        raise ScriptRejected(f"R00: line {exc.line}: {exc.message}", rule="R00", line=exc.line,
                             hint=exc.hint) from None


def _utf8_len(source: str) -> int:
    try:
        return len(source.encode("utf-8"))
    except UnicodeEncodeError:
        raise SourceError("script contains a lone surrogate character",
                          "save the script as valid UTF-8 text") from None


def too_deep(node: ast.AST) -> SourceError:
    return SourceError(
        f"script nests deeper than {MAX_AST_DEPTH} levels",
        "flatten deeply nested expressions and blocks into several statements",
        line=getattr(node, "lineno", 1), col=getattr(node, "col_offset", 0) + 1,
    )


def depth_check(tree: ast.AST, start: int = 0) -> None:
    """Raise SourceError when statements and expressions nest deeper than MAX_AST_DEPTH.

    Iterative on purpose: this pass is what guards the recursive ones. Only statement and
    expression nodes count, the same measure the checker's walk uses.
    """
    stack: list[tuple[ast.AST, int]] = [(tree, start)]
    iter_children = ast.iter_child_nodes
    counted = (ast.stmt, ast.expr)
    while stack:
        node, depth = stack.pop()
        if isinstance(node, counted):
            depth += 1
            if depth > MAX_AST_DEPTH:
                raise too_deep(node)
        for child in iter_children(node):
            stack.append((child, depth))


def source_lines(source: str) -> list[str]:
    """Split like Python's tokenizer does (only \\n, \\r\\n and \\r end a line), so index
    ``lineno - 1`` is the line an AST node names. ``str.splitlines`` also splits on form
    feeds and other separators, which would shift every later line."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def char_col(lines: list[str], line: int, byte_col: int) -> int:
    """Convert an ast (line, UTF-8 byte offset) to a 1-based character column."""
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        if text.isascii():
            return byte_col + 1
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1
    return byte_col + 1
