"""Repository tests in the sandbox: real bubblewrap, real pytest, real coverage."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from coding_repo import CORE, write_repo

from frostline.coding.testrun import (
    SandboxSettings,
    TestsDidNotRun,
    run_pytest,
    run_python,
    screen_candidates,
)
from frostline.runtime.sandbox import SandboxUnavailable

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
FAST = SandboxSettings(wall_seconds=120, test_timeout=3)


def test_outcomes_failures_and_per_test_coverage(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    report = run_pytest(root, FAST, coverage=True,
                        deselect=["tests/test_core.py::test_clamp_above"])
    assert report.exit_code == 1
    assert report.failed == ("tests/test_core.py::test_clamp_edges",
                             "tests/test_core.py::test_clamp_inside")
    assert "tests/test_core.py::test_clamp_above" not in report.outcomes  # deselected
    assert len(report.passed) == 7
    inside = next(f for f in report.failures if f.test.endswith("test_clamp_inside"))
    assert 'File "/workspace/tests/test_core.py"' in inside.text
    assert "AssertionError: assert 10 == 5" in inside.text
    line = CORE.splitlines().index("    if value > high:") + 1
    assert report.coverage["textkit/core.py"][line] == (
        "tests/test_core.py::test_clamp_edges", "tests/test_core.py::test_clamp_inside")
    assert not (root / ".pytest_cache").exists() and not list(root.rglob("__pycache__"))


def test_a_hanging_test_fails_on_its_timeout_and_the_run_goes_on(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "tests" / "test_hang.py").write_text(
        "def test_hang():\n    while True:\n        pass\n\ndef test_after():\n    assert True\n")
    report = run_pytest(root, SandboxSettings(wall_seconds=120, test_timeout=1),
                        select=["tests/test_hang.py"])
    assert report.outcomes == {"tests/test_hang.py::test_hang": "failed",
                               "tests/test_hang.py::test_after": "passed"}
    assert "TestTimeout" in report.failures[0].text


def test_no_network_and_nothing_outside_the_workspace_is_writable(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "tests" / "test_escape.py").write_text(
        "import socket, pytest\n\n"
        "def test_network():\n    with pytest.raises(OSError):\n"
        "        socket.create_connection(('127.0.0.1', 5432), timeout=2)\n\n"
        "def test_outside():\n    with pytest.raises(OSError):\n"
        "        open('/usr/frostline-escape', 'w')\n\n"
        "def test_inside():\n    open('written.txt', 'w').write('ok')\n")
    report = run_pytest(root, FAST, select=["tests/test_escape.py"])
    assert report.failed == () and len(report.passed) == 3
    assert (root / "written.txt").read_text() == "ok"


def test_tests_that_do_not_run_are_an_error_with_the_reason(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "tests" / "conftest.py").write_text("raise RuntimeError('broken conftest')\n")
    with pytest.raises(TestsDidNotRun, match="pytest"):
        run_pytest(root, FAST)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TestsDidNotRun, match="no tests were collected"):
        run_pytest(empty, FAST)


def test_a_run_past_its_wall_clock_is_killed(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "tests" / "conftest.py").write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(TestsDidNotRun, match="wall clock"):
        run_pytest(root, SandboxSettings(wall_seconds=3, test_timeout=1))


def test_without_bubblewrap_nothing_runs_and_the_error_says_so(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    missing = SandboxSettings(bwrap=str(tmp_path / "no-bwrap"))
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        run_pytest(root, missing)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        run_python(root, ["-c", "pass"], missing)


def test_screening_runs_each_candidate_and_restores_the_tree(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    mutated = (root / "textkit/core.py").read_text()
    hang = mutated.replace("    if low > high:", "    while True:\n        pass\n    if low > high:")
    candidates = [{"textkit/core.py": CORE}, {"textkit/core.py": mutated},
                  {"textkit/core.py": hang}, {"textkit/core.py": CORE}]
    s = screen_candidates(root, SandboxSettings(wall_seconds=120, test_timeout=1), candidates,
                          select=["tests/test_core.py::test_clamp_inside"])
    assert s.results[0] == () and s.results[3] == ()
    assert s.results[1] == ("tests/test_core.py::test_clamp_inside",)
    assert s.results[2] == ("tests/test_core.py::test_clamp_inside",)  # timed out, not hung
    assert (root / "textkit/core.py").read_text() == mutated


def test_a_timeout_ends_its_candidates_run_and_counts_what_it_never_reached(
        tmp_path: Path) -> None:
    """In screening, the first test past its timeout ends that candidate's pytest run: the
    tests after it do not run (each could spend its whole timeout), they count as failed, and
    the next candidate is screened as usual."""
    root = write_repo(tmp_path / "repo", "clamp_gt")
    probe = ("import pathlib\n\n"
             "def test_a():\n    while True:\n        pass\n\n"
             "def test_b():\n    pathlib.Path('reached-b').write_text('1')\n")
    select = ["tests/test_probe.py::test_a", "tests/test_probe.py::test_b"]
    (root / "tests/test_probe.py").write_text("")
    candidates = [{"tests/test_probe.py": probe},
                  {"tests/test_probe.py": probe.replace("while True:\n        pass", "pass")}]
    s = screen_candidates(root, SandboxSettings(wall_seconds=120, test_timeout=1), candidates,
                          select=select)
    assert s.expired == (0,) and s.stopped is None and not s.timed_out
    assert s.results == (tuple(select), ())
    # the second candidate reached test_b; the first did not (test_b writes, test_a hangs)
    assert (root / "reached-b").read_text() == "1"


def test_a_timeout_in_the_confirming_run_counts_only_its_tests(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    probe = ("def test_quick():\n    pass\n\n"
             "def test_hang():\n    while True:\n        pass\n\n"
             "def test_later():\n    pass\n")
    confirm = ["tests/test_probe.py::test_hang", "tests/test_probe.py::test_later"]
    (root / "tests/test_probe.py").write_text("")
    s = screen_candidates(root, SandboxSettings(wall_seconds=120, test_timeout=1),
                          [{"tests/test_probe.py": probe}],
                          select=["tests/test_probe.py::test_quick"], confirm=confirm)
    assert s.expired == (0,) and s.results == (tuple(confirm),)


def test_a_candidate_stuck_in_c_code_stops_the_screening_and_is_named(tmp_path: Path) -> None:
    """SIGALRM cannot interrupt a loop that never returns to the interpreter; the hard stop
    ends the screening process instead of the run's wall clock, the candidates before it keep
    their results, and the screening says which one stopped it."""
    root = write_repo(tmp_path / "repo", "clamp_gt")
    mutated = (root / "textkit/core.py").read_text()
    spin = mutated.replace("    if low > high:", "    import itertools\n"
                           "    sum(itertools.repeat(1, 10 ** 12))\n    if low > high:")
    candidates = [{"textkit/core.py": mutated}, {"textkit/core.py": spin},
                  {"textkit/core.py": CORE}]
    s = screen_candidates(root, SandboxSettings(wall_seconds=240, test_timeout=1), candidates,
                          select=["tests/test_core.py::test_clamp_inside"])
    assert not s.timed_out and s.stopped == 1
    assert s.results == (("tests/test_core.py::test_clamp_inside",), None, None)
    assert (root / "textkit/core.py").read_text() == mutated


class _RepairContext:
    """What REPAIR reads and calls: its Patch input's alternatives, stored artifacts, and the
    run's real tools."""

    def __init__(self, setup: Any, alternatives: list[Any], artifacts: dict[str, Any]) -> None:
        self.inputs = {"Patch": {"alternatives": alternatives}}
        self.artifacts = artifacts
        self.tools = setup.tools.registry()

    def artifact(self, name: str) -> object:
        return self.artifacts.get(name)

    def tool(self, name: str, payload: object) -> object:
        return self.tools[name](payload)


def test_repair_never_screens_again_the_candidate_that_stopped_a_screening(
        tmp_path: Path) -> None:
    from coding_repo import make_task

    from frostline.coding.arms import ARMS
    from frostline.coding.generate import candidate
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare

    inside = "tests/test_core.py::test_clamp_inside"
    task = make_task(tmp_path / "repo", "clamp_gt", visible=(inside,))
    setup = prepare(task, ARMS["arm4"], FaultPlan(0.0, 0), None, tmp_path / "work",
                    SolveSettings(sandbox=SandboxSettings(wall_seconds=240, test_timeout=1)))
    line = "    if value < high:"  # the bug, as the workspace has it
    spin = candidate([{"file": "textkit/core.py", "search": line, "replace":
                       "    import itertools\n    sum(itertools.repeat(1, 10 ** 12))\n" + line}],
                     "template", "spin", "textkit/core.py:1")
    fix = candidate([{"file": "textkit/core.py", "search": line,
                      "replace": "    if value > high:"}], "template", "compare", "x")
    res = setup.tools.repair_iterative({"candidates": [spin, fix], "select": [inside]})
    assert res["stopped"] == spin["digest"] and res["first_passing"] == -1

    bodies = setup.bodies
    patch = bodies.repair(_RepairContext(setup, [spin, fix], {}))  # type: ignore[arg-type]
    # the stuck candidate is set aside and the rest screened again in the same visit
    assert patch["digest"] == fix["digest"] and bodies.tried == [spin["digest"]]
    assert setup.tools.executed.count("repair.iterative") == 2


def test_a_candidate_is_screened_in_place_of_the_patch_in_force(tmp_path: Path) -> None:
    """The patch in force broke another file; a candidate that fixes the bug elsewhere must be
    screened on the base (as EDIT would apply it), not on top of that patch."""
    from coding_repo import INIT, make_task

    from frostline.coding.arms import ARMS
    from frostline.coding.generate import candidate
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare

    inside = "tests/test_core.py::test_clamp_inside"
    task = make_task(tmp_path / "repo", "clamp_gt", visible=(inside,))
    setup = prepare(task, ARMS["arm4"], FaultPlan(0.0, 0), None, tmp_path / "work",
                    SolveSettings(sandbox=FAST))
    export = INIT.splitlines()[0]
    wrong = candidate([{"file": "textkit/__init__.py", "search": export, "replace":
                        export + "\nclamp = lambda value, low, high: None"}],
                      "template", "wrong", "textkit/__init__.py:1")
    setup.tools.edit_apply({"patch": {"edits": wrong["edits"]}})
    assert "lambda" in (setup.workspace.tree / "textkit/__init__.py").read_text()
    fix = candidate([{"file": "textkit/core.py", "search": "    if value < high:",
                      "replace": "    if value > high:"}], "template", "compare", "x")
    res = setup.tools.repair_iterative({"candidates": [fix], "select": [inside]})
    assert res["first_passing"] == 0, res["results"]
    # the screening put the tree back as it was: the patch in force is still there
    assert "lambda" in (setup.workspace.tree / "textkit/__init__.py").read_text()


@pytest.mark.parametrize("cap", [96, 1])
def test_repair_goes_down_the_ranking_within_one_visit_while_nothing_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int) -> None:
    """No candidate of the plan's sites passes the screening: rather than send one to TEST
    (a certain failure and a spent retry), REPAIR screens the next ranked sites in the same
    visit, up to REPAIR_SCREEN_CAP candidates."""
    from coding_repo import bug_line, make_task

    from frostline.coding import workflow
    from frostline.coding.arms import ARMS
    from frostline.coding.generate import candidate
    from frostline.coding.impact import plan
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare

    monkeypatch.setattr(workflow, "REPAIR_SCREEN_CAP", cap)
    inside = "tests/test_core.py::test_clamp_inside"
    task = make_task(tmp_path / "repo", "clamp_gt", visible=(inside,))
    setup = prepare(task, ARMS["arm4"], FaultPlan(0.0, 0), None, tmp_path / "work",
                    SolveSettings(sandbox=FAST))
    bug = bug_line("clamp_gt")
    lines = [7, 9, 18, 24, 30, 32, 33, 34, bug]  # the bug's statement ranked ninth
    loc = {"candidates": [{"site": f"textkit/core.py:{n}", "file": "textkit/core.py",
                           "line": n, "function": "textkit.core.f", "score": 1 - i / 100}
                          for i, n in enumerate(lines)]}
    p = plan(loc, {})
    assert bug not in [s["line"] for s in p["sites"]]
    bad = candidate([{"file": "textkit/core.py", "search": "    words = [w for w in text.split() "
                      "if w]", "replace": "    words = [w for w in text.split()]"}],
                    "template", "comprehension", "textkit/core.py:18")

    ctx = _RepairContext(setup, [bad], {"LocalizationResult": loc, "Plan": p})
    patch = setup.bodies.repair(ctx)  # type: ignore[arg-type]
    if cap > 1:
        assert patch["site"] == f"textkit/core.py:{bug}"
        assert setup.tools.executed.count("repair.iterative") == 2
        assert setup.tools.executed.count("patch.generate") == 1
    else:  # the cap spent on the first screening: the best of it goes to TEST
        assert patch["digest"] == bad["digest"]
        assert setup.tools.executed.count("repair.iterative") == 1


def test_a_read_write_bind_needs_its_own_place() -> None:
    from frostline.runtime.sandbox import SandboxProfile, sandbox_argv

    for dest in ("/", "/tmp", "relative"):
        with pytest.raises(ValueError, match="read-write bind"):
            SandboxProfile(rw_binds=(("/x", dest),))
    argv = sandbox_argv(["true"], SandboxProfile(rw_binds=(("/x", "/workspace"),),
                                                 chdir="/workspace"), seccomp_fd=3)
    i = argv.index("--bind")
    assert argv[i:i + 3] == ["--bind", "/x", "/workspace"]
    assert argv[argv.index("--chdir") + 1] == "/workspace"
    root_ro = next(j for j in range(len(argv) - 1) if argv[j:j + 2] == ["--remount-ro", "/"])
    assert i < root_ro  # bound before the root is made read-only, which leaves the bind as is


def test_candidates_beyond_the_kernel_argument_limit_are_screened(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    padding = "# " + "x" * 200 + "\n"
    big = CORE + padding * 800  # ~160 KiB per candidate: more than one argv string may carry
    s = screen_candidates(root, FAST, [{"textkit/core.py": big}] * 3,
                          select=["tests/test_core.py::test_chunk"])
    assert s.results == ((), (), ())


def test_screening_confirms_on_more_tests_and_stops_at_the_first_that_passes(
        tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    mutated = (root / "textkit/core.py").read_text()
    # passes the failing test but breaks another: the confirmation catches it
    breaks = CORE.replace("    if value < low:\n        return low\n", "")
    candidates = [{"textkit/core.py": breaks}, {"textkit/core.py": CORE},
                  {"textkit/core.py": CORE}]
    s = screen_candidates(root, FAST, candidates, select=["tests/test_core.py::test_clamp_inside"],
                          confirm=["tests/test_core.py::test_clamp_below"], stop_first=True)
    assert s.results == (("tests/test_core.py::test_clamp_below",), (), None)
    assert (root / "textkit/core.py").read_text() == mutated
