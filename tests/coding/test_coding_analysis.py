"""The pure parts of the coding bodies: manifest, code graph, Ochiai, templates, workspace,
critic, faults and the arms' graphs. No sandbox here; every input is a real file tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from coding_repo import BUGS, CORE, bug_line, make_task, write_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.arms import ARMS, arm
from frostline.coding.codegraph import build_code_graph
from frostline.coding.faults import FaultInjector, InjectedFault
from frostline.coding.impact import impact, plan
from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, FaultPlan, Mutation
from frostline.coding.localize import BugDoesNotReproduce, localize, ochiai
from frostline.coding.manifest import build_manifest, is_test_file, module_name
from frostline.coding.review import critic, validate
from frostline.coding.templates import line_edits, statement_lines
from frostline.coding.testrun import TestReport, parse_junit
from frostline.coding.variants import graph_for
from frostline.coding.workspace import BadTask, PatchRefused, Workspace
from frostline.errors import DefinitionError
from frostline.graph.modelcheck import check

CORE_FILE = "textkit/core.py"


def test_manifest_reads_packages_modules_and_test_layout(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "src").mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "conf.py").write_text("x = 1\n")
    m = build_manifest(root, ("-o", "addopts=")).to_dict()
    assert m["files"] == ["textkit/__init__.py", "textkit/core.py"]
    assert m["file_count"] == 2 and m["test_files"] == ["tests/test_core.py"]
    assert m["packages"] == ["textkit"] and m["modules"] == ["textkit", "textkit.core"]
    assert m["test_layout"] == "tests-folder"
    assert m["test_command"][-2:] == ["-o", "addopts="]
    assert module_name("src/pkg/__init__.py") == "pkg"
    assert is_test_file("pkg/test_x.py") and is_test_file("tests/helpers.py")
    assert not is_test_file("pkg/testing_utils.py")


def test_code_graph_has_definitions_calls_and_imports(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    (root / "textkit" / "broken.py").write_text("def (:\n")
    g = build_code_graph(root, ["textkit/__init__.py", "textkit/core.py", "textkit/broken.py"])
    names = {d.qualname for d in g.definitions}
    assert {"textkit.core.clamp", "textkit.core.chunk", "textkit.core.initials"} <= names
    assert "len" in g.calls["textkit.core.word_count"]
    assert g.imports["textkit"] == {"textkit.core"}
    assert g.unparsed == ["textkit/broken.py"]
    fn = g.enclosing(CORE_FILE, bug_line("clamp_gt"))
    assert fn is not None and fn.qualname == "textkit.core.clamp"
    assert g.callers(["clamp"]) == []


def test_ochiai_values() -> None:
    assert ochiai(1, 0, 1) == 1.0
    assert ochiai(0, 5, 2) == 0.0
    assert ochiai(2, 2, 2) == pytest.approx(2 / (2 * 4) ** 0.5)


def _report(failed: dict[str, str], coverage: dict[int, tuple[str, ...]]) -> TestReport:
    return TestReport(1, failed, (), 0.1, {CORE_FILE: coverage})


def test_localize_ranks_the_statement_only_failing_tests_run(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "clamp_gt")
    g = build_code_graph(root, [CORE_FILE])
    line = bug_line("clamp_gt")
    report = _report({"t::a": "failed", "t::b": "passed", "t::c": "passed"},
                     {line - 4: ("t::a", "t::b", "t::c"), line: ("t::a",), line + 1: ("t::b",)})
    loc = localize(report, ("t::a",), [CORE_FILE], g, {CORE_FILE: (root / CORE_FILE).read_text()})
    assert loc["top_candidate"] == f"{CORE_FILE}:{line}"
    assert loc["top_candidate_confidence"] == 1.0 and loc["top_score"] == 1.0
    assert [c["line"] for c in loc["candidates"]] == [line, line - 4]  # ep=0 ranks first
    assert loc["candidates"][0]["function"] == "textkit.core.clamp"
    assert loc["covering_tests"][f"{CORE_FILE}:{line}"] == ["t::a"]
    with pytest.raises(BugDoesNotReproduce, match="does not reproduce"):
        localize(report, ("t::b",), [CORE_FILE], g, {})


def test_a_statement_every_failing_test_runs_outranks_a_higher_ochiai_score(
        tmp_path: Path) -> None:
    """Single fault: the line all four failing tests run (with many passing ones) comes before
    one only two of them run with no passing test, though raw Ochiai scores it 0.20 to 0.71."""
    root = write_repo(tmp_path / "repo", "clamp_gt")
    g = build_code_graph(root, [CORE_FILE])
    line = bug_line("clamp_gt")
    failing = tuple(f"t::f{i}" for i in range(4))
    passing = tuple(f"t::p{i}" for i in range(96))
    outcomes = {**dict.fromkeys(failing, "failed"), **dict.fromkeys(passing, "passed")}
    report = _report(outcomes, {line: failing + passing, line + 1: failing[:2]})
    loc = localize(report, failing[:2], [CORE_FILE], g,
                   {CORE_FILE: (root / CORE_FILE).read_text()})
    assert [c["line"] for c in loc["candidates"]] == [line, line + 1]
    assert loc["candidates"][0]["score"] == pytest.approx(0.2)
    assert loc["candidates"][1]["score"] == pytest.approx(2 / 8 ** 0.5)
    assert loc["top_candidate_confidence"] == 1.0  # it explains every failure
    # With no statement every failing test runs, the ranking is plain Ochiai.
    report = _report(outcomes, {line: failing[1:] + passing, line + 1: failing[:2]})
    loc = localize(report, failing[:2], [CORE_FILE], g, {})
    assert [c["line"] for c in loc["candidates"]] == [line + 1, line]
    assert loc["top_candidate_confidence"] == 0.5  # the gate (> 0.5) stops here


def test_impact_and_plan_follow_the_localization() -> None:
    loc = {"candidates": [{"site": "a.py:3", "file": "a.py", "line": 3, "function": "m.f",
                           "score": 1.0}, {"site": "a.py:9", "file": "a.py", "line": 9,
                                           "function": "m.g", "score": 0.5}],
           "covering_tests": {"a.py:3": ["t1", "t2"], "a.py:9": ["t3"]}}
    from frostline.coding.codegraph import CodeGraph
    result = impact(loc, CodeGraph(calls={"m.h": {"f"}}))
    assert result["affected"] == ["t1", "t2", "t3"] and result["callers"] == ["m.h"]
    p = plan(loc, {"suspect_site": "a.py:9"})
    assert [s["line"] for s in p["sites"]] == [9, 3] and p["satisfiable"] == 1
    assert plan({"candidates": []}, {})["satisfiable"] == 0


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_some_template_inverts_each_injected_bug(bug: str) -> None:
    before, after = BUGS[bug]
    mutated = CORE.replace(before + "\n", after + "\n")
    edits = line_edits(CORE_FILE, mutated, bug_line(bug))
    assert any(mutated.replace(e["search"], e["replace"], 1) == CORE for e in edits)


def test_repair_widens_down_the_ranking_once_the_plans_sites_are_spent(tmp_path: Path) -> None:
    from frostline.coding.impact import PLAN_SITES
    from frostline.coding.workflow import CodingBodies

    cands = [{"site": f"a.py:{n}", "file": "a.py", "line": n, "function": "m.f",
              "score": 1 - n / 100} for n in range(1, 2 * PLAN_SITES + 4)]
    loc = {"candidates": cands}
    p = plan(loc, {})

    class Ctx:  # what REPAIR's widening reads: the stored artifacts
        def artifact(self, name: str) -> object:
            return {"LocalizationResult": loc, "Plan": p}.get(name)

    bodies = CodingBodies(make_task(tmp_path, "clamp_gt", visible=("v",)), generator="template",
                          lattice=True, samples=1, valid=lambda a: True)
    waves = []
    while sites := bodies._wider(Ctx()):  # type: ignore[arg-type]
        waves.append([s["line"] for s in sites])
    assert waves == [list(range(PLAN_SITES + 1, 2 * PLAN_SITES + 1)),
                     list(range(2 * PLAN_SITES + 1, 2 * PLAN_SITES + 4))]


@pytest.mark.parametrize(("fixed", "mutated"), [
    ("    if headers == 'keys' and not rows:", "    if headers == 'keys' and rows:"),
    ("    if not order or (not order[0] and t < order[1]):",
     "    if order or (not order[0] and t < order[1]):"),
    ("    while order and (order[0] or not (t < order[1])):",
     "    while order and (order[0] or t < order[1]):"),
    ("        not isinstance(s, (str, bytes))", "        isinstance(s, (str, bytes))"),
])
def test_a_dropped_not_inside_and_or_is_put_back(fixed: str, mutated: str) -> None:
    """The inverse of dropping a `not` from any operand of and/or, also inside a boolean
    expression that spans several lines."""
    def source(line: str) -> str:
        if line.startswith("        "):
            return f"def f(s, t):\n    return (\n        t\n        and\n{line}\n    )\n"
        return f"def f(headers, rows, order, t):\n{line}\n        return 1\n    return 0\n"
    original, bug = source(fixed), source(mutated)
    line = bug.splitlines().index(mutated) + 1
    want = ast.dump(ast.parse(original))
    assert any(ast.dump(ast.parse(bug.replace(e["search"], e["replace"], 1))) == want
               for e in line_edits("m.py", bug, line))


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=CORE.count("\n")))
def test_every_template_edit_is_one_line_parses_and_changes_the_ast(line: int) -> None:
    original = ast.dump(ast.parse(CORE))
    for e in line_edits(CORE_FILE, CORE, line):
        new = CORE.replace(e["search"], e["replace"], 1)
        assert ast.dump(ast.parse(new)) != original
        changed = [i for i, (a, b) in enumerate(zip(CORE.splitlines(), new.splitlines(),
                                                    strict=True)) if a != b]
        assert len(changed) == 1 and changed[0] + 1 == int(e["line"])
        assert int(e["line"]) in statement_lines(ast.parse(CORE), line)


def test_a_site_stands_for_every_line_of_its_statement() -> None:
    """Coverage reports a call spanning lines at its first line; the bug on a later line of
    the call is inside the site's candidates, after the first line's own."""
    fixed = ("def f(days, secs):\n    days, secs = divmod(\n        secs, 24 * 3600\n    )\n"
             "    if (days\n            and secs > 3):\n        return 1\n    return days\n")
    tree = ast.parse(fixed)
    assert statement_lines(tree, 2) == [2, 3, 4] and statement_lines(tree, 5) == [5, 6]
    assert statement_lines(tree, 1) == [1]  # a def's body is not its header
    want = ast.dump(tree)
    for site, right, wrong in ((2, "24 * 3600", "25 * 3600"), (5, "> 3", ">= 3")):
        bug = fixed.replace(right, wrong)
        edits = line_edits("m.py", bug, site)
        lines = [int(e["line"]) for e in edits]
        assert lines == sorted(lines) and lines[0] >= site  # the site's own line first
        assert any(ast.dump(ast.parse(bug.replace(e["search"], e["replace"], 1))) == want
                   for e in edits)


def test_workspace_injects_refuses_and_materialises_idempotently(tmp_path: Path) -> None:
    task = make_task(tmp_path / "src", "clamp_gt", visible=("v",))
    ws = Workspace.create(tmp_path / "ws", Path(task.source_dir), task.mutation)
    mutated = (ws.tree / CORE_FILE).read_text()
    assert BUGS["clamp_gt"][1] in mutated
    good = {"edits": [{"file": CORE_FILE, "search": BUGS["clamp_gt"][1],
                       "replace": BUGS["clamp_gt"][0]}]}
    ws.materialise(good)
    ws.materialise(good)
    assert (ws.tree / CORE_FILE).read_text() == CORE
    ws.materialise(None)
    assert (ws.tree / CORE_FILE).read_text() == mutated
    refused = [
        {"edits": [{"file": "tests/test_core.py", "search": "import", "replace": "x"}]},
        {"edits": [{"file": CORE_FILE, "search": "def clamp", "replace": "def clamp("}]},
        {"edits": [{"file": "../outside.py", "search": "a", "replace": "b"}]},
        {"edits": [{"file": CORE_FILE, "search": "no such text", "replace": "b"}]},
        {"edits": []},
    ]
    for patch in refused:
        with pytest.raises(PatchRefused):
            ws.materialise(patch)
        assert (ws.tree / CORE_FILE).read_text() == mutated
    with pytest.raises(BadTask, match="does not read"):
        Workspace.create(tmp_path / "ws2", Path(task.source_dir),
                         Mutation(CORE_FILE, 3, "x", "not the line", "y"))
    with pytest.raises(BadTask, match="does not exist"):
        Workspace.create(tmp_path / "ws3", tmp_path / "missing", None)
    other = make_task(tmp_path / "src2", "chunk_slice", visible=("v",))
    again = Workspace.create(tmp_path / "ws", Path(other.source_dir), other.mutation)
    assert BUGS["chunk_slice"][1] in (again.tree / CORE_FILE).read_text()  # not reused


def test_critic_counts_verified_defects_and_validate_decides(tmp_path: Path) -> None:
    task = make_task(tmp_path / "src", "clamp_gt", visible=("v",))
    ws = Workspace.create(tmp_path / "ws", Path(task.source_dir), task.mutation)
    fix = {"edits": [{"file": CORE_FILE, "search": BUGS["clamp_gt"][1],
                      "replace": BUGS["clamp_gt"][0]}]}
    assert critic(fix, ws)["verified_defects"] == 0
    doc = '    """Return value limited to the closed range [low, high]."""\n'
    assert critic({"edits": [{"file": CORE_FILE, "search": doc, "replace": ""}]},
                  ws)["notes"] == ["removes 1 docstring(s) from textkit/core.py"]
    ok = validate({"failed": 0}, {"regressions": 0}, {"verified_defects": 0})
    assert ok == {"accepted": 1, "implicates_diagnosis": 0, "reasons": [], "suite_checked": 0}
    bad = validate({"failed": 1}, {"regressions": 0}, {"verified_defects": 0})
    assert bad["accepted"] == 0 and bad["implicates_diagnosis"] == 1
    # with the whole-suite guard, acceptance needs a suite run, and a green one
    evidence = ({"failed": 0}, {"regressions": 0}, {"verified_defects": 0})
    assert validate(*evidence, {"checked": 0})["accepted"] == 0
    assert validate(*evidence, {"checked": 9, "failed_tests": ["t::x"]})["accepted"] == 0
    assert validate(*evidence, {"checked": 9, "failed_tests": []}) == {
        "accepted": 1, "implicates_diagnosis": 0, "reasons": [], "suite_checked": 9}


def test_junit_is_read_by_node_id() -> None:
    xml = b"""<testsuites><testsuite>
      <testcase classname="tests.test_a" name="test_ok"><properties>
        <property name="nodeid" value="tests/test_a.py::test_ok"/></properties></testcase>
      <testcase classname="tests.test_a" name="test_bad[1]"><properties>
        <property name="nodeid" value="tests/test_a.py::test_bad[1]"/></properties>
        <failure message="assert 1 == 2">Traceback...\nAssertionError</failure></testcase>
      <testcase classname="tests.test_a" name="test_skip"><properties>
        <property name="nodeid" value="tests/test_a.py::test_skip"/></properties>
        <skipped message="no"/></testcase>
    </testsuite></testsuites>"""
    outcomes, failures = parse_junit(xml)
    assert outcomes == {"tests/test_a.py::test_ok": "passed",
                        "tests/test_a.py::test_bad[1]": "failed",
                        "tests/test_a.py::test_skip": "skipped"}
    assert failures[0].message == "assert 1 == 2"


def test_faults_are_seeded_per_task_tool_and_call() -> None:
    plan_ = FaultPlan(rate=0.3, seed=11)
    runs = []
    for _ in range(2):
        inj = FaultInjector(plan_, "task-1")
        runs.append([inj.next(t) for t in ["test.run", "edit.apply", "test.run"] * 40])
    assert runs[0] == runs[1]
    kinds = {k for k in runs[0] if k}
    assert kinds <= {"test_timeout", "sandbox_failure"}  # no model: no model faults
    assert runs[0][1::3] == [None] * 40  # edit.apply starts no sandbox: never faulted
    assert 0 < sum(k is not None for k in runs[0]) < 80
    assert all(k is None for k in (FaultInjector(FaultPlan(), "t").next("test.run")
                                   for _ in range(50)))
    inj = FaultInjector(plan_, "t")
    with pytest.raises(InjectedFault, match="injected fault"):
        inj.raise_for("test.run", "sandbox_failure")


def test_every_arm_has_a_graph_and_only_the_gate_ablation_is_red() -> None:
    assert set(ARMS) == set(ARM_NAMES + ABLATION_NAMES)
    with pytest.raises(DefinitionError, match="unknown arm"):
        arm("arm9")
    for name, a in ARMS.items():
        if a.free_agent or not a.single_l:
            continue
        report = check(graph_for(a))
        assert report.ok is (name != "no_gates"), name
    assert not graph_for(arm("arm2")).lattice and graph_for(arm("arm4")).lattice
    assert graph_for(arm("arm1")).budgets.retry == 5
    everything = set(graph_for(arm("no_allowlists")).tools)
    assert set(graph_for(arm("no_allowlists")).contracts["TEST"].permitted_tools) == everything
