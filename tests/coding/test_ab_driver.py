"""The A/B driver with a test double of `solve`: every arm on the same tasks, failures contained."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from frostline.coding.ab.decide import decide_all
from frostline.coding.ab.driver import load_solver, run_ab, spread
from frostline.coding.ab.report import build_report, to_markdown, write_report
from frostline.coding.arms import ALL_NAMES, ARMS, parse_names
from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, INSTRUMENT_KEYS, FaultPlan
from frostline.coding.tasks.split import load_tasks
from tests.coding.ab_doubles import (
    DIE,
    EXPLODE,
    HANG,
    declining_solve_double,
    scripted_solve_double,
)
from tests.coding.ab_fixtures import sealed_tasks


def test_the_table_names_every_arm_and_ablation() -> None:
    assert tuple(ARMS) == ALL_NAMES == (*ARM_NAMES, *ABLATION_NAMES)
    assert {n for n, a in ARMS.items() if a.needs_model} == {"free_agent", "no_single_l"}
    for name in ABLATION_NAMES:  # one mechanism off at a time, from arm 4
        differs = {k for k, v in vars(ARMS[name]).items() if k not in ("name", "needs_model")
                   and v != getattr(ARMS["arm4"], k)}
        assert len(differs) == 1 and name == f"no_{differs.pop()}"
    assert parse_names(["arm1,arm4", "nope"]) == (["arm1", "arm4"], ["nope"])


def test_every_arm_sees_the_same_tasks_and_failures_stay_contained(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 6, (EXPLODE, DIE)), "heldout")
    run = run_ab(tasks, list(ALL_NAMES), scripted_solve_double, faults=FaultPlan(0.1, 7),
                 jobs=2, workdir=tmp_path / "work")
    assert set(run.not_run) == {"free_agent", "no_single_l"}
    ids = [t.task_id for t in tasks]
    for outcomes in run.outcomes.values():
        assert [o.task_id for o in outcomes] == ids
        ends = {o.task_id: (o.status, o.reason) for o in outcomes}
        assert ends[ids[-2]] == ("TERMINAL_REJECT", "driver: RuntimeError: scripted failure")
        assert ends[ids[-1]][1] == "driver: the worker process died (exit code 3)"
        assert outcomes[-1].instruments.wall_s > 0
        assert all(o.instruments.wall_s > 0 for o in outcomes[:-2])
    # the tasks after the crash were still solved
    assert sum(o.instruments.resolved for o in run.outcomes["arm4"]) == len(ids) - 2
    assert not list((tmp_path / "work").rglob("scratch"))


def test_jobs_run_task_by_task_with_the_arms_order_rotated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Load that changes during a run weighs on every arm alike."""
    order_file = tmp_path / "order"
    monkeypatch.setenv("FROSTLINE_ORDER_FILE", str(order_file))
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 3, ()), "heldout")
    run = run_ab(tasks, ["arm1", "arm2", "arm4"], scripted_solve_double,
                 faults=FaultPlan(0.0, 0), jobs=1, workdir=tmp_path / "work")
    ran = [tuple(line.split()) for line in order_file.read_text().splitlines()]
    t = [x.task_id for x in tasks]
    assert ran == [(t[0], "arm1"), (t[0], "arm2"), (t[0], "arm4"),
                   (t[1], "arm2"), (t[1], "arm4"), (t[1], "arm1"),
                   (t[2], "arm4"), (t[2], "arm1"), (t[2], "arm2")]
    for name in ("arm1", "arm2", "arm4"):  # each arm's outcomes still in task order
        assert [o.task_id for o in run.outcomes[name]] == t
        assert {o.arm for o in run.outcomes[name]} == {name}


def test_a_task_past_its_time_limit_is_killed_with_its_children(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pidfile, tmpfile = tmp_path / "hang.pid", tmp_path / "hang.tmp"
    monkeypatch.setenv("FROSTLINE_HANG_PIDFILE", str(pidfile))
    monkeypatch.setenv("FROSTLINE_HANG_TMPFILE", str(tmpfile))
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 3, (HANG,)), "heldout")
    heard: list[str] = []
    run = run_ab(tasks, ["arm4"], scripted_solve_double, faults=FaultPlan(0.0, 0), jobs=2,
                 workdir=tmp_path / "work", task_timeout=3.0, progress=heard.append)
    assert not list((tmp_path / "work").rglob("scratch"))  # the killed task's folder too
    # and its temporary files: a job's temporary folder lives beside its folder
    made = Path(tmpfile.read_text())
    assert (tmp_path / "work") in made.parents and not made.exists()
    assert not list((tmp_path / "work").rglob("*.tmp"))
    # one line per task as it ends, then the arm's total
    per_task = [line for line in heard if line.startswith("[")]
    assert len(per_task) == len(tasks) and per_task[-1].startswith(f"[{len(tasks)}/{len(tasks)}]")
    assert any(tasks[-1].task_id in line and "TERMINAL_REJECT" in line for line in per_task)
    assert heard[-1] == f"arm4: {len(tasks) - 1}/{len(tasks)} resolved"
    ends = {o.task_id: (o.status, o.reason) for o in run.outcomes["arm4"]}
    assert ends[tasks[-1].task_id] == (
        "TERMINAL_REJECT", "driver: the task ran past its 3 s time limit and was killed")
    # the time it ran counts in the wall-time instrument like any other task's
    assert run.outcomes["arm4"][-1].instruments.wall_s >= 3.0
    assert [o.task_id for o in run.outcomes["arm4"]] == [t.task_id for t in tasks]
    assert sum(o.instruments.resolved for o in run.outcomes["arm4"]) == len(tasks) - 1
    child = int(pidfile.read_text())
    for _ in range(50):  # the kill reaches the task's children too (a zombie is dead)
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the hung task's child {child} outlived the kill")


def test_a_model_lets_the_model_arms_run(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 2), "heldout")
    run = run_ab(tasks, ["free_agent", "no_single_l"], scripted_solve_double,
                 faults=FaultPlan(), model=object(), model_label="m", workdir=tmp_path / "w")
    assert not run.not_run and all(o.instruments.tokens > 0 for o in run.outcomes["free_agent"])


def test_a_missing_solver_leaves_every_arm_not_run_with_the_reason(tmp_path: Path) -> None:
    solver, why = load_solver("frostline.coding.no_such_module:solve")
    assert solver is None and "not part of this installation" in why
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 2), "heldout")
    run = run_ab(tasks, ["arm1", "arm3"], None, faults=FaultPlan(), workdir=tmp_path / "w",
                 solver_reason=why)
    assert run.not_run == {"arm1": why, "arm3": why} and not run.outcomes


def test_the_report_has_the_contract_shape(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 6), "heldout")
    names = ["arm1", "arm2", "arm4", "no_lattice"]
    run = run_ab(tasks, names, scripted_solve_double, faults=FaultPlan(), jobs=2,
                 workdir=tmp_path / "w")
    report = build_report(run, decide_all(run.outcomes, run.not_run, names),
                          tasks_dir=str(tmp_path / "t"), split="heldout")
    assert list(report["arms"]) == list(ALL_NAMES)
    for name, entry in report["arms"].items():
        expected = {"tasks", *INSTRUMENT_KEYS} | ({"not_run"} if name not in names else set())
        assert set(entry) == expected
    assert report["arms"]["arm4"]["repeated_work"] == 0 and report["arms"]["arm1"]["repeated_work"] > 0
    lattice = next(d for d in report["decisions"] if d["subject"] == "lattice")
    assert lattice["verdict"] == "kept"
    assert all(set(c) >= {"gain", "ci95", "verdict", "n"} for c in lattice["evidence"])
    markdown = to_markdown(report, ["x/resolve_vs_tokens.png"])
    assert "upper bound" in markdown and "![resolve_vs_tokens](resolve_vs_tokens.png)" in markdown
    paths = write_report(tmp_path / "r", report, run)
    assert all(p.stat().st_size for p in paths)
    assert len((tmp_path / "r" / "outcomes.jsonl").read_text().splitlines()) == 4 * len(tasks)


def test_a_limited_slice_spans_the_packages(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 4), "all")
    assert spread(tasks, None) == tasks
    head = spread(tasks, 3)
    assert len({t.package for t in head}) == 3
    assert [t.task_id for t in head] == [f"{p}-0" for p in ("alpha", "beta", "gamma")]
    assert len(spread(tasks, 100)) == len(tasks)


def test_an_arm_solve_declines_is_not_run(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 2), "heldout")
    run = run_ab(tasks, ["arm4"], declining_solve_double, faults=FaultPlan(),
                 workdir=tmp_path / "w")
    assert run.not_run == {"arm4": "arm4 declined by the double"} and not run.outcomes
