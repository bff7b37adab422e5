"""Aggregates of the nine instruments, and paired bootstrap confidence intervals over tasks.

Per arm: `resolve_rate` is the fraction of tasks resolved; the other eight are totals over the
arm's tasks (`wall_s` in seconds). A comparison between two arms is paired: only the tasks both
ran, the per-task difference of an instrument (oriented so that positive means "better":
resolve rate up, everything else down), and a percentile bootstrap of its mean over tasks with
a fixed seed, so the same outcomes always give the same interval.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from frostline.coding.interface import INSTRUMENT_KEYS, Instruments, TaskOutcome

__all__ = ["HIGHER_IS_BETTER", "Comparison", "aggregate", "bootstrap_ci", "compare", "per_task"]

HIGHER_IS_BETTER = frozenset({"resolve_rate"})
RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 20260


def per_task(instruments: Instruments, key: str) -> float:
    """One task's value of instrument `key` (resolve_rate is the task's 0/1)."""
    if key == "resolve_rate":
        return float(instruments.resolved)
    return float(getattr(instruments, key))


def aggregate(outcomes: Sequence[TaskOutcome]) -> dict[str, float | int | None]:
    """The nine instruments of one arm plus `tasks`; None for each when no task ran."""
    n = len(outcomes)
    result: dict[str, float | int | None] = {"tasks": n}
    for key in INSTRUMENT_KEYS:
        values = [per_task(o.instruments, key) for o in outcomes]
        if not n:
            result[key] = None
        elif key == "resolve_rate":
            result[key] = round(sum(values) / n, 4)
        elif key == "wall_s":
            result[key] = round(sum(values), 3)
        else:
            result[key] = int(sum(values))
    return result


def median_wall(outcomes: Sequence[TaskOutcome]) -> float | None:
    return round(statistics.median(o.instruments.wall_s for o in outcomes), 3) if outcomes else None


def bootstrap_ci(diffs: Sequence[float], *, resamples: int = RESAMPLES,
                 confidence: float = CONFIDENCE, seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `diffs` (resampled with replacement)."""
    if not diffs:
        raise ValueError("bootstrap_ci needs at least one value")
    n = len(diffs)
    if min(diffs) == max(diffs):
        return float(diffs[0]), float(diffs[0])
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    # Symmetric order statistics, so negating every difference negates the interval exactly.
    k = int((1 - confidence) / 2 * resamples)
    return means[k], means[resamples - 1 - k]


@dataclass(frozen=True)
class Comparison:
    """Arm `a` against arm `b` on one instrument, over `n` paired tasks: the mean per-task
    gain of `a` (positive: `a` is better) and its bootstrap interval."""

    instrument: str
    a: str
    b: str
    n: int
    gain: float
    ci: tuple[float, float]

    @property
    def verdict(self) -> str:
        """better / worse beyond noise (the interval excludes 0), else same."""
        if self.ci[0] > 0:
            return "better"
        if self.ci[1] < 0:
            return "worse"
        return "same"

    def to_dict(self) -> dict[str, object]:
        return {"instrument": self.instrument, "a": self.a, "b": self.b, "n": self.n,
                "gain": round(self.gain, 4), "ci95": [round(self.ci[0], 4), round(self.ci[1], 4)],
                "verdict": self.verdict}


def compare(a: str, b: str, outcomes: Mapping[str, Sequence[TaskOutcome]], instrument: str
            ) -> Comparison:
    """`a` against `b` on `instrument`, paired by task id."""
    theirs = {o.task_id: o for o in outcomes[b]}
    sign = 1.0 if instrument in HIGHER_IS_BETTER else -1.0
    diffs = [sign * (per_task(o.instruments, instrument) - per_task(theirs[o.task_id].instruments,
                                                                     instrument))
             for o in outcomes[a] if o.task_id in theirs]
    if not diffs:
        return Comparison(instrument, a, b, 0, 0.0, (0.0, 0.0))
    return Comparison(instrument, a, b, len(diffs), sum(diffs) / len(diffs), bootstrap_ci(diffs))
