"""The adaptive plan (arm 3): obligations over a real code graph in dependency order, divergence,
downstream-only re-planning (a hypothesis property), and arm 3's graph proven by the checker."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.arms import ARMS, arm
from frostline.coding.codegraph import CodeGraph, build_code_graph
from frostline.coding.plandag import (
    Obligation,
    build_plan,
    dependency_order,
    divergence,
    lattice_of,
    replan,
    revise,
)
from frostline.coding.variants import REPLAN, canonical, graph_for, rebuild, with_replan
from frostline.graph.modelcheck import check
from frostline.graph.records import Transition, TransitionKind

MOD = '''\
def leaf(x):
    return x + 1


def mid(x):
    return leaf(x) * 2


def top(x):
    return mid(x) - 3


def other(x):
    return top(x)


def lone(x):
    return x
'''
TEST = "from pkg.mod import top\n\n\ndef test_top():\n    assert top(1) == 1\n"


@pytest.fixture
def graph(tmp_path: Path) -> CodeGraph:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(MOD)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(TEST)
    return build_code_graph(tmp_path, ["pkg/__init__.py", "pkg/mod.py", "tests/test_mod.py"])


def cand(fn: str, line: int, score: float) -> dict[str, Any]:
    return {"file": "pkg/mod.py", "line": line, "site": f"pkg/mod.py:{line}",
            "function": f"pkg.mod.{fn}", "score": score, "ef": 1, "ep": 0, "text": ""}


def failure(test: str, fn: str, line: int) -> dict[str, str]:
    text = (f'Traceback (most recent call last):\n  File "/workspace/tests/test_mod.py", line 5, '
            f'in test_top\n  File "/workspace/pkg/mod.py", line {line}, in {fn}\n'
            "ZeroDivisionError: division by zero\n")
    return {"test": test, "kind": "failure", "message": "ZeroDivisionError", "text": text}


LOC = {"candidates": [cand("mid", 6, 0.9), cand("leaf", 2, 0.8), cand("top", 10, 0.7),
                      cand("lone", 18, 0.1)],
       "failing_tests": ["tests/test_mod.py::test_top"],
       "failures": [failure("tests/test_mod.py::test_top", "top", 10)]}
DIAG = {"suspect_site": "pkg/mod.py:6"}


def test_the_plan_is_a_dag_of_obligations_in_dependency_order(graph: CodeGraph) -> None:
    plan = build_plan(LOC, DIAG, graph)
    ob = {o["id"]: o for o in plan["obligations"]}
    assert set(ob) == {"edit:pkg.mod.mid", "edit:pkg.mod.leaf", "edit:pkg.mod.top",
                       "edit:pkg.mod.lone", "check:pkg.mod.other"}
    assert ob["edit:pkg.mod.mid"]["depends_on"] == ["edit:pkg.mod.leaf"]  # mid calls leaf
    assert ob["edit:pkg.mod.top"]["depends_on"] == ["edit:pkg.mod.mid"]
    # the test calling top is no call site to check; other (source) is
    assert ob["check:pkg.mod.other"]["depends_on"] == ["edit:pkg.mod.top"]
    assert plan["order"] == ["edit:pkg.mod.leaf", "edit:pkg.mod.mid", "edit:pkg.mod.top",
                             "edit:pkg.mod.lone", "check:pkg.mod.other"]
    assert [s["line"] for s in plan["sites"]] == [2, 6, 10, 18]
    assert plan["satisfiable"] == 1 and plan["revision"] == 0 and plan["adaptive"] == 1
    assert plan["assumption"]["surfaced"] == ["pkg/mod.py::top"]
    for o in plan["obligations"]:  # every dependency comes before its dependant
        assert all(plan["order"].index(d) < plan["order"].index(o["id"]) for d in o["depends_on"])
    empty = build_plan({"candidates": []}, {}, graph)
    assert empty["satisfiable"] == 0 and empty["obligations"] == []


def test_a_passing_run_or_a_site_beyond_the_plan_never_diverges(graph: CodeGraph) -> None:
    plan = build_plan(LOC, DIAG, graph)
    patch = {"site": "pkg/mod.py:6", "edits": [{"search": "x * 2", "replace": "x * 3"}]}
    assert divergence(plan, patch, {"failed": 0, "failures": []}, LOC) is None
    beyond = dict(patch, site="pkg/mod.py:99")
    assert divergence(plan, beyond, {"failed": 1, "failures": []}, LOC) is None
    # still failing where the plan saw it fail, or in the edited function: no divergence
    same = {"failed": 1, "failures": [failure("t", "top", 10), failure("u", "mid", 6)]}
    assert divergence(plan, patch, same, LOC) is None


def test_a_test_that_localizes_elsewhere_replans_only_what_it_touches(graph: CodeGraph) -> None:
    plan = build_plan(LOC, DIAG, graph)
    patch = {"site": "pkg/mod.py:6", "edits": [{"search": "x) * 2", "replace": "x) * 3"}]}
    moved = {"failed": 1, "failures": [failure("tests/test_mod.py::test_top", "lone", 18)]}
    d = divergence(plan, patch, moved, LOC)
    assert d is not None and d["kind"] == "localizes_elsewhere"
    assert (d["obligation"], d["function"], d["touched"]) == ("edit:pkg.mod.mid", "lone",
                                                             ["edit:pkg.mod.mid"])
    new = replan(plan, d, LOC, graph)
    assert new["revision"] == 1 and new["tried"] == ["edit:pkg.mod.mid"]
    assert new["order"][0] == "edit:pkg.mod.lone"  # where the failure moved, first
    assert new["sites"][0]["line"] == 18 and new["sites"][-1]["line"] == 6  # tried sites last
    (rev,) = new["revisions"]
    # mid and what depends on it (top, then other's call site) went STALE; leaf and lone did not
    assert rev["stale"] == ["check:pkg.mod.other", "edit:pkg.mod.mid", "edit:pkg.mod.top"]
    assert rev["recomputed"] == ["edit:pkg.mod.mid", "edit:pkg.mod.top", "check:pkg.mod.other"]
    before = {o["id"]: o for o in plan["obligations"]}
    after = {o["id"]: o for o in new["obligations"]}
    assert after["edit:pkg.mod.leaf"] == before["edit:pkg.mod.leaf"]
    # the same divergence of the same obligation never re-plans twice
    assert divergence(new, patch, moved, LOC) is None


def test_mutual_recursion_among_suspects_keeps_the_plan_acyclic(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def even(n):\n    return n == 0 or odd(n - 1)\n\n\n"
                                   "def odd(n):\n    return n != 0 and even(n - 1)\n")
    g = build_code_graph(tmp_path, ["m.py"])
    loc = {"candidates": [{**cand("odd", 6, 0.9), "file": "m.py", "function": "m.odd"},
                          {**cand("even", 2, 0.8), "file": "m.py", "function": "m.even"}]}
    plan = build_plan(loc, {}, g)
    deps = {o["id"]: o["depends_on"] for o in plan["obligations"]}
    assert deps == {"edit:m.odd": ["edit:m.even"], "edit:m.even": []}  # one edge kept
    assert plan["order"] == ["edit:m.even", "edit:m.odd"]


def test_an_edit_that_changes_calls_replans_its_callers(graph: CodeGraph, tmp_path: Path) -> None:
    plan = build_plan(LOC, DIAG, graph)
    patch = {"site": "pkg/mod.py:2",
             "edits": [{"search": "return x + 1", "replace": "return other(x) + 1"}]}
    d = divergence(plan, patch, {"failed": 1, "failures": []}, LOC)
    assert d is not None and d["kind"] == "callers_changed" and d["names"] == ["other"]
    # the obligations of the functions it now calls (their callers changed) and its own
    assert d["touched"] == ["check:pkg.mod.other", "edit:pkg.mod.leaf"]
    mod = tmp_path / "pkg" / "mod.py"
    mod.write_text(MOD.replace("return x + 1", "return other(x) + 1"))
    patched = build_code_graph(tmp_path, ["pkg/mod.py", "tests/test_mod.py"])
    new = replan(plan, d, LOC, patched)
    assert new["revisions"][0]["recomputed"][0] == "edit:pkg.mod.leaf"
    assert new["tried"] == ["edit:pkg.mod.leaf"]
    assert {o["id"] for o in new["obligations"]} >= {"check:pkg.mod.other"}


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[Obligation], set[str]]:
    n = draw(st.integers(1, 12))
    obs = []
    for i in range(n):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()
        obs.append(Obligation(f"o{i}", draw(st.sampled_from(["edit", "check"])), f"m.f{i}",
                              "m.py", (), tuple(f"o{d}" for d in sorted(deps)), "drawn"))
    touched = draw(st.sets(st.sampled_from([o.id for o in obs]), max_size=3))
    return obs, touched


@settings(max_examples=300, deadline=None)
@given(dags(), st.booleans())
def test_revision_is_downstream_only(drawn: tuple[list[Obligation], set[str]],
                                     drop: bool) -> None:
    obs, touched = drawn
    lat = lattice_of(obs)
    affected = set(touched) | {d for t in touched for d in lat.downstream(t)}
    calls: list[str] = []

    def recompute(o: Obligation) -> Obligation | None:
        calls.append(o.id)
        return None if drop and o.id in touched else replace(o, because="recomputed")

    revised, _, order = revise(obs, touched, recompute)
    assert calls == order and set(order) == affected  # exactly the touched and their downstream
    for o in obs:
        if o.id not in affected:  # everything else kept exactly
            assert o in revised
    for i, a in enumerate(order):  # recomputed in dependency order
        assert not lat.upstream(a) & set(order[i + 1:])
    kept = {o.id for o in revised}
    assert kept == {o.id for o in obs} - (set(touched) if drop else set())
    order_all = dependency_order(obs)
    assert sorted(order_all) == sorted(o.id for o in obs)
    for o in obs:
        assert all(order_all.index(d) < order_all.index(o.id) for d in o.depends_on)


def test_arm3s_graph_is_proven_by_the_model_checker() -> None:
    for name in ("arm3", "arm4"):
        g = graph_for(arm(name))
        report = check(g)
        assert report.reachability.ok and report.safety.ok and report.liveness.ok, name
        assert REPLAN in g.transitions
        failing = [t.to for t in g.contracts["TEST"].failure_transitions]
        assert failing[0] == "PLAN" and "REPAIR" in failing  # consulted before TEST -> REPAIR
        assert "plan_diverged" in g.contracts["TEST"].output_schema["required"]
    for name, a in ARMS.items():
        if not a.free_agent and a.single_l:
            has = any((t.from_, t.to, t.kind) == (REPLAN.from_, REPLAN.to, REPLAN.kind)
                      for t in graph_for(a).transitions)
            assert has is (a.adaptive_plan and a.failure_edges), name


def test_the_checker_refuses_a_replan_edge_that_draws_no_budget() -> None:
    base = canonical()
    unbounded = Transition("TEST", "PLAN", TransitionKind.FORWARD, REPLAN.guard, "")
    edges = with_replan(list(base.transitions))
    bad = rebuild(base, "replan-unbounded",
                  [unbounded if t == REPLAN else t for t in edges], lattice=True,
                  fields={"TestResult": ("plan_diverged",)})
    report = check(bad)
    assert not report.liveness.ok and report.reachability.ok
    assert "TEST" in report.liveness.detail and "PLAN" in report.liveness.detail


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_arm3_solves_a_real_task_with_the_plan_dag(tmp_path: Path) -> None:
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from coding_repo import make_task

    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings, prepare
    from frostline.coding.solve import solve
    from frostline.coding.testrun import SandboxSettings

    s = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5))
    t = "tests/test_core.py::"
    task = make_task(tmp_path / "src", "clamp_gt", visible=(f"{t}test_clamp_inside",),
                     hidden=(f"{t}test_clamp_above",))
    out = solve(task, arm("arm3"), FaultPlan(), workdir=tmp_path / "w", settings=s)
    assert out.status == "ACCEPT" and out.instruments.resolved == 1, out.reason
    assert out.instruments.illegal_actions == 0 and out.details["replans"] == 0
    setup = prepare(task, arm("arm3"), FaultPlan(), None, tmp_path / "p", s)
    tools = setup.tools.registry()
    loc = tools["trace.read"]({"mode": "spectrum"})
    plan = tools["task.decompose"]({"localization": loc, "diagnosis": {}, "adaptive": 1})
    assert plan["adaptive"] == 1 and plan["obligations"][0]["kind"] == "edit"
    assert f"{task.mutation.file}:{task.mutation.line}" in {
        f"{s['file']}:{s['line']}" for s in plan["sites"]}


SCALER = '''def scale(x, k):
    y = x * k
    if y < 0:
        return fail(y)
    return y


def fail(y):
    raise ValueError(y)
'''
SCALER_TESTS = '''import pytest

from scaler.core import scale


def test_scale():
    with pytest.raises(ValueError):
        scale(-5, 1)
    assert scale(2, 3) == 6


def test_scale_more():
    assert scale(4, 3) == 12
'''


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.parametrize("name", ["arm3", "arm4"])
def test_a_divergent_edit_replans_inside_plan_end_to_end(tmp_path: Path, name: str) -> None:
    """`x * k` made `x + k`: the plan's first patch (`x - k`) makes the visible test fail in
    `fail`, where nothing failed before, so TEST goes back to PLAN, which leads with `fail`
    and keeps `scale`'s other statements; the revised plan's patch is the fix."""
    from frostline.coding.interface import FaultPlan, Mutation, Task
    from frostline.coding.setup import SolveSettings
    from frostline.coding.solve import solve
    from frostline.coding.testrun import SandboxSettings

    root = tmp_path / "src"
    (root / "scaler").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "scaler" / "__init__.py").write_text("")
    (root / "scaler" / "core.py").write_text(SCALER)
    (root / "tests" / "test_core.py").write_text(SCALER_TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "scaler"\nversion = "0.1"\n')
    task = Task("scaler-arith", "scaler", "0.1", "0" * 64, str(root),
                Mutation("scaler/core.py", 2, "arith", "    y = x * k", "    y = x + k"),
                ("tests/test_core.py::test_scale",), ("tests/test_core.py::test_scale_more",))
    s = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5))
    out = solve(task, arm(name), FaultPlan(), workdir=tmp_path / "w", settings=s)
    assert out.status == "ACCEPT" and out.instruments.resolved == 1, out.reason
    path = out.details["path"]
    assert out.details["replans"] == 1
    assert path[path.index("TEST"):path.index("TEST") + 3] == ["TEST", "PLAN", "GENERATE"]
    assert "REPAIR" not in path and out.details["patch"]["at_injected_line"]
    i = out.instruments
    assert i.illegal_actions == i.stale_context == i.repeated_work == 0
    # without the adaptive plan the same first patch goes to REPAIR instead
    base = solve(task, arm("arm2"), FaultPlan(), workdir=tmp_path / "w2", settings=s)
    assert base.details["replans"] == 0 and "PLAN" not in base.details["path"][6:]
