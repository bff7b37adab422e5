"""Precision beside the resolve rate, per task population: an accepted patch that fails the
hidden tests is a wrong answer the workflow vouched for, so the report counts it.

    precision = resolved / accepted        (accepted: the run ended in ACCEPT)

Its interval is the percentile bootstrap of the mean over the accepted tasks (each 1 if the
hidden tests pass, else 0), with the same resamples and seed as every other interval of the
report; no accepted task gives no precision (null), not 0 or 1.

A population is what the tasks are: `injected` single-site mutants (an upper bound for a
generator that inverts the injecting operators) or `released` bugs fixed upstream. A task says
which in its `population` field; without one, a task whose mutation's operator is `released`
(how the released-bug builder marks the upstream change) is released, any other injected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from frostline.coding.ab.stats import bootstrap_ci
from frostline.coding.interface import Task, TaskOutcome

__all__ = ["ACCEPTED", "DEFAULT_POPULATION", "POPULATION_LABELS", "POPULATION_NOTES",
           "by_population", "label", "population_of", "precision"]

ACCEPTED = "ACCEPT"
DEFAULT_POPULATION = "injected"
#: What each population is, as the report names it.
POPULATION_LABELS = {
    "injected": "injected single-site mutants (an upper bound)",
    "released": "released bugs fixed upstream",
}
#: What a reader must know to read a figure of each population.
POPULATION_NOTES = {
    "injected": "Injected tasks are single-site mutants injected by a known operator set into "
                "pinned packages; a template generator whose operators invert them meets each "
                "bug in its own search space, so resolve rates on them are an upper bound for "
                "such a generator, not a measure of bugs in the wild.",
    "released": "Released tasks are bugs fixed upstream between consecutive releases of pinned "
                "packages (the fix's test decides; the fix is never shown to the workflow): "
                "bugs found in the wild, not made by the generator's operators.",
}


def population_of(task: Task) -> str:
    """The population `task` belongs to: its `population` field, else `released` when its
    mutation's operator says so, else injected."""
    named = getattr(task, "population", "")
    if named:
        return str(named)
    return "released" if task.mutation.operator == "released" else DEFAULT_POPULATION


def label(population: str) -> str:
    """The population's name in the report; an unknown one is named as it is, said unknown."""
    return POPULATION_LABELS.get(population, f"{population} (a population this report does "
                                             "not know)")


def precision(outcomes: Iterable[TaskOutcome]) -> dict[str, Any]:
    """Tasks, resolved, resolve rate and its interval; accepted, accepted and resolved,
    precision and its interval (nulls where nothing was measured)."""
    done = list(outcomes)
    resolved = [float(bool(o.instruments.resolved)) for o in done]
    accepted = [float(bool(o.instruments.resolved)) for o in done if o.status == ACCEPTED]

    def rate(values: Sequence[float]) -> tuple[float | None, list[float] | None]:
        if not values:
            return None, None
        lo, hi = bootstrap_ci(values)
        return round(sum(values) / len(values), 4), [round(lo, 4), round(hi, 4)]

    resolve_rate, resolve_ci = rate(resolved)
    prec, prec_ci = rate(accepted)
    return {"tasks": len(done), "resolved": int(sum(resolved)), "resolve_rate": resolve_rate,
            "resolve_ci95": resolve_ci, "accepted": len(accepted),
            "accepted_resolved": int(sum(accepted)), "precision": prec,
            "precision_ci95": prec_ci}


def by_population(tasks: Sequence[Task], outcomes: Mapping[str, Sequence[TaskOutcome]]
                  ) -> dict[str, dict[str, Any]]:
    """Per population present in `tasks` (injected first): its label, task count and, per arm
    that ran, `precision` of the arm's outcomes on that population's tasks."""
    of = {t.task_id: population_of(t) for t in tasks}
    present = sorted(set(of.values()), key=lambda p: (p != DEFAULT_POPULATION, p))
    return {p: {"label": label(p), "tasks": sum(1 for v in of.values() if v == p),
                "arms": {name: precision(o for o in done if of.get(o.task_id) == p)
                         for name, done in outcomes.items()}}
            for p in present}
