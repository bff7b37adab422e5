"""A tiny real Python repository with a pytest suite, written to a folder for the coding tests.

`textkit` has a few small functions and a suite of tests; `write_repo(root, bug=...)` writes it
green or with one injected single-site bug (a `Mutation` the template generator can invert).
"""

from __future__ import annotations

from pathlib import Path

from frostline.coding.interface import Mutation, Task

CORE = '''\
"""Small text and number helpers."""


def clamp(value, low, high):
    """Return value limited to the closed range [low, high]."""
    if low > high:
        raise ValueError("low must not exceed high")
    if value < low:
        return low
    if value > high:
        return high
    return value


def word_count(text):
    """Number of whitespace-separated words."""
    words = [w for w in text.split() if w]
    return len(words)


def initials(name):
    """Upper-case initials of a name: 'ada lovelace' -> 'AL'."""
    parts = name.split()
    return "".join(p[0].upper() for p in parts)


def chunk(items, size):
    """Split a list into consecutive chunks of at most `size` items."""
    if size <= 0:
        raise ValueError("size must be positive")
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out


def is_palindrome(text):
    """True when text reads the same backwards, ignoring case and spaces."""
    cleaned = "".join(c.lower() for c in text if not c.isspace())
    return cleaned == cleaned[::-1]
'''

INIT = '''\
from textkit.core import chunk, clamp, initials, is_palindrome, word_count

__all__ = ["chunk", "clamp", "initials", "is_palindrome", "word_count"]
'''

TESTS = '''\
import pytest

from textkit import chunk, clamp, initials, is_palindrome, word_count


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_below():
    assert clamp(-3, 0, 10) == 0


def test_clamp_above():
    assert clamp(42, 0, 10) == 10


def test_clamp_edges():
    assert clamp(10, 0, 10) == 10
    assert clamp(0, 0, 10) == 0


def test_clamp_bad_range():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_word_count():
    assert word_count("a  b c") == 3
    assert word_count("") == 0


def test_initials():
    assert initials("ada lovelace") == "AL"


def test_chunk():
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_bad_size():
    with pytest.raises(ValueError):
        chunk([1], 0)


def test_palindrome():
    assert is_palindrome("Never odd or even")
    assert not is_palindrome("frost line")
'''

#: Injected bugs: name -> (line before, line after) in textkit/core.py.
BUGS = {
    "clamp_gt": ("    if value > high:", "    if value < high:"),
    "clamp_lt": ("    if value < low:", "    if value > low:"),
    "chunk_slice": ("        out.append(items[start:start + size])",
                    "        out.append(items[start:start + size + 1])"),
    "palindrome_not": ("    return cleaned == cleaned[::-1]", "    return cleaned != cleaned[::-1]"),
}


def write_repo(root: Path, bug: str | None = None, *, core: str = CORE) -> Path:
    """Write textkit to `root` (created), with `bug` injected when given; returns `root`."""
    pkg = root / "textkit"
    (root / "tests").mkdir(parents=True, exist_ok=True)
    pkg.mkdir(parents=True, exist_ok=True)
    text = core
    if bug is not None:
        before, after = BUGS[bug]
        assert text.count(before + "\n") == 1, bug
        text = text.replace(before + "\n", after + "\n")
    (pkg / "core.py").write_text(text)
    (pkg / "__init__.py").write_text(INIT)
    (root / "tests" / "test_core.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "textkit"\nversion = "0.1"\n')
    return root


def bug_line(bug: str) -> int:
    before, _ = BUGS[bug]
    return CORE.splitlines().index(before) + 1


def make_task(root: Path, bug: str, *, visible: tuple[str, ...], hidden: tuple[str, ...] = (),
              task_id: str | None = None) -> Task:
    """A Task over textkit written green at `root`; its mutation injects `bug`."""
    write_repo(root)
    before, after = BUGS[bug]
    return Task(task_id=task_id or f"textkit-{bug}", package="textkit", version="0.1",
                sha256="0" * 64, source_dir=str(root),
                mutation=Mutation("textkit/core.py", bug_line(bug), "injected", before, after),
                visible_failing=visible, hidden=hidden)
