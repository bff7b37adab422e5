"""Issue 26 §7: one reconcile, under the run's lock, serves the command line, the MCP tool and
the HTTP route; contradictory input is refused on each alike."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from frostline.cli.run import reconcile_command
from frostline.contract.records import CallStatus
from frostline.errors import DefinitionError
from frostline.mcp import operations as mcp_ops
from frostline.service.operations import Services
from frostline.store import open_store
from tests.service.conftest import serving
from tests.store.helpers import eventually

SLOW = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 7})
    return a["n"]
'''


def _pending(store, key: str) -> list:
    return [c for c in store.list_calls(key) if c.status is CallStatus.PENDING]


def test_issue26_reconcile_races_a_running_attempt_and_is_refused(store_url):
    """While an attempt's call is in flight (pending in the store), a reconcile of it over
    HTTP used to write a slot under the attempt's feet; now it waits for the run's lock and
    answers 409 run_busy, and the attempt commits its own result."""
    services = Services.default(runner_name="process", latency_s=4.0)
    with serving(open_store(store_url), services=services) as live, \
            live.client(live.alice) as c:
        created = c.post("/v1/runs", json={"script": SLOW, "run_id": "raced"})
        assert created.status_code == 202, created.text
        key = live.store.find_run("alice", "raced").run_id
        eventually(lambda: bool(_pending(live.store, key)), timeout=60,
                   what="the attempt's call in flight")
        ident = str(_pending(live.store, key)[0].identity)
        r = c.post("/v1/runs/raced/reconcile", json={"identity": ident, "result": {"n": 0}})
        assert r.status_code == 409, r.text
        assert r.json()["error"]["code"] == "run_busy"
        eventually(lambda: c.get("/v1/runs/raced").json()["status"] == "succeeded", timeout=60,
                   what="the attempt to finish")
        detail = c.get("/v1/runs/raced").json()
        assert detail["attempts"][-1]["result"] == 7
        kinds = [e.kind for e in live.store.list_events(key)]
        assert "call.reconciled" not in kinds


def test_issue26_reconcile_refuses_result_with_abandon_on_every_surface(store_url, tmp_path):
    with serving(open_store(store_url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "r"},
                      params={"wait": 60}).status_code == 200
        r = c.post("/v1/runs/r/reconcile", json={"identity": "orchestrate/#0@:0",
                                                 "abandon": True, "result": {"n": 1}})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "definition"
        assert "not both" in r.json()["error"]["message"]
        neither = c.post("/v1/runs/r/reconcile", json={"identity": "orchestrate/#0@:0"})
        assert neither.status_code == 400 and "either" in neither.json()["error"]["message"]
        with pytest.raises(DefinitionError, match="not both"):
            mcp_ops.reconcile_call(live.store, "r", "orchestrate/#0@:0", result={"n": 1},
                                   abandon=True, owner="alice")
        # nothing changed: the call is still committed, no reconcile event
        key = live.store.find_run("alice", "r").run_id
        assert [c.status for c in live.store.list_calls(key)] == [CallStatus.COMMITTED]
        assert not any(e.kind.startswith("call.") and "reconcil" in e.kind
                       for e in live.store.list_events(key))
    out = CliRunner().invoke(reconcile_command, ["r", "orchestrate/#0@:0", "--abandon",
                                                 "--result", "{}", "--store", store_url])
    assert out.exit_code == 2 and "exactly one" in out.output
