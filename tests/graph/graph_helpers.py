"""Shared helpers for the phase-graph tests: a model that must never be called, and scripted
deterministic bodies for the canonical graph."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from frostline.graph.engine import Engine, StateContext
from frostline.graph.graph import load_graph
from frostline.graph.slot import SlotRequest

HAPPY: dict[str, dict[str, Any]] = {
    "RECONNAISSANCE": {"root": "repo", "files": ["a.py"], "file_count": 1},
    "LOCALIZE": {"candidates": ["a.py:f"], "top_candidate": "a.py:f", "top_candidate_confidence": 0.9},
    "IMPACT": {"affected": ["a.py"], "affected_count": 1},
    "DEBUG": {"root_cause": "off by one", "confidence": 0.9, "patch_local": 1},
    "PLAN": {"steps": ["fix f"], "step_count": 1, "satisfiable": 1},
    "GENERATE": {"files": {"a.py": "v1"}, "diff": "d1", "applied": 0},
    "EXECUTE": {"exit_code": 0, "stdout": "", "stderr": ""},
    "TRACE": {"events": ["e"], "event_count": 1},
    "REFLECT": {"lessons": ["l"], "hypothesis_count": 1},
    "CANDIDATES": {"candidates": ["c"], "best_score": 0.9, "requires_replan": 0},
    "REPAIR": {"files": {"a.py": "v2"}, "diff": "d2", "applied": 0},
    "TEST": {"passed": 2, "failed": 0, "failures": []},
    "REGRESSION": {"regressions": 0, "checked": 3},
    "REVIEW": {"verified_defects": 0, "notes": []},
    "VALIDATE": {"accepted": 1, "implicates_diagnosis": 0, "reasons": []},
    "MEMORIZE": {"key": "k", "written": 1},
}

Override = Mapping[str, Any] | None | Callable[[StateContext], Any]


class ForbiddenModel:
    """A model client whose use fails the test: the control plane must not consult a model."""

    def complete(self, request: SlotRequest) -> Any:
        pytest.fail(f"a model was consulted in {request.state}; the control plane holds no L entry")


def scripted_bodies(overrides: Mapping[str, list[Override]] | None = None) -> dict[str, Any]:
    """Deterministic bodies: visit i of a state returns HAPPY[state] updated with
    overrides[state][i] (None = the visit fails; a callable = the body itself)."""
    overrides = {k: list(v) for k, v in (overrides or {}).items()}

    def make(state: str) -> Callable[[StateContext], Any]:
        def body(ctx: StateContext) -> Any:
            plan = overrides.get(state, [])
            change: Override = plan[ctx.visit] if ctx.visit < len(plan) else {}
            if change is None:
                return None
            if callable(change):
                return change(ctx)
            if state == "EDIT":
                return dict(ctx.artifact("Patch") or {}, applied=1, **change)
            if state == "REPAIR":
                base = {"files": {"a.py": f"v{ctx.visit + 2}"}, "diff": f"d{ctx.visit + 2}", "applied": 0}
                return {**base, **change}
            return {**HAPPY[state], **change}
        return body

    states = [*HAPPY, "EDIT"]
    return {s: make(s) for s in states}


def run_canonical(overrides: Mapping[str, list[Override]] | None = None, **kwargs: Any) -> Any:
    kwargs.setdefault("model", ForbiddenModel())
    return Engine(load_graph("canonical"), scripted_bodies(overrides), **kwargs).run()
