"""`frostline graph check | show | run` through click's CliRunner."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.graph import graph, load_bodies
from frostline.graph.graph import load_graph
from frostline.graph.promela import spin_available

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "graph" / "fix_failing_test.py"


@pytest.fixture
def cli() -> CliRunner:
    return CliRunner()


def test_check_canonical_exits_0_with_json(cli):
    r = cli.invoke(graph, ["check", "canonical", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["ok"] is True
    assert set(out["queries"]) == {"reachability", "safety", "liveness"}
    assert all(q == {"ok": True, "counterexample": None} for q in out["queries"].values())
    assert out["states_explored"] > 0 and isinstance(out["elapsed_ms"], float)


def test_check_seed_exits_1_with_a_counterexample(cli):
    r = cli.invoke(graph, ["check", "seed", "--json"])
    assert r.exit_code == 1
    out = json.loads(r.output)
    assert out["ok"] is False
    assert out["queries"]["safety"]["counterexample"][-1] == "PLAN"
    assert out["queries"]["liveness"]["ok"] is False
    human = cli.invoke(graph, ["check", "seed"])
    assert human.exit_code == 1 and "fails" in human.output and "Diagnosis" in human.output


def test_check_malformed_file_exits_2_naming_the_field(cli, tmp_path):
    data = load_graph("canonical").to_dict()
    data["transitions"][0]["kind"] = "teleport"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    r = cli.invoke(graph, ["check", str(path), "--json"])
    assert r.exit_code == 2
    err = json.loads(r.output)["error"]
    assert err["code"] == "graph_load" and "teleport" in err["message"]
    assert err["field"] == "transitions[0].kind"
    r = cli.invoke(graph, ["check", str(tmp_path / "missing.json")])
    assert r.exit_code == 2


def test_check_a_graph_file(cli, tmp_path):
    path = tmp_path / "g.json"
    path.write_text(load_graph("canonical").dumps())
    assert cli.invoke(graph, ["check", str(path)]).exit_code == 0


def test_show_mermaid_and_dot_distinguish_kinds(cli):
    r = cli.invoke(graph, ["show", "canonical", "--format", "mermaid"])
    assert r.exit_code == 0 and r.output.startswith("flowchart TD")
    assert "TEST -.->|\"retry\"| REPAIR" in r.output
    assert "stroke:#d97706" in r.output and "stroke:#dc2626" in r.output
    r = cli.invoke(graph, ["show", "seed", "--format", "dot"])
    assert r.exit_code == 0 and r.output.startswith('digraph "seed"')
    assert 'style=dashed' in r.output and 'style=dotted' in r.output and 'label="out_of_budget"' in r.output


def test_show_promela(cli):
    r = cli.invoke(graph, ["show", "canonical", "--format", "promela"])
    assert r.exit_code == 0 and "active proctype walker()" in r.output


def test_show_svg_is_well_formed(cli, tmp_path):
    out = tmp_path / "g.svg"
    r = cli.invoke(graph, ["show", "canonical", "--format", "svg", "-o", str(out)])
    assert r.exit_code == 0
    root = ET.fromstring(out.read_text())
    ns = {"s": "http://www.w3.org/2000/svg"}
    edges = root.findall(".//s:path[@class]", ns)
    kinds = {e.get("class") for e in edges}
    assert {"edge forward", "edge retry", "edge rollback", "edge termination"} <= kinds
    assert len(edges) == len(load_graph("canonical").transitions)
    dashes = {e.get("class"): e.get("stroke-dasharray") for e in edges}
    assert dashes["edge forward"] is None and dashes["edge retry"] != dashes["edge termination"]
    assert len(root.findall(".//s:g[@class='state']", ns)) == 20


def test_run_the_example_accepts(cli):
    r = cli.invoke(graph, ["run", "canonical", "--bodies", str(EXAMPLE)])
    assert r.exit_code == 0, r.output
    assert "edge TEST -> REPAIR (retry) drew retry" in r.output
    assert "edge REVIEW -> REPAIR (rollback) drew rollback" in r.output
    assert r.output.strip().splitlines()[-2] == "accepted: TERMINAL_ACCEPT"


def test_run_json_lines(cli):
    r = cli.invoke(graph, ["run", "canonical", "--bodies", str(EXAMPLE), "--json"])
    lines = [json.loads(x) for x in r.output.splitlines()]
    events = [x["event"] for x in lines[:-1]]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    result = lines[-1]["result"]
    assert result["status"] == "accepted" and result["counters"]["retry_used"] == 1
    assert result["counters"]["rollback_used"] == 1 and result["counters"]["illegal_tools"] == 0


def test_run_the_reject_variant(cli, monkeypatch):
    monkeypatch.setenv("FROSTLINE_EXAMPLE_VARIANT", "reject")
    r = cli.invoke(graph, ["run", "canonical", "--bodies", str(EXAMPLE)])
    assert r.exit_code == 1
    assert "rejected: TERMINAL_REJECT out_of_budget" in r.output


def test_run_refuses_a_red_graph_and_bad_bodies(cli, tmp_path):
    r = cli.invoke(graph, ["run", "seed", "--bodies", str(EXAMPLE), "--json"])
    assert r.exit_code == 2
    assert json.loads(r.output)["error"]["code"] == "graph_rejected"
    bad = tmp_path / "bodies.py"
    bad.write_text("X = 1\n")
    r = cli.invoke(graph, ["run", "canonical", "--bodies", str(bad)])
    assert r.exit_code == 2 and "BODIES" in r.output
    r = cli.invoke(graph, ["run", "canonical", "--bodies", "no.such.module"])
    assert r.exit_code == 2


def test_bodies_from_module_attributes(tmp_path):
    p = tmp_path / "attrs.py"
    p.write_text("BODIES = {'TEST': lambda ctx: None}\nTOOLS = {'test.run': lambda p: {}}\n")
    made = load_bodies(str(p))
    assert set(made["bodies"]) == {"TEST"} and set(made["tools"]) == {"test.run"} and made["model"] is None


@pytest.mark.skipif(not spin_available(), reason="spin and gcc are not installed (apt-get install -y spin gcc)")
def test_check_with_spin_cross_check(cli):
    r = cli.invoke(graph, ["check", "canonical", "--json", "--spin"])
    assert r.exit_code == 0, r.output
    spin = json.loads(r.output)["spin"]
    assert spin["agrees"] is True and spin["safety"] is True and spin["elapsed_ms"] > 0
