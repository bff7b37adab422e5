"""The overfit guards: degenerate rewrites screened out, candidates smallest change first, and
VALIDATE resting on the whole visible suite; each a declared, model-checked graph change, on a
real tiny repository (real bubblewrap, pytest and coverage)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from coding_repo import write_repo
from hypothesis import given
from hypothesis import strategies as st

from frostline.coding.arms import ARMS, arm
from frostline.coding.guards import GUARDS
from frostline.coding.interface import FaultPlan, Mutation, Task
from frostline.coding.overfit import change_size, degenerate, smallest_first
from frostline.coding.setup import SolveSettings, prepare
from frostline.coding.solve import solve
from frostline.coding.testrun import SandboxSettings
from frostline.coding.variants import graph_for
from frostline.graph.modelcheck import check

BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
SETTINGS = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5))

BASE = '''\
def f(x, y):
    while True:
        if x > y:
            return x < 3
        x += 1
    return True
'''


@pytest.mark.parametrize(("before", "after", "why"), [
    ("while True:", "while not (True):", "loop condition made constant-false"),
    ("while True:", "while False:", "loop condition made constant-false"),
    ("if x > y:", "if True:", "a condition replaced by a constant"),
    ("if x > y:", "if not (1 < 2):", "a condition replaced by a constant"),
    ("return x < 3", "return False", "computed return value replaced by a constant"),
    ("        if x > y:\n            return x < 3", "        return False",
     "computed return value replaced by a constant"),
])
def test_a_decision_made_constant_is_degenerate(before: str, after: str, why: str) -> None:
    found = degenerate(BASE, BASE.replace(before, after))
    assert len(found) == 1 and why in found[0]


@pytest.mark.parametrize(("before", "after"), [
    ("if x > y:", "if x >= y:"), ("if x > y:", "if not (x > y):"),
    ("return x < 3", "return not (x < 3)"), ("return True", "return False"),
    ("x += 1", "x -= 1"),
])
def test_a_real_rewrite_is_not(before: str, after: str) -> None:
    assert degenerate(BASE, BASE.replace(before, after)) == []


@given(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]),
       st.sampled_from(["<", "<=", ">", ">=", "==", "!="]),
       st.sampled_from(["True", "False", "0", "1"]), st.sampled_from(["True", "False", "0", "1"]))
def test_operator_swaps_and_literal_flips_are_never_degenerate(
        a: str, b: str, c: str, d: str) -> None:
    base = f"def g(x, y):\n    if x {a} y:\n        return {c}\n    return x {a} y\n"
    new = f"def g(x, y):\n    if x {b} y:\n        return {d}\n    return x {b} y\n"
    assert degenerate(base, new) == []


@given(st.lists(st.tuples(st.sampled_from("abc"), st.text("xy =<", max_size=6),
                          st.text("xy =<", max_size=6)), max_size=12))
def test_smallest_first_keeps_the_sites_order_and_orders_each_by_size(
        rows: list[tuple[str, str, str]]) -> None:
    pool = [{"site": s, "digest": str(i), "edits": [{"search": a, "replace": b}]}
            for i, (s, a, b) in enumerate(rows)]
    ordered = smallest_first(pool)
    assert sorted(c["digest"] for c in ordered) == sorted(c["digest"] for c in pool)
    sites = [c["site"] for c in ordered]
    assert sites == sorted(sites, key=[c["site"] for c in pool].index)  # grouped, first-seen
    for site in set(sites):
        sizes = [change_size(c) for c in ordered if c["site"] == site]
        assert sizes == sorted(sizes)


def test_every_gated_arm_carries_the_guards_and_passes_the_model_checker() -> None:
    for name, a in ARMS.items():
        if a.free_agent or not a.single_l:
            continue
        before, after = graph_for(a, False), graph_for(a, True)
        # the guards change the verdict of no arm (no_gates is red without them too)
        assert check(after).ok == check(before).ok == (name != "no_gates")
        added = {(t.from_, t.to): t.guard[len(b.guard):] for t, b in
                 zip(after.transitions, before.transitions, strict=True) if t.guard != b.guard}
        # a guard joins an edge's gate only where the edge has one (not with the gates off)
        gated = {(t.from_, t.to) for t in before.transitions if t.guard}
        assert added == {edge: preds for edge, preds in GUARDS.items() if edge in gated}
        assert bool(added) == (name != "no_gates")


def _loop_task(root: Path) -> Task:
    """textkit plus `leading_spaces`, whose loop exit test is mutated (`!=` made `==`): the
    visible failing test passes when the loop never runs; a hidden test does not."""
    core = write_repo(root).joinpath("textkit", "core.py")
    fn = ("\n\ndef leading_spaces(text):\n    n = 0\n    while True:\n"
          "        if n >= len(text) or text[n] != \" \":\n            break\n"
          "        n += 1\n    return n\n")
    core.write_text(core.read_text() + fn)
    (root / "tests" / "test_spaces.py").write_text(
        "from textkit.core import leading_spaces\n\n"
        "def test_no_spaces():\n    assert leading_spaces('abc') == 0\n\n"
        "def test_one_space():\n    assert leading_spaces(' a') == 1\n\n"
        "def test_two_spaces():\n    assert leading_spaces('  ab') == 2\n")
    lines = core.read_text().splitlines()
    line = lines.index("        if n >= len(text) or text[n] != \" \":") + 1
    return Task(task_id="textkit-loop", package="textkit", version="0.1", sha256="0" * 64,
                source_dir=str(root),
                mutation=Mutation("textkit/core.py", line, "compare", lines[line - 1],
                                  lines[line - 1].replace("!=", "==")),
                visible_failing=("tests/test_spaces.py::test_no_spaces",),
                hidden=("tests/test_spaces.py::test_two_spaces",))


class _Ctx:
    """What a body reads and calls, calling the run's real tools and keeping each payload."""

    def __init__(self, setup: Any, artifacts: dict[str, Any],
                 inputs: dict[str, Any] | None = None) -> None:
        self.inputs = inputs or {}
        self.artifacts = artifacts
        self.tools = setup.tools.registry()
        self.calls: list[tuple[str, Any]] = []

    def artifact(self, name: str) -> Any:
        return self.artifacts.get(name)

    def tool(self, name: str, payload: Any) -> Any:
        self.calls.append((name, payload))
        return self.tools[name](payload)


@BWRAP
def test_the_generator_marks_a_loop_switched_off_and_the_bodies_never_choose_it(
        tmp_path: Path) -> None:
    task = _loop_task(tmp_path / "repo")
    setup = prepare(task, arm("arm4"), FaultPlan(), None, tmp_path / "w", SETTINGS)
    core = (tmp_path / "repo" / "textkit" / "core.py").read_text().splitlines()
    loop = core.index("    while True:") + 1
    site = {"file": "textkit/core.py", "line": loop, "function": "leading_spaces", "score": 1}
    res = setup.tools.registry()["patch.generate"]({"generator": "template", "sites": [site]})
    marked = [c for c in res["candidates"] if c["degenerate"]]
    assert marked and any("not (True)" in e["replace"] for c in marked for e in c["edits"])
    assert "loop condition made constant-false" in marked[0]["degenerate"][0]
    ctx = _Ctx(setup, {"Diagnosis": {}, "LocalizationResult": {}})
    with pytest.raises(Exception, match="degenerate rewrite"):
        setup.bodies._generate(ctx, {"sites": [site]})  # nothing but degenerate ones there
    assert {c["digest"] for c in marked} <= set(setup.bodies.screened_out)
    # REVIEW's second line: the patch applied anyway is a verified defect
    patch = {"edits": marked[0]["edits"]}
    review = setup.tools.registry()["review.critic"]({"patch": patch, "guards": True})
    assert review["degenerate"] == 1 and review["verified_defects"] == 1
    unguarded = setup.tools.registry()["review.critic"]({"patch": patch})
    assert unguarded["degenerate"] == 1 and unguarded["verified_defects"] == 0


@BWRAP
def test_validate_runs_the_whole_visible_suite_when_regression_did_not_check_this_patch(
        tmp_path: Path) -> None:
    task = _loop_task(tmp_path / "repo")
    setup = prepare(task, arm("arm4"), FaultPlan(), None, tmp_path / "w", SETTINGS)
    bodies = setup.bodies
    bodies.applied = "patch-b"
    green = {"failed": 0, "passed": 1}
    stale = {"regressions": 0, "still_failing": [], "checked": 12, "workspace": "patch-a",
             "regressed": []}
    ctx = _Ctx(setup, {"TestResult": green, "RegressionResult": stale,
                       "Review": {"verified_defects": 0}})
    result = bodies.validate(ctx)
    # the bug is still in the tree: the whole visible suite (hidden test deselected) fails
    suite_run = [p for n, p in ctx.calls if n == "test.run"]
    assert suite_run and suite_run[0]["select"] == []
    assert result["accepted"] == 0 and result["suite_checked"] > 0
    assert any("test_no_spaces" in r for r in result["reasons"])
    # REGRESSION's run of this very patch is reused, not run again
    ctx = _Ctx(setup, {"TestResult": green, "RegressionResult": {**stale,
                                                                 "workspace": "patch-b"},
                       "Review": {"verified_defects": 0}})
    result = bodies.validate(ctx)
    assert [n for n, _ in ctx.calls] == ["validate.accept"]
    assert result["accepted"] == 1 and result["suite_checked"] == 12


@BWRAP
def test_arm4_with_the_guards_resolves_the_loop_bug_with_a_real_fix(tmp_path: Path) -> None:
    task = _loop_task(tmp_path / "repo")
    task = Task(**{**task.__dict__, "visible_failing": (
        *task.visible_failing, "tests/test_spaces.py::test_one_space")})
    out = solve(task, arm("arm4"), FaultPlan(), workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT", out.reason
    assert out.instruments.resolved == 1
    assert out.details["patch"]["at_injected_line"]
