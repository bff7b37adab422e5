"""LOCALIZE: spectrum-based fault localization (Ochiai) over per-test coverage.

The suite runs once in the sandbox with one coverage context per test. For every executed
statement of the repository's source (test files excluded), `ef` is the number of failing tests
that ran it, `ep` the number of passing ones, and with `F` failing tests in all its Ochiai score
is ``ef / sqrt(F * (ef + ep))``.

Ranking assumes a single fault: a statement every failing test executes (``ef == F``) comes
before any that only some of them execute, whatever their scores. Raw Ochiai alone would put a
line that two of four failing tests and no passing test run (0.71) above the faulty line that
all four and a hundred passing tests run (0.20), while one faulty statement is run by every test
it makes fail. Within each group statements go by score, then by `ef`, then by fewer passing
tests, then by place; when no statement explains every failure (several faults, or a failure
that does not run the source), the ranking is plain Ochiai.

`top_candidate_confidence` is the share of the failing tests that execute the top candidate
(``ef / F``): how much of the observed failure the top statement can explain. 1.0 means every
failing test runs it; a value at or below the canonical gate's 0.5 means the top statement
explains at most half the failures and the graph does not leave LOCALIZE on it. (Raw Ochiai is
kept as `score`: it falls with every passing test that also runs the line, so it would make the
gate reject faults in lines every test runs.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frostline.coding.codegraph import CodeGraph
from frostline.coding.testrun import TestReport
from frostline.errors import (
    BugDoesNotReproduce as BugDoesNotReproduce,
)

#: Statements ranked in a LocalizationResult: the plan's sites, then what REPAIR widens to.
TOP_K = 64
#: Statements whose covering tests the result carries (IMPACT reads the plan's sites only).
COVERING_K = 24


@dataclass(frozen=True)
class Suspect:
    file: str
    line: int
    score: float
    ef: int
    ep: int
    function: str
    text: str

    @property
    def site(self) -> str:
        return f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "site": self.site,
                "score": round(self.score, 6), "ef": self.ef, "ep": self.ep,
                "function": self.function, "text": self.text}


def ochiai(ef: int, ep: int, total_failed: int) -> float:
    """The Ochiai similarity of a statement's spectrum to the failure vector."""
    if ef == 0 or total_failed == 0:
        return 0.0
    return ef / math.sqrt(total_failed * (ef + ep))


def rank(report: TestReport, sources: Sequence[str], graph: CodeGraph,
         texts: Mapping[str, str]) -> list[Suspect]:
    """Every source statement a failing test executed, best suspect first."""
    failed = set(report.failed)
    passed = set(report.passed)
    wanted = set(sources)
    lines_of = {f: t.splitlines() for f, t in texts.items()}
    out: list[Suspect] = []
    for file, by_line in report.coverage.items():
        if file not in wanted:
            continue
        for line, tests in by_line.items():
            ef = sum(1 for t in tests if t in failed)
            if ef == 0:
                continue
            ep = sum(1 for t in tests if t in passed)
            fn = graph.enclosing(file, line)
            src = lines_of.get(file, [])
            text = src[line - 1].strip() if 0 < line <= len(src) else ""
            out.append(Suspect(file, line, ochiai(ef, ep, len(failed)), ef, ep,
                               fn.qualname if fn else "<module>", text))
    everyone = len(failed)
    out.sort(key=lambda s: (s.ef < everyone, -s.score, -s.ef, s.ep, s.file, s.line))
    return out


def localize(report: TestReport, visible_failing: Sequence[str], sources: Sequence[str],
             graph: CodeGraph, texts: Mapping[str, str]) -> dict[str, Any]:
    """The LocalizationResult of one coverage run.

    Raises:
        BugDoesNotReproduce: none of the task's visible failing tests fails.
    """
    failed = set(report.failed)
    reproduced = [t for t in visible_failing if t in failed]
    if visible_failing and not reproduced:
        raise BugDoesNotReproduce(
            f"the bug does not reproduce: the task's failing test(s) "
            f"{', '.join(visible_failing[:3])} pass on the buggy tree", tests=list(visible_failing))
    if not failed:
        raise BugDoesNotReproduce("the bug does not reproduce: every test passes")
    ranked = rank(report, sources, graph, texts)
    top = ranked[0] if ranked else None
    confidence = top.ef / len(failed) if top else 0.0
    return {
        "candidates": [s.to_dict() for s in ranked[:TOP_K]],
        "top_candidate": top.site if top else "",
        "top_candidate_confidence": round(confidence, 6),
        "top_score": round(top.score, 6) if top else 0.0,
        "failing_tests": sorted(failed),
        "reproduced": reproduced,
        "passing_count": len(report.passed),
        "failures": [f.to_dict() for f in report.failures[:10]],
        "covering_tests": {s.site: sorted(t for t in report.coverage[s.file][s.line])
                           for s in ranked[:COVERING_K]},
    }
