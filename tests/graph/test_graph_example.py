"""The shipped example: a real failing test, fixed after one retry, with one rollback."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from frostline.errors import RunError
from frostline.graph import Engine, LocalToolRouter, SlotRequest, TraversalStatus, load_graph

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "graph" / "fix_failing_test.py"


def load_example():
    spec = importlib.util.spec_from_file_location("graph_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_failing_test_fixed_after_one_retry_and_one_rollback():
    made = load_example().build()
    router = LocalToolRouter(made["tools"])
    result = Engine(load_graph("canonical"), made["bodies"], model=made["model"], router=router).run()
    assert result.status is TraversalStatus.ACCEPTED
    edges = [(e.data["from"], e.data["to"], e.data["kind"]) for e in result.ledger.of_kind("edge")]
    assert ("TEST", "REPAIR", "retry") in edges and ("REVIEW", "REPAIR", "rollback") in edges
    # the patched repository really passes its tests now (run in a child process by the tool)
    assert "return a + b" in (made["workspace"] / "calc.py").read_text()
    assert result.artifacts["TestResult"].value["failed"] == 0
    c = result.counters
    assert c.model_calls_by_state == {"LOCALIZE": 2, "DEBUG": 1, "GENERATE": 1, "REPAIR": 2}
    assert c.illegal_tools == c.illegal_transitions == 0
    # the reviewer's rollback made the stale Review recomputed, nothing upstream
    for e in result.ledger.of_kind("invalidation"):
        assert e.data["stale"] == ["Review"]


def test_the_example_model_replays_its_script_and_then_fails_the_visit():
    client = load_example().build()["model"]
    request = SlotRequest("DEBUG", 0, 0, {}, {"name": "Diagnosis", "required": []}, ())
    assert client.complete(request)["output"]["patch_local"] == 1
    with pytest.raises(RunError, match="no reply left for DEBUG"):
        client.complete(request)


def test_the_workspace_is_removed_when_the_process_exits(tmp_path):
    import os
    import subprocess
    import sys

    code = ("import importlib.util, os, sys\n"
            "spec = importlib.util.spec_from_file_location('ex', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "made = m.build()\n"
            "print(made['workspace'].is_dir())\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], env=env, check=True,
                         capture_output=True, text=True)
    assert out.stdout.strip() == "True"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("frostline-example-")] == []


def test_the_workspace_is_removed_when_the_scenario_is_dropped():
    import gc

    made = load_example().build()
    root = made["workspace"]
    assert root.is_dir()
    del made
    gc.collect()
    assert not root.exists()
