"""Adopting a tuned graph: strict domination on held-out `frostline ab` figures, or the
declared graph stays. The rule on scripted outcomes written by the A/B report writer, and the
whole path on a real held-out task: `ab --arms arm4`, `ab --arms arm4 --graph`, `graph adopt`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from tune_fixtures import tasks_folder

from frostline.cli import main
from frostline.coding.ab.driver import ABRun
from frostline.coding.ab.report import build_report, write_report
from frostline.coding.adopt import decide_adoption, read_results
from frostline.coding.interface import FaultPlan, Instruments, Mutation, Task, TaskOutcome
from frostline.coding.tune import candidate_graph
from frostline.errors import ReportInvalid
from frostline.graph.graph import Graph, load_graph


def tuned_graph() -> Graph:
    return candidate_graph(load_graph("canonical"), {"budget:retry": 4})


def results(folder: Path, resolved: list[int], *, tokens: int = 0, graph: Graph | None = None,
            split: str = "heldout", faults: FaultPlan | None = None) -> Path:
    """An A/B results folder with arm 4's scripted outcomes, written by the report writer."""
    tasks = [Task(f"t{i}", "alpha", "1", "0" * 64, "/nowhere", Mutation("m.py", 1, "x", "a", "b"),
                  (), ()) for i in range(len(resolved))]
    details = {} if graph is None else {"graph": {"name": graph.name,
                                                  "digest": graph.content_digest}}
    run = ABRun(tasks=tasks, arms=["arm4"], faults=faults or FaultPlan(), outcomes={"arm4": [
        TaskOutcome(t.task_id, "arm4", "ACCEPT" if r else "TERMINAL_REJECT", "",
                    Instruments(resolved=r, tokens=tokens, wall_s=1.0), dict(details))
        for t, r in zip(tasks, resolved, strict=True)]})
    write_report(folder, build_report(run, [], tasks_dir="tasks", split=split), run)
    return folder


def test_a_tuned_graph_that_strictly_dominates_is_adopted(tmp_path: Path) -> None:
    g = tuned_graph()
    declared = read_results(results(tmp_path / "d", [0, 0, 0, 0, 0, 0, 1, 1]))
    tuned = read_results(results(tmp_path / "t", [1] * 8, graph=g))
    decision = decide_adoption(declared, tuned, g)
    assert decision.verdict == "adopted", decision.reason
    assert "better on ['resolve_rate']" in decision.reason


def test_worse_on_any_instrument_keeps_the_declared_graph(tmp_path: Path) -> None:
    g = tuned_graph()
    declared = read_results(results(tmp_path / "d", [0] * 6 + [1] * 2))
    tuned = read_results(results(tmp_path / "t", [1] * 8, tokens=500, graph=g))
    decision = decide_adoption(declared, tuned, g)
    assert decision.verdict == "rejected" and "worse on ['tokens']" in decision.reason
    same = decide_adoption(declared, read_results(results(tmp_path / "s", [0] * 6 + [1] * 2,
                                                          graph=g)), g)
    assert same.verdict == "rejected" and "better on no instrument" in same.reason


def test_too_few_paired_tasks_decide_nothing(tmp_path: Path) -> None:
    g = tuned_graph()
    decision = decide_adoption(read_results(results(tmp_path / "d", [0, 0])),
                               read_results(results(tmp_path / "t", [1, 1], graph=g)), g)
    assert decision.verdict == "undecided" and "declared graph stays" in decision.reason


@pytest.mark.parametrize("case", ["tuning split", "other faults", "not the tuned graph",
                                  "declared ran it"])
def test_figures_that_cannot_decide_adoption_are_refused(tmp_path: Path, case: str) -> None:
    g = tuned_graph()
    declared, tuned = tmp_path / "d", tmp_path / "t"
    results(declared, [0] * 6, graph=g if case == "declared ran it" else None)
    results(tuned, [1] * 6, graph=None if case == "not the tuned graph" else g,
            split="tuning" if case == "tuning split" else "heldout",
            faults=FaultPlan(0.1, 3) if case == "other faults" else None)
    with pytest.raises(ReportInvalid):
        decide_adoption(read_results(declared), read_results(tuned), g)
    g_file = tmp_path / "g.json"
    g_file.write_text(g.dumps())
    result = CliRunner().invoke(main, ["graph", "adopt", str(g_file), "--declared", str(declared),
                                       "--tuned", str(tuned), "--json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "report_invalid"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_held_out_ab_of_a_tuned_graph_feeds_graph_adopt(tmp_path: Path) -> None:
    folder = tasks_folder(tmp_path, tuning=("clamp_gt",), heldout=("clamp_lt",))
    g_file = tmp_path / "tuned.json"
    g_file.write_text(tuned_graph().dumps())

    def ab(*extra: str) -> tuple[int, str]:
        r = CliRunner().invoke(main, ["ab", "--tasks", str(folder), "--arms", "arm4",
                                      "--no-figures", "--json", *extra])
        return r.exit_code, r.stdout
    assert ab("--out", str(tmp_path / "declared"))[0] == 0
    code, output = ab("--out", str(tmp_path / "tuned"), "--graph", str(g_file))
    assert code == 0, output
    report = json.loads(output)
    assert report["run"]["graph"]["digest"] == tuned_graph().content_digest
    assert report["arms"]["arm4"]["resolve_rate"] == 1.0
    result = CliRunner().invoke(main, ["graph", "adopt", str(g_file), "--declared",
                                       str(tmp_path / "declared"), "--tuned",
                                       str(tmp_path / "tuned"), "--json"])
    decision = json.loads(result.stdout)
    assert result.exit_code == 1 and decision["verdict"] == "undecided"  # one held-out task
    # --graph runs arm 4 alone, and only a graph the checker proves
    assert ab("--out", str(tmp_path / "x"), "--graph", str(g_file), "--arms", "arm2")[0] == 2
    red = tuned_graph().to_dict()
    red["transitions"] = [t for t in red["transitions"] if (t["from"], t["kind"]) !=
                          ("TEST", "termination")]
    red["contracts"]["TEST"]["failure_transitions"] = [
        t for t in red["contracts"]["TEST"]["failure_transitions"] if t["kind"] != "termination"]
    (tmp_path / "red.json").write_text(json.dumps(red))
    code, output = ab("--out", str(tmp_path / "y"), "--graph", str(tmp_path / "red.json"))
    assert code == 2 and "liveness" in json.loads(output)["error"]["message"]
