"""Two consecutive releases of a package: does the second fix a small bug in the first?

Pure comparison of two unpacked source trees (no network, no sandbox). A pair is a candidate
when, between release N and N+1, exactly one Python source file of the package changes by at
most `MAX_FIX_LINES` lines (added plus removed, blank lines and version strings not counted)
and at least one test file is added or changed. Test files never count toward the size rule;
files outside the package's source roots (docs, changelogs, packaging) are not looked at.
Whether the new tests really fail on N and pass on N+1 is decided later, in the sandbox
(`released.py`); this module only screens.

The buggy tree of a pair is release N with the test files of N+1: the bug of N, the tests
that show it. The fix, and the changelog and docs of N+1 that describe it, live only in the
N+1 tree, which the workflow is never given.
"""

from __future__ import annotations

import difflib
import filecmp
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from frostline.coding.manifest import is_test_file

__all__ = ["MAX_FIX_LINES", "Screen", "changed_lines", "fix_site", "make_buggy_tree", "screen"]

#: The largest fix kept: lines added plus lines removed in the one changed source file.
MAX_FIX_LINES = 10

# A release bumps its version string; that line is not part of any fix.
_VERSION = re.compile(r"^\s*(__version__|__version_info__|version|VERSION)\s*[:=]")


@dataclass(frozen=True)
class Screen:
    """The screening of one pair: `kept`, else `reason` says why not. `source_file` and
    `fix_lines` describe the fix when there is exactly one changed source file; `tests` are
    the test files added or changed (paths relative to the tree)."""

    kept: bool
    reason: str
    source_file: str = ""
    fix_lines: int = 0
    source_files: tuple[str, ...] = ()
    tests: tuple[str, ...] = field(default_factory=tuple)


def _python_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py") if p.is_file()}


def _under(rel: str, roots: tuple[str, ...]) -> bool:
    return any(r in (".", "") or rel == r or rel.startswith(r.rstrip("/") + "/") for r in roots)


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def changed_lines(old: list[str], new: list[str]) -> int:
    """Lines added plus lines removed between `old` and `new`, blank lines and version
    assignments left out."""
    count = 0
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        body = line[1:]
        if body.strip() and not _VERSION.match(body):
            count += 1
    return count


def screen(old: Path, new: Path, source_roots: tuple[str, ...],
           exclude: tuple[str, ...] = (), max_lines: int = MAX_FIX_LINES) -> Screen:
    """Screen the pair (`old` = release N, `new` = N+1). `source_roots` are the package's
    source paths (`PackageSpec.mutate`), `exclude` the paths among them that are not shipped
    code; test files are recognised by name and folder wherever they are."""
    files = sorted(_python_files(old) | _python_files(new))
    tests: list[str] = []
    sources: dict[str, int] = {}
    for rel in files:
        a, b = old / rel, new / rel
        if a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False):
            continue
        if is_test_file(rel):
            if b.is_file():  # a test only removed in N+1 tests nothing of N+1
                tests.append(rel)
            continue
        if not _under(rel, source_roots) or _under(rel, exclude):
            continue
        n = changed_lines(_lines(a), _lines(b))
        if n:
            sources[rel] = n
    found = tuple(sorted(sources))
    if not found:
        return Screen(False, "no_source_change", tests=tuple(tests))
    if len(found) > 1:
        return Screen(False, f"source_files:{len(found)}", source_files=found,
                      tests=tuple(tests))
    rel = found[0]
    if not (old / rel).is_file() or not (new / rel).is_file():
        return Screen(False, "file_added_or_removed", rel, sources[rel], found, tuple(tests))
    if sources[rel] > max_lines:
        return Screen(False, f"too_large:{sources[rel]}", rel, sources[rel], found, tuple(tests))
    if not tests:
        return Screen(False, "no_test_change", rel, sources[rel], found)
    return Screen(True, "kept", rel, sources[rel], found, tuple(tests))


def fix_site(old_text: str, new_text: str) -> tuple[int, int]:
    """The first and last line (1-based, in the buggy text `old_text`) the fix touches; a
    pure insertion counts the line before it and the line after it."""
    a, b = old_text.splitlines(), new_text.splitlines()
    first, last = 0, 0
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        lo, hi = (i1 + 1, i2) if i2 > i1 else (max(1, i1), min(len(a), i1 + 1))
        first = lo if not first else min(first, lo)
        last = max(last, hi)
    return first, last


def make_buggy_tree(old: Path, new: Path, dest: Path) -> Path:
    """`dest` (replaced if present): release N (`old`) with the test files of N+1 (`new`), the
    test files N+1 removed left out. Nothing else of N+1 is there: not the fix, and not its
    changelog entry or docs, which describe it."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.with_name(f".{dest.name}.part")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(old, work, symlinks=True)
    for path in sorted(work.rglob("*")):
        rel = path.relative_to(work).as_posix()
        if path.is_file() and is_test_file(rel) and not (new / rel).is_file():
            path.unlink()
    for path in sorted(new.rglob("*")):
        rel = path.relative_to(new).as_posix()
        if path.is_file() and is_test_file(rel):
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / rel)
    work.rename(dest)
    return dest
