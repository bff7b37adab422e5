"""`frostline graph tune`: offline tuning on real textkit tasks (bubblewrap, pytest, the
template generator: the empty L column), end to end through the CLI; the model checker in
front of every evaluation; determinism under a seed; the held-out split refused; and the
runtime never reading the tuning report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tune_fixtures import tasks_folder

from frostline.cli import main
from frostline.coding.arms import arm
from frostline.coding.interface import FaultPlan, Task, TaskOutcome
from frostline.coding.setup import SolveSettings
from frostline.coding.solve import solve
from frostline.coding.tasks.split import load_tasks
from frostline.coding.testrun import SandboxSettings
from frostline.coding.tune import (
    candidate_graph,
    report_path,
    tune,
    workflow_evaluator,
    write_tuned,
)
from frostline.errors import TaskSetError
from frostline.graph.graph import Graph, load_graph
from frostline.graph.modelcheck import check

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
SETTINGS = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5))


def small_space(*tunables: dict[str, Any]) -> Graph:
    """The canonical graph declaring only `tunables` (a small space keeps the runs short)."""
    data = load_graph("canonical").to_dict()
    data["tunables"] = list(tunables)
    return Graph.from_dict(data)


class Recording:
    """The real workflow evaluator, remembering every graph it was handed."""

    def __init__(self, workdir: Path) -> None:
        self.evaluate = workflow_evaluator(workdir=workdir, settings=SETTINGS)
        self.graphs: list[str] = []

    def __call__(self, graph: Graph, tasks: Any) -> list[TaskOutcome]:
        self.graphs.append(graph.content_digest)
        return self.evaluate(graph, tasks)


def tuning_tasks(tmp_path: Path, *bugs: str) -> tuple[Path, list[Task]]:
    folder = tasks_folder(tmp_path, tuning=bugs)
    return folder, load_tasks(folder, "tuning")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_a_small_budget_tunes_end_to_end_through_the_cli(tmp_path: Path) -> None:
    folder = tasks_folder(tmp_path, tuning=("clamp_gt",))
    out = tmp_path / "tuned.json"
    code, output = invoke("graph", "tune", "--tasks", str(folder), "--budget", "2", "--out",
                          str(out), "--json")
    assert code == 0, output
    report = json.loads(output)
    assert report["split"] == "tuning" and report["tasks"]["ids"] == ["textkit-clamp_gt"]
    assert report["evaluations"] == 2 and report["budget"] == 2
    assert "tuning split" in report["label"] and "upper bound" in report["label"]
    evaluated = [c for c in report["candidates"] if c["evaluated"]]
    assert len(evaluated) == 2 and evaluated[0]["changed"] == {}  # the declared graph first
    for c in evaluated:  # every candidate: its values, the checker's verdict, every instrument
        assert c["check"] == {"ok": True, "failed": []}
        assert {"resolve_rate", "tokens", "wall_s", "llm_calls", "illegal_actions",
                "redundant_actions", "repeated_work", "regressions", "stale_context",
                "tool_calls"} <= set(c["scores"])
        assert len(c["values"]) == len(load_graph("canonical").tunables)
    assert evaluated[0]["scores"]["resolve_rate"] == 1.0  # arm 4 fixes this bug
    # the tuned graph: a green graph file with its provenance, the report beside it
    tuned = load_graph(out)
    assert check(tuned).ok and not tuned.tunables
    assert tuned.provenance is not None
    assert tuned.provenance["base_digest"] == load_graph("canonical").content_digest
    assert {k: tuned.provenance[k] for k in ("split", "budget", "seed", "tasks_digest")} == {
        "split": "tuning", "budget": 2, "seed": 0, "tasks_digest": report["tasks"]["digest"]}
    assert json.loads(report_path(out).read_text())["tuned"]["digest"] == tuned.content_digest
    # and a human-readable run prints the table and where the files went
    code, output = invoke("graph", "tune", "--tasks", str(folder), "--budget", "1", "--out",
                          str(tmp_path / "again.json"))
    assert code == 0 and "declared" in output and "again.report.json" in output


def test_a_candidate_that_breaks_liveness_is_rejected_by_the_checker_and_never_evaluated(
        tmp_path: Path) -> None:
    _, tasks = tuning_tasks(tmp_path, "clamp_gt")
    # Without TEST's termination edge a run whose tests still fail once the retry budget is
    # spent has no enabled edge: the checker finds it stuck (liveness).
    base = small_space({"kind": "edge", "target": "TEST->TERMINAL_REJECT:termination",
                        "values": [True, False]},
                       {"kind": "budget", "target": "retry", "values": [3]})
    evaluate = Recording(tmp_path / "work")
    result = tune(base, tasks, evaluate, budget=5, seed=0, split="tuning", tasks_digest="d")
    red = [c for c in result.candidates if not c.check["ok"]]
    assert len(red) == 1 and red[0].changed == {"edge:TEST->TERMINAL_REJECT:termination": False}
    assert "liveness" in red[0].check["failed"] and red[0].check["counterexample"]
    assert not red[0].evaluated and red[0].scores is None
    assert "rejected by the model checker" in red[0].note
    assert red[0].digest not in evaluate.graphs  # it never ran
    assert result.evaluations == len(evaluate.graphs) == 1  # the declared graph only
    report = result.report()
    assert report["rejected_by_checker"] == 1 and not result.improved
    assert report["candidates"][1]["note"].startswith("rejected by the model checker (liveness")


def _without_clocks(report: dict[str, Any]) -> dict[str, Any]:
    report = json.loads(json.dumps(report))
    report.pop("wall_s")
    for c in [*report["candidates"], report["declared"], report["best"]]:
        c.pop("wall_s")
        if c["scores"]:
            c["scores"].pop("wall_s")
    return report


def test_the_same_seed_gives_the_same_search_and_the_same_tuned_graph(tmp_path: Path) -> None:
    _, tasks = tuning_tasks(tmp_path, "clamp_lt")
    base = small_space({"kind": "budget", "target": "retry", "values": [0, 1, 3]},
                       {"kind": "setting", "target": "samples", "values": [1, 3]},
                       {"kind": "state", "target": "REFLECT", "values": [True, False]})
    runs = [tune(base, tasks, workflow_evaluator(workdir=tmp_path / f"w{i}", settings=SETTINGS),
                 budget=3, seed=11, split="tuning", tasks_digest="d") for i in range(2)]
    assert _without_clocks(runs[0].report()) == _without_clocks(runs[1].report())
    assert runs[0].tuned.dumps() == runs[1].tuned.dumps()
    paths = [write_tuned(r, tmp_path / f"t{i}.json")[0] for i, r in enumerate(runs)]
    assert paths[0].read_text() == paths[1].read_text()
    # the search keeps a point only when it scores better: the best is never below the declared
    declared, best = runs[0].candidates[0].scores, runs[0].candidates[runs[0].best].scores
    assert declared is not None and best is not None
    assert best["resolve_rate"] >= declared["resolve_rate"]
    assert [c.changed for c in runs[0].candidates] == [c.changed for c in runs[1].candidates]


@pytest.mark.parametrize("split", ["held_out", "heldout", "all"])
def test_any_split_but_tuning_is_refused_as_a_usage_error(tmp_path: Path, split: str) -> None:
    folder = tasks_folder(tmp_path)
    code, output = invoke("graph", "tune", "--tasks", str(folder), "--split", split, "--json")
    assert code == 2
    error = json.loads(output)["error"]
    assert error["code"] == "tasks" and "tuning split only" in error["message"]
    assert not (folder / "results").exists()  # nothing ran, nothing was written


def test_held_out_rows_are_refused_whatever_the_flag_says(tmp_path: Path) -> None:
    folder = tasks_folder(tmp_path)
    heldout = load_tasks(folder, "heldout")
    with pytest.raises(TaskSetError, match="tuning tasks only"):
        tune(load_graph("canonical"), heldout, workflow_evaluator(workdir=tmp_path / "w"),
             budget=1, seed=0, split="tuning", tasks_digest="d")


def test_a_graph_that_declares_nothing_tunable_is_a_usage_error(tmp_path: Path) -> None:
    folder = tasks_folder(tmp_path)
    code, output = invoke("graph", "tune", "--tasks", str(folder), "--graph", "seed", "--json")
    assert code == 2 and "declares nothing tunable" in json.loads(output)["error"]["message"]
    code, output = invoke("graph", "tune", "--tasks", str(folder), "--budget", "0", "--json")
    assert code == 2 and "--budget" in json.loads(output)["error"]["message"]


def test_the_runtime_never_reads_the_tuning_report(tmp_path: Path) -> None:
    _, tasks = tuning_tasks(tmp_path, "clamp_gt")
    base = small_space({"kind": "setting", "target": "samples", "values": [3]})
    result = tune(base, tasks, workflow_evaluator(workdir=tmp_path / "w", settings=SETTINGS),
                  budget=1, seed=0, split="tuning", tasks_digest="d")
    graph_file, report_file = write_tuned(result, tmp_path / "tuned.json")
    opened: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], str | Path):
            opened.append(str(args[0]))
    sys.addaudithook(audit)  # hooks cannot be removed; this one only appends paths
    tuned = load_graph(graph_file)
    outcome = solve(tasks[0], arm("arm4"), FaultPlan(), workdir=tmp_path / "run",
                    settings=SETTINGS, graph=tuned)
    assert outcome.status == "ACCEPT", outcome.reason
    assert outcome.details["graph"] == {"name": tuned.name, "digest": tuned.content_digest}
    assert str(graph_file) in opened and not any("report" in Path(p).name for p in opened)
    assert str(report_file) not in opened
    # and nothing that runs a graph imports the tuner
    code = ("import sys, frostline.coding.solve, frostline.coding.resumable, "
            "frostline.graph.engine, frostline.graph.durable, frostline.worker; "
            "print(sorted(m for m in sys.modules if m.startswith('frostline.coding.tune')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_tuned_graph_s_settings_are_the_ones_in_force() -> None:
    point = {"setting:samples": 1, "setting:screen_limit": 96, "setting:test_timeout": 40.0}
    tuned = SETTINGS.with_graph(candidate_graph(load_graph("canonical"), point))
    assert (tuned.samples, tuned.screen_limit, tuned.sandbox.test_timeout) == (1, 96, 40.0)
    assert tuned.sandbox.wall_seconds == SETTINGS.sandbox.wall_seconds  # the rest is kept
    assert tuned.tools().samples == 1 and tuned.tools().screen_limit == 96
