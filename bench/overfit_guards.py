"""What the overfit guards change: arm 4 with and without them on the same tasks, side by side.

    python -m bench.overfit_guards --tasks DIR [--split tuning] [--limit N] [--task-timeout S]

For each task (round-robin over packages, as `frostline ab --limit` takes them) arm 4 runs
twice through the A/B driver, once on the graph before the guards (`SolveSettings(guards=False)`)
and once with them, the order alternating from task to task so the machine's load weighs on
both alike. The table gives, per population, resolved, accepted, precision (resolved /
accepted, 95% bootstrap interval), and the median wall time; then the tasks whose outcome
differs. Measure on tuning splits only: the guards are tuned on what they measure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from frostline.coding.ab.driver import run_ab, spread
from frostline.coding.ab.precision import label, population_of, precision
from frostline.coding.arms import ARMS
from frostline.coding.interface import Arm, FaultPlan, Task, TaskOutcome
from frostline.coding.setup import SolveSettings
from frostline.coding.solve import solve
from frostline.coding.tasks.split import load_tasks


def solve_unguarded(task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                    workdir: Path) -> TaskOutcome:
    """`solve` on the graph before the overfit guards."""
    return solve(task, arm, faults, model=model, workdir=workdir,
                 settings=SolveSettings(guards=False))


def solve_guarded(task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                  workdir: Path) -> TaskOutcome:
    """`solve` with the overfit guards (the default)."""
    return solve(task, arm, faults, model=model, workdir=workdir,
                 settings=SolveSettings(guards=True))


def _row(name: str, outcomes: list[TaskOutcome]) -> str:
    p = precision(outcomes)
    ci = p["precision_ci95"]
    prec = "–" if p["precision"] is None else f"{p['precision']:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]"
    wall = statistics.median(o.instruments.wall_s for o in outcomes) if outcomes else 0.0
    return (f"| {name} | {p['tasks']} | {p['resolved']} | {p['accepted']} | {prec} | "
            f"{wall:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--split", default="tuning")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--task-timeout", type=float, default=300.0)
    args = parser.parse_args()
    tasks = spread(load_tasks(Path(args.tasks), args.split), args.limit)
    work = Path(tempfile.mkdtemp(prefix="frostline-guards-"))
    results: dict[str, list[TaskOutcome]] = {"unguarded": [], "guarded": []}
    solvers = {"unguarded": solve_unguarded, "guarded": solve_guarded}
    load = [os.getloadavg()[0]]
    for i, task in enumerate(tasks):
        order = ["unguarded", "guarded"] if i % 2 == 0 else ["guarded", "unguarded"]
        for name in order:
            run = run_ab([task], ["arm4"], solvers[name], faults=FaultPlan(),
                         workdir=work / name, task_timeout=args.task_timeout)
            outcome = run.outcomes["arm4"][0]
            results[name].append(outcome)
            print(f"[{i + 1}/{len(tasks)}] {name} {task.task_id}: {outcome.status} "
                  f"resolved={outcome.instruments.resolved} "
                  f"{outcome.instruments.wall_s:.1f} s", flush=True)
        load.append(os.getloadavg()[0])
    assert ARMS["arm4"].lattice  # the arm measured is the full component
    pops = {population_of(t) for t in tasks}
    print(f"\narm 4, {len(tasks)} {args.split} tasks of {args.tasks}; populations: "
          + "; ".join(label(p) for p in sorted(pops))
          + f"; load (1 min) {min(load):.1f}-{max(load):.1f}\n")
    for pop in sorted(pops):
        ids = {t.task_id for t in tasks if population_of(t) == pop}
        print(f"**{label(pop)}**\n")
        print("| graph | tasks | resolved | accepted | precision [95% CI] | median wall s |")
        print("|---|---|---|---|---|---|")
        for name in ("unguarded", "guarded"):
            print(_row(name, [o for o in results[name] if o.task_id in ids]))
        print()
    differ = [(a, b) for a, b in zip(results["unguarded"], results["guarded"], strict=True)
              if (a.status, a.instruments.resolved) != (b.status, b.instruments.resolved)]
    print(f"tasks whose outcome differs: {len(differ)}")
    for a, b in differ:
        print(f"- {a.task_id}: unguarded {a.status}/resolved={a.instruments.resolved} "
              f"({a.details.get('patch', {}).get('operator', '')}; {a.reason[:120]}) -> guarded "
              f"{b.status}/resolved={b.instruments.resolved} "
              f"({b.details.get('patch', {}).get('operator', '')}; {b.reason[:120]})")


if __name__ == "__main__":
    main()
