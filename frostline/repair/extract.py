"""Pull the candidate script out of a model's reply.

Models wrap code in Markdown fences, add prose around it, sometimes show several blocks (an
excerpt of the old script, then the new one), use `~~~` instead of backticks, answer with CRLF
line endings, or stop before the closing fence. `extract_code` follows CommonMark's fence
rules (an opening fence of three or more backticks or tildes indented at most three spaces; a
closing fence of the same character, at least as long, with nothing after it; an unclosed
fence runs to the end) and then chooses:

1. among Python blocks (info string ``python``, ``py``, ``python3`` or none), the last one that
   defines ``async def orchestrate`` — the final version when a reply shows several;
2. else the longest Python block;
3. else, when the reply has no fence at all but parses as Python that defines
   ``orchestrate``, the whole reply;
4. else None (prose without code).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ORCHESTRATE = re.compile(r"^[ \t]*async[ \t]+def[ \t]+orchestrate[ \t]*\(", re.MULTILINE)
_PYTHON_INFO = frozenset({"", "python", "py", "python3", "py3"})


@dataclass(frozen=True)
class Block:
    info: str  # the first word of the info string, lower-cased ('' for a bare fence)
    code: str
    closed: bool


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced code block of `text`, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _OPEN.match(lines[i])
        # A backtick fence's info string may not contain a backtick (CommonMark).
        if not match or (match["fence"][0] == "`" and "`" in match["info"]):
            i += 1
            continue
        fence, indent = match["fence"], len(match["indent"])
        info = match["info"].strip().split(" ", 1)[0].lower() if match["info"].strip() else ""
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            if closing.match(lines[i]):
                closed = True
                i += 1
                break
            body.append(_strip_indent(lines[i], indent))
            i += 1
        blocks.append(Block(info, "\n".join(body), closed))
    return blocks


def _strip_indent(line: str, indent: int) -> str:
    # CommonMark removes up to the fence's own indentation from each content line.
    removable = len(line) - len(line.lstrip(" "))
    return line[min(indent, removable):]


def _finish(code: str) -> str:
    return code.strip("\n") + "\n"


def extract_code(text: str) -> str | None:
    """The orchestration script in a model reply, or None when there is none.

    Example: ``extract_code("Here:\\n```python\\nasync def orchestrate(ctx, args): ...\\n```")``
    """
    if not isinstance(text, str) or not text.strip():
        return None
    blocks = [b for b in fenced_blocks(text) if b.info in _PYTHON_INFO and b.code.strip()]
    with_entry = [b for b in blocks if _ORCHESTRATE.search(b.code)]
    if with_entry:
        return _finish(with_entry[-1].code)
    if blocks:
        return _finish(max(blocks, key=lambda b: len(b.code.strip())).code)
    if not fenced_blocks(text):
        bare = text.replace("\r\n", "\n").replace("\r", "\n")
        if _ORCHESTRATE.search(bare) and _parses(bare):
            return _finish(bare)
    return None


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True
