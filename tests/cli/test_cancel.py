"""`frostline cancel` (issue 26): the command line cancels a job that `frostline serve` runs on
the same store, from another process's point of view (the request goes through the store)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from frostline.cli import main
from tests.service.test_cancel import QUICK, SLOW, _committed, _slow, eventually


def test_issue26_frostline_cancel_stops_a_job_the_server_runs(store_url: str) -> None:
    with _slow(store_url) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "slow"}).status_code == 202
        eventually(lambda: _committed(live, "slow") >= 1, what="a committed call")
        result = CliRunner().invoke(main, ["cancel", "@alice/slow", "--store", store_url,
                                           "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.output)
        assert out["by"] == "local" and out["status"] == "cancelled"
        assert [(j["was"], j["state"]) for j in out["jobs"]] == [("running", "cancelled")]
        attempt = live.store.list_attempts("@alice/slow")[-1]
        assert attempt.status == "cancelled" and attempt.error["by"] == "local"
        # a finished run: exit 1 with the one JSON error shape
        again = CliRunner().invoke(main, ["cancel", "@alice/slow", "--store", store_url,
                                          "--json"])
        assert again.exit_code == 1
        assert json.loads(again.output)["error"]["code"] == "nothing_to_cancel"
        assert c.post("/v1/runs", json={"script": QUICK, "run_id": "q"},
                      params={"wait": 60}).status_code == 200
        unknown = CliRunner().invoke(main, ["cancel", "nope", "--store", store_url, "--json"])
        assert unknown.exit_code == 2


def test_issue26_cancel_is_in_the_help() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "cancel" in result.output
    result = CliRunner().invoke(main, ["cancel", "--help"])
    assert result.exit_code == 0 and "queued or running job" in result.output
