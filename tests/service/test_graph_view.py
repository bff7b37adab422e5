"""A durable graph run as its owner sees it over HTTP: the path, visits, edges taken,
artifacts with freshness and the ledger (JSON), the graph drawn with that path (SVG), and the
same run in a real headless Chromium."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from frostline.graph.bodies import load_bodies
from frostline.graph.durable import run_durable
from frostline.graph.shipped import canonical_graph
from tests.service.conftest import poll, signed_in

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "graph" / "fix_failing_test.py"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SVG = "{http://www.w3.org/2000/svg}"


def _graph_run(store, name="fix", owner="alice", attempts=1):
    graph = canonical_graph()
    for _ in range(attempts):
        made = load_bodies(str(EXAMPLE))  # its scripted model replies start over each time
        outcome = run_durable(store, name, graph, made["bodies"], made["tools"],
                              model=made.get("model"), owner=owner)
    return outcome


def test_graph_run_json_and_svg_follow_the_ledger(live):
    outcome = _graph_run(live.store, attempts=2)
    assert outcome.status == "accepted" and outcome.replayed == 20 and outcome.executed == 0
    alice = live.client(live.alice)
    g = alice.get("/v1/runs/fix/graph").json()
    assert g["attempt"] == 2 and g["attempts"] == 2 and g["status"] == "accepted"
    assert g["path"][0] == "INIT" and g["path"][-1] == "TERMINAL_ACCEPT"
    assert sum(g["visits"].values()) == len(g["path"])
    # the example takes the retry edge once and the rollback edge once, and edits three times
    assert g["visits"]["EDIT"] == 3 and g["visits"]["REPAIR"] == 2
    taken = {(e["from"], e["to"], e["kind"]): e["taken"] for e in g["edges"]}
    assert taken[("TEST", "REPAIR", "retry")] == 1 and taken[("REVIEW", "REPAIR", "rollback")] == 1
    assert sum(taken.values()) == len(g["path"]) - 1
    patch = next(a for a in g["artifacts"] if a["artifact"] == "Patch")
    assert patch["freshness"] == "VALID" and patch["produced_by"] == "EDIT#2"
    assert g["terminal"] == {"state": "TERMINAL_ACCEPT", "status": "accepted", "reason": ""}
    assert g["ledger_events_per_attempt"]["1"] == g["ledger_events_per_attempt"]["2"] == len(g["ledger"])

    svg = alice.get("/v1/runs/fix/graph.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(svg.text)
    badges = {int(b.get("data-visits")) for b in root.iter(f"{SVG}g") if b.get("class") == "visits"}
    assert badges == set(g["visits"].values())
    heavy = [p for p in root.iter(f"{SVG}path") if "taken" in (p.get("class") or "").split()]
    assert len(heavy) == len(taken)

    # the run detail of a graph run carries its certificate, consistent with its calls
    detail = alice.get("/v1/runs/fix").json()
    assert detail["kind"] == "graph" and detail["certificate"]["consistent"] is True
    assert detail["certificate"]["entries"] == 20 and detail["frozen_sites"] == []


def test_graph_view_is_owner_scoped_and_only_for_graph_runs(live):
    _graph_run(live.store)
    bob = live.client(live.bob)
    for path in ("/v1/runs/fix/graph", "/v1/runs/fix/graph.svg"):
        r = bob.get(path)
        assert r.status_code == 404 and r.json()["error"]["code"] == "run_not_found"
    alice = live.client(live.alice)
    made = alice.post("/v1/runs?wait=60", json={"run_id": "plain", "script": (
        "async def orchestrate(ctx, args):\n    return await ctx.run('echo', {'x': 1})\n")})
    assert made.status_code in (200, 201, 202), made.text
    r = alice.get("/v1/runs/plain/graph")
    assert r.status_code == 404 and "not a graph run" in r.json()["error"]["message"]
    assert alice.get("/v1/runs/nope/graph").status_code == 404


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_graph_run_in_the_browser(live, tmp_path):
    _graph_run(live.store)
    g = live.client(live.alice).get("/v1/runs/fix/graph").json()
    with signed_in(live, live.alice, CHROMIUM) as page:
        page.wait_for_selector("tr[data-run='fix']")
        page.click("tr[data-run='fix']")
        page.wait_for_selector("#graph-ledger")
        assert page.inner_text("#run-id") == "fix"
        assert page.inner_text("#graph-path") == " → ".join(g["path"])
        assert page.locator("#graph-artifacts tbody tr").count() == len(g["artifacts"])
        assert page.locator("#graph-visits tbody tr").count() == len(g["visits"])
        assert page.locator("#graph-ledger tbody tr").count() == len(g["ledger"])
        poll(page, "() => { const i = document.querySelector('#graph-svg'); "
                   "return i.src.startsWith('blob:') && i.naturalWidth > 0; }",
             "the graph drawing loading")
        shot = tmp_path / "graph-run.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
