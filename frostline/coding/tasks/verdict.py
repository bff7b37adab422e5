"""Which mutants become tasks, and which of their tests the workflow is shown.

Pure rules over suite outcomes. A mutant is kept iff the full suite kills it (at least one test
fails), the failing set is identical under every hash seed it was run with, no run timed out,
crashed or failed to collect, and at most `max_failing` of the tests fail (a mutant that breaks
most of the suite is a broken import, not a bug to localise).

Tests shown and hidden: the failing tests are ordered by a hash of the task and the test, the
first half (at least one) is shown (`visible_failing`); the rest, with the passing tests that
execute the mutated line (they pin the behaviour a fix must keep), are `hidden` and decide
whether a task is resolved. A mutant with nothing to hide is not kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["MAX_FAILING", "SEEDS", "Verdict", "judge", "split_tests"]

#: The PYTHONHASHSEED values every mutant is run under.
SEEDS = (1, 2, 3)
#: The largest fraction of the suite a kept mutant may fail.
MAX_FAILING = 0.30
#: At most this many passing tests join the hidden ones.
MAX_HIDDEN_PASSING = 25


@dataclass(frozen=True)
class Run:
    """What `judge` needs of one suite run: the failing tests, or the error that made the run
    say nothing about them."""

    failing: frozenset[str]
    error: str = ""


@dataclass(frozen=True)
class Verdict:
    kept: bool
    reason: str  # "kept", or why not: timeout, crashed, collection_error, survived, unstable, too_broad
    failing: frozenset[str] = frozenset()


def judge(total_tests: int, runs: Sequence[Run], max_failing: float = MAX_FAILING) -> Verdict:
    """The verdict on a mutant from its runs (one per seed, in seed order; the caller may stop
    after a first run that already rejects it)."""
    if not runs:
        raise ValueError("judge needs at least one run")
    for run in runs:
        if run.error:
            return Verdict(False, run.error)
    first = runs[0].failing
    if not first:
        return Verdict(False, "survived")
    if any(run.failing != first for run in runs[1:]):
        return Verdict(False, "unstable")
    if total_tests <= 0 or len(first) > max_failing * total_tests:
        return Verdict(False, "too_broad", first)
    return Verdict(True, "kept", first)


def _order(task_id: str, tests: Iterable[str]) -> list[str]:
    return sorted(tests, key=lambda t: (hashlib.sha256(f"{task_id}\0{t}".encode()).digest(), t))


def split_tests(task_id: str, failing: Collection[str], covering_passing: Collection[str]
                ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(visible_failing, hidden) for a kept mutant; hidden is empty when there is nothing left
    to hide (the caller then drops the mutant)."""
    ordered = _order(task_id, failing)
    shown = max(1, (len(ordered) + 1) // 2)
    visible = tuple(sorted(ordered[:shown]))
    guards = _order(task_id, set(covering_passing) - set(failing))[:MAX_HIDDEN_PASSING]
    hidden = tuple(sorted([*ordered[shown:], *guards]))
    return visible, hidden
