"""A durable graph run belongs to its owner, and a script attempt or a script repair on it is
refused before anything is written (its calls are not a script's sites)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from frostline.errors import DefinitionError
from frostline.graph.bodies import load_bodies
from frostline.graph.durable import run_durable
from frostline.graph.shipped import canonical_graph
from frostline.repair.loop import task_from_store
from frostline.store import open_store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "graph" / "fix_failing_test.py"
SCRIPT = "async def orchestrate(ctx, args):\n    return await ctx.run('echo', {'x': 1})\n"


@pytest.fixture
def graph_store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    made = load_bodies(str(EXAMPLE))
    out = run_durable(store, "g1", canonical_graph(), made["bodies"], made["tools"],
                      model=made.get("model"), owner="alice")
    assert out.status == "accepted" and out.run_id == "@alice/g1"
    yield store
    store.close()


def test_a_graph_run_has_its_owner_and_a_certificate(graph_store):
    run = graph_store.find_run("alice", "g1")
    assert run is not None and run.kind == "graph" and run.owner == "alice"
    assert graph_store.get_run("g1") is None  # not the local principal's
    assert len(graph_store.list_certificates("@alice/g1")) == 1


def test_script_attempt_and_repair_on_a_graph_run_are_refused(graph_store, tmp_path):
    before = len(graph_store.list_attempts("@alice/g1"))
    with pytest.raises(DefinitionError, match="graph run"):
        task_from_store(graph_store, "@alice/g1")
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "frostline", "run", str(script), "--run", "g1",
                           "--owner", "alice", "--store", graph_store.url, "--runner", "process",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "is a graph run" in json.loads(done.stdout)["error"]["message"]
    assert len(graph_store.list_attempts("@alice/g1")) == before
