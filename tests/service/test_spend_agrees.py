"""One spend figure on the demo run: the demo's table, `frostline show`, the HTTP API (the run
view the web UI draws, and the run list) give the same dollars. The browser half of this
(what the UI prints) is in test_ui_browser."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from frostline.cli import main


def test_demo_show_and_api_agree_on_the_demo_runs_spend(live, tmp_path):
    from frostline.demo.scenario import run_demo

    result = run_demo(store_url=live.store.url, out_dir=tmp_path / "demo", runner_name="process",
                      latency_s=0.0, owner="alice")
    # storyboard $0.002 and four accepted shots at $0.02; the rejected fourth shot costs nothing
    demo = result.contract.spend_usd
    assert demo == pytest.approx(0.002 + 4 * 0.02)

    shown = CliRunner().invoke(main, ["show", f"@alice/{result.run_id}", "--store",
                                      live.store.url, "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["spend_usd"] == pytest.approx(demo)
    assert sum(a["spend_usd"] for a in data["attempts"]) == pytest.approx(demo)

    with live.client(live.alice) as api:
        detail = api.get(f"/v1/runs/{result.run_id}").json()
        listed = {r["run_id"]: r for r in api.get("/v1/runs").json()["runs"]}
    assert detail["spend_usd"] == pytest.approx(demo)
    assert listed[result.run_id]["spend_usd"] == pytest.approx(demo)
    assert sum(a["stats"]["spend_usd"] for a in detail["attempts"]) == pytest.approx(demo)
