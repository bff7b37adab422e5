"""Precision (resolved / accepted) beside the resolve rate, per population, in the A/B report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from frostline.coding.ab.decide import decide_all
from frostline.coding.ab.driver import ABRun
from frostline.coding.ab.precision import (
    POPULATION_LABELS,
    by_population,
    population_of,
    precision,
)
from frostline.coding.ab.report import build_report, to_markdown
from frostline.coding.interface import Instruments, Mutation, Task, TaskOutcome


@dataclass(frozen=True)
class ReleasedTask(Task):
    """A task row as the released-bug builder writes it (with its population)."""

    population: str = "released"


def _task(tid: str, released: bool = False) -> Task:
    kind = ReleasedTask if released else Task
    return kind(task_id=tid, package="p", version="1", sha256="0" * 64, source_dir="/nowhere",
                mutation=Mutation("m.py", 1, "compare", "a", "b"), visible_failing=("t::a",),
                hidden=("t::b",))


def _outcome(tid: str, arm: str, accepted: bool, resolved: bool) -> TaskOutcome:
    return TaskOutcome(tid, arm, "ACCEPT" if accepted else "TERMINAL_REJECT", "",
                       Instruments(resolved=int(resolved)))


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=30))
def test_precision_is_resolved_over_accepted_with_an_interval_around_it(
        runs: list[tuple[bool, bool]]) -> None:
    # a rejected run is never resolved (nothing was submitted)
    outcomes = [_outcome(str(i), "arm4", acc, acc and res) for i, (acc, res) in enumerate(runs)]
    p = precision(outcomes)
    accepted = [res for acc, res in runs if acc]
    assert p["tasks"] == len(runs) and p["accepted"] == len(accepted)
    assert p["accepted_resolved"] == sum(accepted) == p["resolved"]
    if not accepted:
        assert p["precision"] is None and p["precision_ci95"] is None
    else:
        assert p["precision"] == round(sum(accepted) / len(accepted), 4)
        lo, hi = p["precision_ci95"]
        assert 0 <= lo <= p["precision"] <= hi <= 1
    if runs:
        assert p["resolve_rate"] is not None and p["resolve_rate"] <= (p["precision"] or 0) + 1e-9


def test_a_task_without_a_population_is_injected_and_each_is_named_for_what_it_is() -> None:
    assert population_of(_task("a")) == "injected"
    assert population_of(_task("b", released=True)) == "released"
    unnamed = Task(**{**_task("c").__dict__, "mutation": Mutation("m.py", 1, "released", "", "")})
    assert population_of(unnamed) == "released"  # the released builder's operator says so
    tasks = [_task("r1", True), _task("i1"), _task("i2")]
    outcomes = {"arm4": [_outcome("i1", "arm4", True, True), _outcome("i2", "arm4", True, False),
                         _outcome("r1", "arm4", True, False)]}
    pops = by_population(tasks, outcomes)
    assert list(pops) == ["injected", "released"]  # injected first, whatever the task order
    assert pops["injected"]["label"] == POPULATION_LABELS["injected"]
    assert "upper bound" in pops["injected"]["label"]
    assert pops["released"]["label"] == "released bugs fixed upstream"
    assert pops["injected"]["arms"]["arm4"]["precision"] == 0.5
    released = pops["released"]["arms"]["arm4"]
    assert (released["tasks"], released["accepted"], released["precision"]) == (1, 1, 0.0)


def _run(tasks: list[Task]) -> ABRun:
    run = ABRun(tasks=tasks, arms=["arm2", "arm4"])
    for arm in ("arm2", "arm4"):
        # arm 4 accepts every task and resolves the even ones; arm 2 accepts only what it resolves
        run.outcomes[arm] = [_outcome(t.task_id, arm, arm == "arm4" or i % 2 == 0, i % 2 == 0)
                             for i, t in enumerate(tasks)]
    return run


def test_the_report_gives_precision_per_arm_and_population_beside_the_resolve_rate() -> None:
    tasks = [_task(f"i{n}") for n in range(6)] + [_task(f"r{n}", True) for n in range(6)]
    run = _run(tasks)
    report = build_report(run, decide_all(run.outcomes, run.not_run, ["arm2", "arm4"]),
                          tasks_dir="/t", split="heldout")
    arm4 = report["details"]["arm4"]["precision"]
    assert (arm4["accepted"], arm4["accepted_resolved"], arm4["precision"]) == (12, 6, 0.5)
    assert report["details"]["arm2"]["precision"]["precision"] == 1.0
    for pop in ("injected", "released"):
        entry = report["populations"][pop]["arms"]["arm4"]
        assert entry["tasks"] == 6 and entry["resolve_rate"] == 0.5 and entry["precision"] == 0.5
        assert entry["resolve_ci95"] is not None and entry["precision_ci95"] is not None
    decision = next(d for d in report["decisions"] if d["against"] == "arm2")
    assert decision["precision"]["arm4"]["precision"] == 0.5
    assert decision["precision"]["arm2"]["precision"] == 1.0
    markdown = to_markdown(report)
    assert "injected single-site mutants (an upper bound)" in markdown
    assert "released bugs fixed upstream" in markdown
    assert "## Resolve rate and precision by population" in markdown
    assert "precision (reported, not deciding)" in markdown


def test_a_released_only_report_does_not_call_its_tasks_injected_mutants() -> None:
    run = _run([_task(f"r{n}", True) for n in range(6)])
    report = build_report(run, [], tasks_dir="/t", split="heldout")
    markdown = to_markdown(report)
    assert list(report["populations"]) == ["released"]
    assert "injected" not in markdown and "single-site mutants" not in markdown
    assert "bugs found in the wild" in markdown


def test_the_precision_figure_names_the_population(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("matplotlib", reason="the A/B figures need the optional extra `ab`")
    from frostline.coding.ab.figures import FIGURES, draw

    run = _run([_task(f"i{n}") for n in range(6)] + [_task("r0", True)])
    report = build_report(run, [], tasks_dir="/t", split="heldout")
    paths = draw(report, tmp_path)
    assert [Path(p).name for p in paths] == list(FIGURES) and "precision.png" in FIGURES
    assert all(Path(p).stat().st_size > 0 for p in paths)
