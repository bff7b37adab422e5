"""Offline graph tuning: search a graph's declared tunables on the tuning split, at design time.

    result = tune(load_graph("canonical"), tasks, workflow_evaluator(workdir=tmp),
                  budget=12, seed=0, split="tuning", tasks_digest=d)
    write_tuned(result, Path("tuned.json"))     # the tuned graph and tuned.report.json

The space is what the graph declares (`tunables`: budgets, gate thresholds, optional edges and
states, the workflow's settings); nothing else is ever changed. The search is coordinate
descent from the declared graph: the tunables in an order drawn from `seed`, each one's other
values in an order drawn from `seed`, a value kept when the candidate scores strictly better
than the incumbent; passes repeat until one changes nothing or the budget is spent. Every
candidate is model-checked first (reachability, safety, liveness); a red one is recorded with
the failing queries and never evaluated. `budget` bounds the evaluations, the declared
graph's own included; each evaluation runs every task of the tuning split.

The score is read from the instruments only, in a fixed order that makes the search
deterministic under a seed: resolve rate, then fewer regressions, illegal actions,
stale-context mistakes, repeated work, tokens, model calls, redundant actions and tool calls.
Wall time is reported, never compared (it depends on the machine's load).

Tuning never sees a held-out task: it refuses any split but the tuning split, and any task
whose row is not a tuning row. What it finds is a candidate; `frostline.coding.adopt` decides,
from the held-out A/B, whether the tuned graph replaces the declared one. The runtime never
reads the tuning report: a tuned graph is an ordinary graph file.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frostline.coding.ab.stats import aggregate
from frostline.coding.arms import arm
from frostline.coding.interface import FaultPlan, Task, TaskOutcome
from frostline.coding.setup import SolveSettings
from frostline.coding.solve import solve
from frostline.errors import DefinitionError, GraphLoadError, TaskSetError
from frostline.graph.graph import Graph
from frostline.graph.modelcheck import check
from frostline.graph.tunables import Value, assign, declared_value

__all__ = ["OBJECTIVE", "REPORT_SUFFIX", "SPLIT", "Candidate", "Evaluator", "TuneResult",
           "candidate_graph", "report_path", "require_tuning_split", "tune",
           "workflow_evaluator", "write_tuned"]

SPLIT = "tuning"
#: (instrument, +1 higher is better / -1 lower is better), compared in this order.
OBJECTIVE: tuple[tuple[str, int], ...] = (
    ("resolve_rate", 1), ("regressions", -1), ("illegal_actions", -1), ("stale_context", -1),
    ("repeated_work", -1), ("tokens", -1), ("llm_calls", -1), ("redundant_actions", -1),
    ("tool_calls", -1))
REPORT_SUFFIX = ".report.json"
LABEL = ("tuning split only; on injected bugs these figures are an upper bound, and they are "
         "not held-out figures: adoption is decided by the held-out A/B")

#: Runs `graph` on every task and returns one outcome per task.
Evaluator = Callable[[Graph, Sequence[Task]], list[TaskOutcome]]


def require_tuning_split(split: str) -> None:
    """Refuse every split but the tuning split (the held-out split is the A/B's, blind)."""
    if split != SPLIT:
        raise TaskSetError(f"graph tuning evaluates on the tuning split only, not {split!r}; "
                           "the held-out split is measured once, by `frostline ab`, and a tuned "
                           "graph is adopted from those figures (`frostline graph adopt`)",
                           split=split)


@dataclass
class Candidate:
    """One point of the space: its full assignment, what differs from the declared graph,
    the model checker's verdict, and (when evaluated) its scores."""

    index: int
    values: dict[str, Value]
    changed: dict[str, Value]
    digest: str
    check: dict[str, Any]
    evaluated: bool = False
    note: str = ""
    scores: dict[str, Any] | None = None
    wall_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "changed": self.changed, "values": self.values,
                "digest": self.digest, "check": self.check, "evaluated": self.evaluated,
                "note": self.note, "scores": self.scores, "wall_s": self.wall_s}


@dataclass
class TuneResult:
    base: Graph
    tuned: Graph
    candidates: list[Candidate]
    best: int
    budget: int
    seed: int
    split: str
    tasks: list[str]
    tasks_digest: str
    evaluations: int = 0
    wall_s: float = 0.0
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def improved(self) -> bool:
        return bool(self.candidates[self.best].changed)

    def report(self) -> dict[str, Any]:
        best = self.candidates[self.best]
        declared = self.candidates[0]
        outcome = (f"candidate {best.index} scored better than the declared graph on the "
                   f"tuning split: {best.changed}" if self.improved else
                   "no candidate scored better than the declared graph on the tuning split; "
                   "the tuned graph equals the declared one")
        return {
            "format": "frostline-graph-tune", "version": 1, "label": LABEL,
            "base": {"graph": self.base.name, "digest": self.base.content_digest},
            "tuned": {"graph": self.tuned.name, "digest": self.tuned.content_digest},
            "split": self.split, "tasks": {"count": len(self.tasks), "ids": self.tasks,
                                           "digest": self.tasks_digest},
            "budget": self.budget, "seed": self.seed, "evaluations": self.evaluations,
            "checked": len(self.candidates),
            "rejected_by_checker": sum(1 for c in self.candidates if not c.check["ok"]),
            "objective": [f"{'max' if s > 0 else 'min'} {k}" for k, s in OBJECTIVE],
            "declared": declared.to_dict(), "best": best.to_dict(), "outcome": outcome,
            "adoption": "pending: adopted only if it strictly dominates the declared graph on "
                        "the held-out split (frostline graph adopt, from frostline ab figures)",
            "candidates": [c.to_dict() for c in self.candidates],
            "wall_s": self.wall_s, **self.context,
        }


def candidate_graph(base: Graph, values: Mapping[str, Value]) -> Graph:
    """`base` at the point `values` of its declared space (without its `tunables`)."""
    return Graph.from_dict(assign(base.to_dict(), base.tunables, values))


def _scores(outcomes: Sequence[TaskOutcome]) -> dict[str, Any]:
    scores = dict(aggregate(outcomes))
    scores["tool_calls"] = sum(int(o.details.get("tool_calls", 0)) for o in outcomes)
    return scores


def _key(scores: Mapping[str, Any]) -> tuple[float, ...]:
    return tuple(sign * float(scores[k] or 0) for k, sign in OBJECTIVE)


def _verdict(graph: Graph) -> dict[str, Any]:
    result = check(graph)
    failed = [k for k, q in result.queries.items() if not q.ok]
    out: dict[str, Any] = {"ok": result.ok, "failed": failed}
    if failed:
        q = result.queries[failed[0]]
        out["detail"] = q.detail
        out["counterexample"] = q.counterexample
    return out


class _Search:
    """The search's state: candidates recorded by graph digest, the budget drawn."""

    def __init__(self, base: Graph, tasks: Sequence[Task], evaluate: Evaluator, budget: int,
                 progress: Callable[[str], None]) -> None:
        self.base, self.tasks, self.evaluate, self.budget = base, tasks, evaluate, budget
        self.progress = progress
        self.declared: dict[str, Value] = {}
        for t in base.tunables:
            value = declared_value(base, t)
            assert value is not None  # the graph validated its tunables when it loaded
            self.declared[t.name] = value
        self.candidates: list[Candidate] = []
        self.by_digest: dict[str, Candidate] = {}
        self.points: set[str] = set()
        self.evaluations = 0

    def visit(self, values: dict[str, Value]) -> Candidate | None:
        """Check `values` and evaluate them if green and the budget allows; None when the
        point was seen before."""
        point = json.dumps(values, sort_keys=True)
        if point in self.points:
            return None
        self.points.add(point)
        changed = {k: v for k, v in values.items() if v != self.declared[k]}
        try:
            graph = candidate_graph(self.base, values)
        except GraphLoadError as exc:
            c = Candidate(len(self.candidates), dict(values), changed, "",
                          {"ok": False, "failed": ["load"], "detail": exc.message},
                          note="malformed graph: not evaluated")
            self.candidates.append(c)
            return c
        if graph.content_digest in self.by_digest:
            return None
        c = Candidate(len(self.candidates), dict(values), changed, graph.content_digest,
                      _verdict(graph))
        self.candidates.append(c)
        self.by_digest[c.digest] = c
        if not c.check["ok"]:
            c.note = f"rejected by the model checker ({', '.join(c.check['failed'])}): not evaluated"
            self.progress(f"candidate {c.index} {changed}: {c.note}")
            return c
        started = time.monotonic()
        outcomes = self.evaluate(graph, self.tasks)
        self.evaluations += 1
        c.evaluated, c.scores = True, _scores(outcomes)
        c.wall_s = round(time.monotonic() - started, 3)
        self.progress(f"[{self.evaluations}/{self.budget}] candidate {c.index} {changed}: "
                      f"resolve rate {c.scores['resolve_rate']}, {c.wall_s} s")
        return c


def tune(base: Graph, tasks: Sequence[Task], evaluate: Evaluator, *, budget: int, seed: int,
         split: str, tasks_digest: str, progress: Callable[[str], None] = lambda _: None
         ) -> TuneResult:
    """Coordinate descent over `base`'s tunables on `tasks` (tuning rows only), at most
    `budget` evaluations; deterministic for a seed (module docstring).

    Raises:
        TaskSetError: a split other than tuning, a task from another split, or no task.
        DefinitionError: a graph that declares nothing tunable, a budget below 1, or a declared
            graph the model checker rejects.
    """
    require_tuning_split(split)
    foreign = sorted({t.split for t in tasks if t.split != SPLIT})
    if foreign:
        raise TaskSetError(f"graph tuning runs tuning tasks only; these are from {foreign}",
                           split=foreign[0])
    if not tasks:
        raise TaskSetError("the tuning split has no task; build tasks with `frostline tasks "
                           "build` first")
    if not base.tunables:
        raise DefinitionError(f"graph {base.name!r} declares nothing tunable; add a `tunables` "
                              "list to its file (docs/coding-workflow.md, offline tuning)")
    if budget < 1:
        raise DefinitionError("--budget must be at least 1 (the declared graph is the first "
                              "evaluation)")
    started = time.monotonic()
    search = _Search(base, tasks, evaluate, budget, progress)
    incumbent = dict(search.declared)
    first = search.visit(incumbent)
    assert first is not None
    if not first.evaluated:
        raise DefinitionError(f"the declared graph {base.name!r} fails the model checker "
                              f"({first.check.get('detail', '')}); fix it before tuning it")
    best = first
    rng = random.Random(seed)
    order = list(base.tunables)
    rng.shuffle(order)
    moved = True
    while moved and search.evaluations < budget:
        moved = False
        for t in order:
            others = [v for v in t.values if v != incumbent[t.name]]
            rng.shuffle(others)
            for v in others:
                if search.evaluations >= budget:
                    break
                c = search.visit({**incumbent, t.name: v})
                if c is not None and c.scores is not None and best.scores is not None \
                        and _key(c.scores) > _key(best.scores):
                    best, incumbent, moved = c, dict(c.values), True
    tuned = _tuned(base, best, budget, seed, split, tasks_digest, search.evaluations)
    return TuneResult(base, tuned, search.candidates, best.index, budget, seed, split,
                      [t.task_id for t in tasks], tasks_digest, search.evaluations,
                      round(time.monotonic() - started, 3))


def _tuned(base: Graph, best: Candidate, budget: int, seed: int, split: str, tasks_digest: str,
           evaluations: int) -> Graph:
    data = assign(base.to_dict(), base.tunables, best.values)
    data["name"] = f"{base.name}-tuned"
    data["provenance"] = {
        "kind": "tuned", "version": 1, "base_graph": base.name,
        "base_digest": base.content_digest, "split": split, "tasks_digest": tasks_digest,
        "budget": budget, "evaluations": evaluations, "seed": seed,
        "changed": best.changed, "candidate": best.index}
    return Graph.from_dict(data)


def report_path(out: Path) -> Path:
    """Where the report of the tuned graph `out` is written: beside it."""
    return out.with_name(out.stem + REPORT_SUFFIX)


def write_tuned(result: TuneResult, out: Path) -> tuple[Path, Path]:
    """The tuned graph to `out` and the report of the search beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.tuned.dumps(), "utf-8")
    report = report_path(out)
    report.write_text(json.dumps(result.report(), indent=2) + "\n", "utf-8")
    return out, report


def workflow_evaluator(*, workdir: Path, faults: FaultPlan | None = None, model: Any = None,
                       settings: SolveSettings | None = None) -> Evaluator:
    """Evaluate a candidate the way `frostline ab` runs arm 4: `solve` on each task with the
    candidate graph (and its settings) in place of the declared one, in a fresh folder."""
    plan = faults or FaultPlan()

    def evaluate(graph: Graph, tasks: Sequence[Task]) -> list[TaskOutcome]:
        outcomes = []
        for i, task in enumerate(tasks):
            folder = workdir / f"task-{i}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            try:
                outcomes.append(solve(task, arm("arm4"), plan, model=model, workdir=folder,
                                      settings=settings, graph=graph))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return outcomes
    return evaluate
