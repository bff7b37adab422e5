"""A kept task's bug must show where the workflow looks: the suite without the hidden tests.

A tiny package in the real sandbox: under the mutant, one test fails only when another (hidden)
test ran before it and left state behind. Shown that test, the workflow would find every test
passing; the builder drops such a mutant as "not_reproduced".
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks.build import _reproduces
from frostline.coding.tasks.build import _task as task_of
from frostline.coding.tasks.pins import Archive, PackageSpec
from frostline.coding.tasks.suite import run_suite

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap is not installed (apt-get install bubblewrap)")

MODULE = "STATE = []\n\n\ndef push(x):\n    STATE.append(x)\n\n\ndef size():\n    return len(STATE)\n"
MUTATION = Mutation("pkg/mod.py", 9, "number", "    return len(STATE)",
                    "    return len(STATE) + 1")
TESTS_A = ("from pkg import mod\n\n\ndef test_a_push():\n    mod.push(1)\n"
           "    assert mod.size() == 1\n\n\ndef test_a_untouched():\n    assert True\n")
TESTS_B = "from pkg import mod\n\n\ndef test_b_at_most_one():\n    assert mod.size() <= 1\n"
# Runs the mutated line, then skips one subtest: "skipped", never a guard a fix must keep.
TESTS_C = ("import unittest\n\nfrom pkg import mod\n\n\nclass Sub(unittest.TestCase):\n"
           "    def test_c_partly_skipped(self):\n        mod.size()\n"
           "        for backend in ('present', 'absent'):\n"
           "            with self.subTest(backend=backend):\n"
           "                if backend == 'absent':\n"
           "                    self.skipTest('absent')\n")
SPEC = PackageSpec(Archive("pkg", "0", "pkg-0.tar.gz", "0" * 64), import_root=".",
                   mutate=("pkg",), test_paths=("tests",))


@pytest.fixture
def tree() -> Iterator[Path]:
    # Never under /tmp: the sandbox mounts its own /tmp there.
    home = Path.home() / ".cache" / "frostline"
    home.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="reproduce-", dir=home))
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MODULE)
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(TESTS_A)
    (root / "tests" / "test_b.py").write_text(TESTS_B)
    (root / "tests" / "test_c.py").write_text(TESTS_C)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _task(tree: Path, visible: tuple[str, ...], hidden: tuple[str, ...]) -> Task:
    return Task(task_id="pkg-0-x", package="pkg", version="0", sha256="0" * 64,
                source_dir=str(tree), mutation=MUTATION, visible_failing=visible, hidden=hidden,
                test_args=(), split="heldout", test_paths=("tests",), import_root=".")


def test_a_test_that_fails_only_after_a_hidden_one_is_not_reproduced(tree: Path) -> None:
    a, b = "tests/test_a.py::test_a_push", "tests/test_b.py::test_b_at_most_one"
    untouched = "tests/test_a.py::test_a_untouched"
    assert _reproduces(SPEC, tree, (), _task(tree, (b,), (a, untouched)), 60.0) == \
        "not_reproduced"
    # shown the test that fails on its own, the task is kept
    assert _reproduces(SPEC, tree, (), _task(tree, (a,), (b, untouched)), 60.0) == "kept"


def test_a_test_that_skips_a_subtest_is_skipped_and_never_hidden(tree: Path) -> None:
    base = run_suite(SPEC, tree, coverage=True)
    c = "tests/test_c.py::Sub::test_c_partly_skipped"
    assert base.outcomes[c] == "skipped"  # as the judging runner's junit report has it
    covering = base.coverage[MUTATION.file][MUTATION.line]
    assert c in covering  # it ran the line before skipping
    passed = frozenset(t for t, o in base.outcomes.items() if o == "passed")
    a = "tests/test_a.py::test_a_push"
    task = task_of(SPEC, tree, (), MUTATION, frozenset({a}), covering, passed, "heldout")
    assert task is not None and task.visible_failing == (a,)
    assert c not in task.hidden and "tests/test_b.py::test_b_at_most_one" in task.hidden
