"""IMPACT and PLAN: which tests a change at the suspicious statements can affect, and the ordered
sites the patch generators work on.

Both are pure functions of the LocalizationResult (which carries, for each candidate statement,
the tests that executed it) and the code graph: no test runs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frostline.coding.codegraph import CodeGraph

#: How many candidate statements the plan offers the generators, best first.
PLAN_SITES = 8


def impact(localization: Mapping[str, Any], graph: CodeGraph) -> dict[str, Any]:
    """The ImpactResult: tests covering the suspicious statements, and the callers of the
    suspicious functions (a change there can reach those too)."""
    covering: Mapping[str, list[str]] = localization.get("covering_tests", {})
    candidates = list(localization.get("candidates", ()))[:PLAN_SITES]
    tests: set[str] = set()
    for c in candidates:
        tests.update(covering.get(c["site"], ()))
    functions = sorted({c["function"] for c in candidates if c["function"] != "<module>"})
    callers = graph.callers(functions)
    return {"affected": sorted(tests), "affected_count": len(tests),
            "functions": functions, "callers": callers}


def plan(localization: Mapping[str, Any], diagnosis: Mapping[str, Any]) -> dict[str, Any]:
    """The Plan: edit sites in order (the diagnosis's suspect first, then by suspiciousness);
    satisfiable when at least one site lies in the repository's source."""
    candidates = list(localization.get("candidates", ()))
    first = diagnosis.get("suspect_site")
    ordered = sorted(candidates, key=lambda c: c["site"] != first)[:PLAN_SITES]
    sites = [{"file": c["file"], "line": c["line"], "function": c["function"],
              "score": c["score"]} for c in ordered]
    steps = [f"edit {s['file']}:{s['line']} ({s['function']})" for s in sites]
    if sites:
        steps.append("run the failing tests, then the whole suite")
    return {"steps": steps, "step_count": len(steps), "satisfiable": int(bool(sites)),
            "sites": sites}
