"""solve(): the arms on a real repository with an injected bug, and bad input ending in
TERMINAL_REJECT with its reason (never an exception). Real bubblewrap, pytest and coverage.

CI runs one bug per arm family; FROSTLINE_SLOW=1 runs every arm on every injected bug.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from coding_repo import BUGS, CORE, make_task

from frostline.coding.arms import ARMS, arm
from frostline.coding.interface import FaultPlan, Task
from frostline.coding.setup import SolveSettings, prepare
from frostline.coding.solve import solve
from frostline.coding.testrun import SandboxSettings

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
SETTINGS = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5))
T = "tests/test_core.py::"
TASKS = {"clamp_gt": ((f"{T}test_clamp_inside",), (f"{T}test_clamp_above", f"{T}test_clamp_edges")),
         "clamp_lt": ((f"{T}test_clamp_below",), (f"{T}test_clamp_edges",)),
         "chunk_slice": ((f"{T}test_chunk",), ()),
         "palindrome_not": ((f"{T}test_palindrome",), ())}
SLOW = pytest.mark.skipif(not os.environ.get("FROSTLINE_SLOW"),
                          reason="every arm on every bug; set FROSTLINE_SLOW=1 to run it")


def task_for(tmp_path: Path, bug: str) -> Task:
    visible, hidden = TASKS[bug]
    return make_task(tmp_path / "src", bug, visible=visible, hidden=hidden)


def test_arm4_resolves_with_no_illegal_stale_or_repeated_work(tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    out = solve(task, arm("arm4"), FaultPlan(), workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT", out.reason
    i = out.instruments
    assert i.resolved == 1 and i.llm_calls == 0 and i.tokens == 0
    assert i.illegal_actions == i.stale_context == i.repeated_work == i.regressions == 0
    assert out.details["path"][-1] == "TERMINAL_ACCEPT"
    assert (tmp_path / "w" / "workspace" / "tree" / task.mutation.file).read_text() == CORE
    assert out.details["patch"] == {"site": f"{task.mutation.file}:{task.mutation.line}",
                                    "operator": "comparison", "edits": 1, "at_injected_line": True}


def test_the_workflow_never_runs_the_hidden_tests(tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    setup = prepare(task, arm("arm4"), FaultPlan(), None, tmp_path / "w", SETTINGS)
    loc = setup.tools.registry()["trace.read"]({"mode": "spectrum"})
    assert loc["failing_tests"] == [f"{T}test_clamp_inside"]
    regression = setup.tools.registry()["regression.check"]({"baseline_failing": []})
    assert regression["regressed"] == [f"{T}test_clamp_inside"]


def test_the_fixed_pipeline_reruns_everything_and_shows_it(tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    out = solve(task, arm("arm1"), FaultPlan(), workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT", out.reason
    assert out.details["path"].count("RECONNAISSANCE") == 2  # the first patch failed
    assert out.instruments.repeated_work > 0 and out.instruments.redundant_actions > 0
    assert out.instruments.illegal_actions == 0


def test_without_gates_a_wrong_patch_is_accepted_and_the_hidden_tests_say_so(
        tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    out = solve(task, arm("no_gates"), FaultPlan(), workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT" and out.instruments.resolved == 0
    assert out.details["graph_check"] == "red: safety"


def test_without_failure_edges_a_failing_test_terminates(tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    out = solve(task, arm("no_failure_edges"), FaultPlan(), workdir=tmp_path / "w",
                settings=SETTINGS)
    assert out.status == "TERMINAL_REJECT"
    assert "TEST: no forward gate held (TestResult.failed EQ 0)" in out.reason


@pytest.mark.parametrize("case", ["tests_do_not_run", "bug_does_not_reproduce",
                                  "sandbox_dies", "no_bubblewrap", "tree_missing"])
def test_bad_input_ends_in_terminal_reject_with_its_reason(tmp_path: Path, case: str) -> None:
    task = task_for(tmp_path, "clamp_gt")
    settings, faults = SETTINGS, FaultPlan()
    expected = {"tests_do_not_run": "the tests did not run", "bug_does_not_reproduce": "does not reproduce",
                "sandbox_dies": "the sandbox died", "no_bubblewrap": "bubblewrap",
                "tree_missing": "does not exist"}[case]
    if case == "tests_do_not_run":
        (Path(task.source_dir) / "tests" / "conftest.py").write_text("import no_such_module\n")
    elif case == "bug_does_not_reproduce":
        task = Task(**{**task.__dict__, "visible_failing": (f"{T}test_chunk",)})
    elif case == "sandbox_dies":
        faults = FaultPlan(rate=1.0, seed=3, kinds=("sandbox_failure",))
    elif case == "no_bubblewrap":
        settings = SolveSettings(sandbox=SandboxSettings(bwrap=str(tmp_path / "none")))
    else:
        task = Task(**{**task.__dict__, "source_dir": str(tmp_path / "gone")})
    out = solve(task, arm("arm4"), faults, workdir=tmp_path / "w", settings=settings)
    assert out.status == "TERMINAL_REJECT"
    assert expected in out.reason
    assert out.instruments.resolved == 0


def test_arms_that_need_a_model_are_not_run_without_one(tmp_path: Path) -> None:
    task = task_for(tmp_path, "clamp_gt")
    for name in ("free_agent", "no_single_l"):
        out = solve(task, arm(name), FaultPlan(), workdir=tmp_path / name)
        assert out.status == "not_run" and "needs a model" in out.reason


def test_faults_are_the_same_in_every_arm(tmp_path: Path) -> None:
    task = task_for(tmp_path, "palindrome_not")
    faults = FaultPlan(rate=0.5, seed=5, kinds=("test_timeout",))
    outs = [solve(task, arm(a), faults, workdir=tmp_path / a, settings=SETTINGS)
            for a in ("arm2", "arm4")]
    first = [(f["tool"], f["call"]) for f in outs[0].details["faults"]]
    second = [(f["tool"], f["call"]) for f in outs[1].details["faults"]]
    assert first and first[: len(second)] == second[: len(first)]
    for out in outs:
        assert out.status in ("ACCEPT", "TERMINAL_REJECT")
        if out.status == "TERMINAL_REJECT":
            assert "injected fault" in out.reason


@SLOW
@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("name", sorted(a for a, v in ARMS.items() if not v.needs_model))
def test_every_arm_on_every_bug(tmp_path: Path, bug: str, name: str) -> None:
    out = solve(task_for(tmp_path, bug), arm(name), FaultPlan(), workdir=tmp_path / "w",
                settings=SETTINGS)
    assert out.status in ("ACCEPT", "TERMINAL_REJECT"), out
    if name in ("arm2", "arm4", "no_lattice", "no_allowlists"):
        assert out.status == "ACCEPT" and out.instruments.resolved == 1, out.reason
    if name == "arm4":
        assert out.instruments.stale_context == out.instruments.repeated_work == 0
    assert out.instruments.illegal_actions == 0
