"""Screening a pair of consecutive releases: one source file, a few lines, a test changed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.tasks.heldout import HELDOUT, HELDOUT_SHA256, sealed_heldout
from frostline.coding.tasks.pins import PACKAGES
from frostline.coding.tasks.release_pins import RELEASE_PAIRS
from frostline.coding.tasks.released import _unclashed
from frostline.coding.tasks.releases import (
    MAX_FIX_LINES,
    changed_lines,
    fix_site,
    make_buggy_tree,
    screen,
)
from frostline.coding.tasks.split import digest

BASE = {
    "pkg/__init__.py": '__version__ = "1.0"\n',
    "pkg/core.py": "def f(x):\n    if x > 1:\n        return 1\n    return x\n",
    "pkg/util.py": "def g():\n    return 2\n",
    "tests/test_core.py": "from pkg.core import f\n\ndef test_f():\n    assert f(0) == 0\n",
    "CHANGES.md": "1.0\n",
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_small_fix_with_a_new_test_is_kept(tmp_path: Path) -> None:
    old, new = _tree(tmp_path / "old", BASE), _tree(tmp_path / "new", {
        **BASE, "pkg/__init__.py": '__version__ = "1.1"\n', "CHANGES.md": "1.1: fixed f\n",
        "pkg/core.py": BASE["pkg/core.py"].replace("x > 1", "x >= 1"),
        "tests/test_more.py": "from pkg.core import f\n\ndef test_one():\n    assert f(1) == 1\n"})
    s = screen(old, new, ("pkg",))
    # the version bump and the changelog are not part of the fix
    assert (s.kept, s.source_file, s.fix_lines, s.tests) == (
        True, "pkg/core.py", 2, ("tests/test_more.py",))


def test_pairs_that_are_not_one_small_fix_are_dropped_with_the_reason(tmp_path: Path) -> None:
    core = BASE["pkg/core.py"].replace("x > 1", "x >= 1")
    test = BASE["tests/test_core.py"] + "\ndef test_g():\n    assert f(1) == 1\n"
    big = core + "".join(f"\ndef h{i}():\n    return {i}\n" for i in range(MAX_FIX_LINES))
    cases = {
        "two files": ({"pkg/core.py": core, "pkg/util.py": "def g():\n    return 3\n",
                       "tests/test_core.py": test}, "source_files:2"),
        "too large": ({"pkg/core.py": big, "tests/test_core.py": test}, "too_large:"),
        "no test": ({"pkg/core.py": core}, "no_test_change"),
        "tests only": ({"tests/test_core.py": test}, "no_source_change"),
        "new module": ({"pkg/extra.py": "X = 1\n", "tests/test_core.py": test},
                       "file_added_or_removed"),
    }
    for name, (files, reason) in cases.items():
        root = tmp_path / name.replace(" ", "_")
        old, new = _tree(root / "old", BASE), _tree(root / "new", {**BASE, **files})
        s = screen(old, new, ("pkg",))
        assert not s.kept and s.reason.startswith(reason), (name, s)


def test_files_outside_the_source_roots_do_not_count(tmp_path: Path) -> None:
    old = _tree(tmp_path / "old", {**BASE, "docs/conf.py": "a = 1\n"})
    new = _tree(tmp_path / "new", {**BASE, "docs/conf.py": "a = 2\n",
                                   "pkg/core.py": BASE["pkg/core.py"].replace("1:", "2:"),
                                   "tests/test_core.py": BASE["tests/test_core.py"] + "#\n"})
    assert screen(old, new, ("pkg",)).kept
    assert screen(old, new, ("pkg", "docs")).reason == "source_files:2"


@settings(deadline=None)
@given(st.lists(st.sampled_from(["a = 1", "b = 2", "", "  ", "__version__ = '2'", "c()"]),
                max_size=8),
       st.lists(st.sampled_from(["a = 1", "b = 3", "", "version = 3", "d()"]), max_size=8))
def test_changed_lines_ignore_blank_lines_and_version_strings(old: list[str],
                                                              new: list[str]) -> None:
    def kept(lines: list[str]) -> list[str]:
        return [x for x in lines if x.strip() and "version" not in x]

    n = changed_lines(old, new)
    a, b = Counter(kept(old)), Counter(kept(new))
    # every counted line that one side has more often is added or removed; nothing else counts
    assert sum(((a - b) + (b - a)).values()) <= n <= len(kept(old)) + len(kept(new))
    assert changed_lines(old, old) == 0


def test_the_fix_site_is_in_the_buggy_text() -> None:
    buggy = "a\nb\nc\nd\n"
    assert fix_site(buggy, "a\nB\nc\nd\n") == (2, 2)
    assert fix_site(buggy, "a\nb\nnew\nc\nd\n") == (2, 3)  # an insertion: its two neighbours
    assert fix_site(buggy, "a\nb\nd\n") == (3, 3)


def test_the_buggy_tree_is_the_older_release_with_the_newer_tests(tmp_path: Path) -> None:
    old = _tree(tmp_path / "old", {**BASE, "tests/test_gone.py": "def test_gone():\n    pass\n"})
    new = _tree(tmp_path / "new", {**BASE, "pkg/core.py": "def f(x):\n    return x\n",
                                   "CHANGES.md": "1.1: f returns x\n", "tests/data/in.txt": "1",
                                   "tests/test_new.py": "def test_new():\n    pass\n"})
    buggy = make_buggy_tree(old, new, tmp_path / "buggy")
    assert (buggy / "pkg/core.py").read_text() == BASE["pkg/core.py"]
    # the changelog of N+1 tells the fix: N's is kept
    assert (buggy / "CHANGES.md").read_text() == BASE["CHANGES.md"]
    assert (buggy / "tests/test_new.py").is_file() and (buggy / "tests/data/in.txt").is_file()
    assert not (buggy / "tests/test_gone.py").exists()  # N+1 removed it
    make_buggy_tree(old, new, tmp_path / "buggy")  # rebuilt in place


def test_the_heldout_packages_are_sealed_new_and_disjoint_from_the_tuning_pins() -> None:
    assert sealed_heldout() == HELDOUT and digest(list(HELDOUT)) == HELDOUT_SHA256
    # the old held-out packages (read for failures twice) are tuning packages now
    assert {"cachetools", "humanize", "semver", "tabulate"} <= set(PACKAGES) - set(HELDOUT)
    assert {p.name for p in RELEASE_PAIRS} & set(HELDOUT) and (
        {p.name for p in RELEASE_PAIRS} - set(HELDOUT))
    assert len({p.pair_id for p in RELEASE_PAIRS}) == len(RELEASE_PAIRS)
    for p in RELEASE_PAIRS:
        assert p.older.version != p.spec.version and len(p.older.sha256) == 64


@settings(deadline=None)  # no timing threshold in a unit test
@given(st.sets(st.text(alphabet="ab_", min_size=1, max_size=4), min_size=2, max_size=8),
       st.integers(min_value=1, max_value=7))
def test_no_hidden_test_deselects_a_visible_one(names: set[str], shown: int) -> None:
    ordered = sorted(names)
    k = min(shown, len(ordered) - 1)
    visible, hidden = _unclashed(tuple(ordered[:k]), tuple(ordered[k:]))
    assert (len(visible), len(hidden)) == (k, len(ordered) - k)
    assert set(visible) | set(hidden) == names
    assert not any(v.startswith(h) for h in hidden for v in visible)


def test_the_pinned_pairs_are_exactly_the_screened_pairs_of_the_recorded_search() -> None:
    import json

    record = Path(__file__).parents[2] / "docs" / "released-search.jsonl"
    rows = [json.loads(x) for x in record.read_text().splitlines()]
    screened = {f"{r['package']}-{r['older']}..{r['newer']}": r["archives"] for r in rows
                if r["verdict"] == "screened"}
    pinned = {p.pair_id: [[p.older.filename, p.older.sha256],
                          [p.spec.archive.filename, p.spec.archive.sha256]]
              for p in RELEASE_PAIRS}
    assert pinned == screened
    assert {r["package"] for r in rows} == set(PACKAGES) | set(HELDOUT)
