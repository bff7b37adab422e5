"""Shared helpers for the phase-graph tests: a model that must never be called, a model that
replays hand-written replies, and scripted deterministic bodies for the canonical graph."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import strategies as st

from frostline.graph.engine import Engine, StateContext
from frostline.graph.graph import load_graph
from frostline.graph.slot import SlotReply, SlotRequest

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


class ScriptedModel:
    """A model client that replays hand-written replies per state, in order.

    Example: ``ScriptedModel({"LOCALIZE": [{"output": {...}}]})``. Running out of replies for a
    state fails the test, so an unexpected extra call is noticed; `requests` keeps every request.
    """

    def __init__(self, replies: Mapping[str, Sequence[SlotReply | Mapping[str, Any]]]) -> None:
        self.replies = {s: list(r) for s, r in replies.items()}
        self.requests: list[SlotRequest] = []

    def complete(self, request: SlotRequest) -> SlotReply | Mapping[str, Any]:
        self.requests.append(request)
        queue = self.replies.get(request.state)
        if not queue:
            raise AssertionError(f"ScriptedModel has no reply left for {request.state} "
                                 f"(visit {request.visit}, turn {request.turn})")
        return queue.pop(0)


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


FLAGS = {"satisfiable", "applied", "patch_local", "accepted", "implicates_diagnosis", "requires_replan",
         "written"}
COUNTS = {"failed", "regressions", "verified_defects", "exit_code", "file_count", "affected_count"}


def random_bodies(data: st.DataObject) -> dict[str, Any]:
    """Bodies whose evidence is drawn by hypothesis: mostly the happy value (so runs get deep),
    sometimes a failure, a flipped flag, a count or a low confidence."""
    def pick(label: str, happy: Any, *others: Any) -> Any:
        return data.draw(st.sampled_from([happy, happy, happy, *others]), label=label)

    def make(state: str):
        def body(ctx):
            if pick(f"{state} fails", False, False, False, True):
                return None
            out = dict(HAPPY[state]) if state != "EDIT" else dict(ctx.artifact("Patch") or HAPPY["GENERATE"], applied=1)
            for k, v in list(out.items()):
                if k in FLAGS:
                    out[k] = pick(f"{state}.{k}", v, 1 - v)
                elif k in COUNTS:
                    out[k] = pick(f"{state}.{k}", v, 1, 2)
                elif k in ("confidence", "top_candidate_confidence", "best_score"):
                    out[k] = pick(f"{state}.{k}", v, 0.1, 0.5)
                elif k in ("files", "root_cause", "steps"):
                    out[k] = pick(f"{state}.{k}", v, ["x"], ["y"])
            return out
        return body
    return {s: make(s) for s in [*HAPPY, "EDIT"]}
