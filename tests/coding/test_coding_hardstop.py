"""The hard stop in every test run (not only in screening), and the per-test timeout scaled to
the suite's measured time: real bubblewrap, real pytest, tests spinning in C code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from coding_repo import write_repo

from frostline.coding import testrun
from frostline.coding.testrun import (
    TIMEOUT_FLOOR_S,
    SandboxSettings,
    TestReport,
    TestsDidNotRun,
    run_pytest,
    scaled_timeout,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
#: A statement that never returns to the interpreter: SIGALRM cannot interrupt it.
SPIN = "    import itertools\n    sum(itertools.repeat(1, 10 ** 12))\n"
STOPPING = SandboxSettings(wall_seconds=240, test_timeout=1)


def _spinning(root: Path, names: tuple[str, ...]) -> None:
    body = "".join(f"def {n}():\n{SPIN}\n" for n in names)
    (root / "tests" / "test_spin.py").write_text(
        "import pathlib\n\n" + body + "def test_after():\n"
        "    pathlib.Path('reached-after').write_text('1')\n")


@pytest.mark.timeout(200)
@pytest.mark.parametrize("coverage", [False, True])
def test_a_test_spinning_in_c_fails_and_the_run_goes_on_without_it(
        tmp_path: Path, coverage: bool) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    _spinning(root, ("test_spin",))
    report = run_pytest(root, STOPPING, coverage=coverage)
    spin = "tests/test_spin.py::test_spin"
    assert report.hard_stopped == (spin,)
    assert report.outcomes[spin] == "failed"
    assert report.outcomes["tests/test_spin.py::test_after"] == "passed"
    assert (root / "reached-after").read_text() == "1"
    assert set(report.failed) == {spin, "tests/test_core.py::test_clamp_above",
                                  "tests/test_core.py::test_clamp_edges",
                                  "tests/test_core.py::test_clamp_inside"}
    failure = next(f for f in report.failures if f.test == spin)
    assert "hard stop ended it" in failure.message and "Timeout" in failure.text
    if coverage:  # the run again without the stuck test measured the rest
        assert report.coverage["textkit/core.py"]
    assert report.to_dict()["hard_stopped"] == [spin]


@pytest.mark.timeout(200)
def test_a_run_that_loses_too_many_tests_to_the_hard_stop_is_given_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testrun, "MAX_HARD_STOPS", 1)
    root = write_repo(tmp_path / "repo")
    _spinning(root, ("test_spin_a", "test_spin_b"))
    with pytest.raises(TestsDidNotRun, match="hard stop ended 2 tests") as info:
        run_pytest(root, STOPPING, select=["tests/test_spin.py"])
    assert info.value.fields["reason"] == "hard_stop"
    assert info.value.fields["stopped"] == ["tests/test_spin.py::test_spin_a",
                                            "tests/test_spin.py::test_spin_b"]


def test_the_timeout_is_scaled_to_the_suites_slowest_test(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "tests" / "test_slow.py").write_text(
        "import time\n\ndef test_slow():\n    time.sleep(0.3)\n")
    report = run_pytest(root, SandboxSettings(wall_seconds=120, test_timeout=20))
    slowest = report.durations["tests/test_slow.py::test_slow"]
    assert slowest >= 0.3 and set(report.durations) == set(report.outcomes)
    assert scaled_timeout(report, 20.0) == round(max(TIMEOUT_FLOOR_S, 10 * slowest), 3)
    assert scaled_timeout(report, 1.5) == 1.5  # never above the configured timeout
    fast = TestReport(0, {"t": "passed"}, (), 0.1, durations={"t": 0.001})
    assert scaled_timeout(fast, 20.0) == TIMEOUT_FLOOR_S
    assert scaled_timeout(TestReport(0, {}, (), 0.0), 20.0) == 20.0  # nothing measured


def test_localize_scales_the_timeout_and_the_test_tools_use_it(tmp_path: Path) -> None:
    """LOCALIZE measures the suite and offers the later runs a timeout scaled to it; a test
    that loops under a patch then costs that timeout, not the configured one."""
    from coding_repo import make_task

    from frostline.coding.arms import arm
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare

    inside = "tests/test_core.py::test_clamp_inside"
    task = make_task(tmp_path / "repo", "clamp_gt", visible=(inside,))
    settings = SolveSettings(sandbox=SandboxSettings(wall_seconds=240, test_timeout=60))
    setup = prepare(task, arm("arm4"), FaultPlan(), None, tmp_path / "w", settings)
    tools = setup.tools.registry()
    loc = tools["trace.read"]({"mode": "spectrum"})
    assert TIMEOUT_FLOOR_S <= loc["test_timeout"] < 60 and loc["hard_stopped"] == []
    loop = "    while True:\n        pass\n"
    setup.tools.edit_apply({"patch": {"edits": [{
        "file": "textkit/core.py", "search": "    if value < high:",
        "replace": loop + "    if value < high:"}]}})
    res = tools["test.run"]({"select": [inside], "timeout": loc["test_timeout"]})
    assert res["failed"] == 1
    assert f"ran past its {loc['test_timeout']:g} s timeout" in res["failures"][0]["text"]


class _Recording:
    """What a body reads and calls, calling the run's real tools and keeping each payload."""

    def __init__(self, setup: object, artifacts: dict[str, object]) -> None:
        self.inputs: dict[str, object] = {}
        self.artifacts = artifacts
        self.tools = setup.tools.registry()  # type: ignore[attr-defined]
        self.payloads: dict[str, object] = {}

    def artifact(self, name: str) -> object:
        return self.artifacts.get(name)

    def tool(self, name: str, payload: dict[str, object]) -> object:
        self.payloads[name] = payload
        return self.tools[name](payload)


def test_test_and_regression_runs_carry_localizes_timeout(tmp_path: Path) -> None:
    from coding_repo import make_task

    from frostline.coding.arms import arm
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare

    inside = "tests/test_core.py::test_clamp_inside"
    task = make_task(tmp_path / "repo", "clamp_gt", visible=(inside,))
    setup = prepare(task, arm("arm4"), FaultPlan(), None, tmp_path / "w",
                    SolveSettings(sandbox=SandboxSettings(wall_seconds=240, test_timeout=60)))
    ctx = _Recording(setup, {"LocalizationResult": {"test_timeout": 2.5,
                                                    "failing_tests": [inside]}})
    setup.bodies.test(ctx)  # type: ignore[arg-type]
    setup.bodies.regression(ctx)  # type: ignore[arg-type]
    assert ctx.payloads["test.run"]["timeout"] == 2.5  # type: ignore[index]
    assert ctx.payloads["regression.check"]["timeout"] == 2.5  # type: ignore[index]
