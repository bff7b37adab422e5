"""Cancelling a run over real HTTP (issue 26): the owner stops a queued or running job, the
attempt ends `cancelled` with nothing pending, a finished run answers 409, another principal's
run is a 404 — on both stores."""

from __future__ import annotations

import time

import httpx

from frostline.contract.records import CallStatus
from frostline.service.limits import ServiceLimits
from frostline.service.operations import Services
from frostline.store import open_store
from tests.service.conftest import Live, serving

SLOW = ("async def orchestrate(ctx, args):\n"
        "    total = 0\n"
        "    for i in range(60):\n"
        "        r = await ctx.run(\"echo\", {\"n\": i})\n"
        "        total = total + r[\"n\"]\n"
        "    return total\n")
QUICK = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a["n"]\n'


def eventually(check, *, timeout: float = 60.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _slow(store_url: str, **options):
    services = Services.default(runner_name="process", latency_s=0.25)
    return serving(open_store(store_url), services=services, **options)


def _key(live: Live, name: str) -> str:
    run = live.store.find_run("alice", name)
    assert run is not None
    return run.run_id


def _committed(live: Live, name: str) -> int:
    return len(live.store.list_slots(_key(live, name)))


def test_issue26_cancel_a_running_job_ends_its_attempt_cancelled(store_url: str) -> None:
    with _slow(store_url) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "slow"}).status_code == 202
        eventually(lambda: _committed(live, "slow") >= 2, what="two committed calls")
        r = c.post("/v1/runs/slow/cancel")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["by"] == "alice" and body["status"] == "cancelled"
        assert [(j["was"], j["state"]) for j in body["jobs"]] == [("running", "cancelled")]
        key = _key(live, "slow")
        attempt = live.store.list_attempts(key)[-1]
        assert attempt.status == "cancelled" and attempt.error["by"] == "alice"
        # every dispatched call completed and committed: nothing pending
        calls = live.store.list_calls(key)
        assert calls and all(c_.status is not CallStatus.PENDING for c_ in calls)
        assert len(live.store.list_slots(key)) < 60
        kinds = {e.kind: e.data for e in live.store.list_events(key)}
        assert kinds["job.cancelled"]["by"] == "alice"
        assert kinds["attempt_cancelled"]["by"] == "alice"
        job = c.get(body["jobs"][0]["location"]).json()
        assert job["state"] == "cancelled" and job["error"]["by"] == "alice"
        # the run takes a new attempt afterwards (gated against what it committed)
        r = c.post("/v1/runs/slow/attempts", json={"script": QUICK}, params={"wait": 60})
        assert r.status_code == 200 and r.json()["outcome"]["status"] == "gate_stopped"
        # a finished run: a clear 409 in the one error shape
        r = c.post("/v1/runs/slow/cancel")
        assert r.status_code == 409
        assert r.json()["error"]["code"] == "nothing_to_cancel"
        assert "nothing to cancel" in r.json()["error"]["message"]


def test_issue26_cancel_a_queued_job_it_never_starts(store_url: str) -> None:
    with _slow(store_url, pool_size=1) as live, live.client(live.alice) as c, \
            live.client(live.bob) as b:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "first"}).status_code == 202
        assert c.post("/v1/runs", json={"script": QUICK, "run_id": "second"}).status_code == 202
        # another principal cannot even see it
        assert b.post("/v1/runs/second/cancel").status_code == 404
        assert b.post("/v1/runs/nope/cancel").status_code == 404
        r = c.post("/v1/runs/second/cancel")
        assert r.status_code == 200, r.text
        assert [(j["was"], j["state"]) for j in r.json()["jobs"]] == [("queued", "cancelled")]
        r = c.post("/v1/runs/first/cancel")
        assert r.json()["jobs"][0]["state"] == "cancelled", c.get(r.json()["jobs"][0]["location"]).text
        # the cancelled job never ran: its run has no attempt
        assert live.store.list_attempts(_key(live, "second")) == []
        r = c.get("/v1/runs/second")
        assert r.status_code == 200 and r.json()["executing"] is False


def test_issue26_cancel_needs_a_token(live: Live) -> None:
    with httpx.Client(base_url=live.url) as anonymous:
        assert anonymous.post("/v1/runs/x/cancel").status_code == 401


def test_issue26_cancel_limits_are_untouched(store_url: str) -> None:
    # a cancelled job gives its executing slot back
    with _slow(store_url, limits=ServiceLimits(executing_attempts=1)) as live, \
            live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "s1"}).status_code == 202
        assert c.post("/v1/runs", json={"script": QUICK, "run_id": "s2"}).status_code == 429
        assert c.post("/v1/runs/s1/cancel").status_code == 200
        assert c.post("/v1/runs", json={"script": QUICK, "run_id": "s2"},
                      params={"wait": 60}).status_code == 200


PAID = ("async def orchestrate(ctx, args):\n"
        "    shots = []\n"
        "    for i in range(30):\n"
        "        img = await ctx.run(\"image.generate\", {\"prompt\": f\"take {i}\", "
        "\"size\": \"512x512\"})\n"
        "        shots.append(img)\n"
        "    return len(shots)\n")


def test_issue26_a_dispatched_paid_call_commits_before_the_attempt_is_cancelled(
        store_url: str) -> None:
    with _slow(store_url) as live, live.client(live.alice) as c:
        r = c.post("/v1/runs", json={"script": PAID, "run_id": "paid",
                                     "envelope": {"budget": {"usd": 100, "calls": 100}}})
        assert r.status_code == 202, r.text
        eventually(lambda: _committed(live, "paid") >= 1, what="a committed paid call")
        assert c.post("/v1/runs/paid/cancel").json()["status"] == "cancelled"
        key = _key(live, "paid")
        calls = live.store.list_calls(key)
        # fail closed: every paid call that left completed and was committed, none is left
        # pending for the crash rules, and nothing was paid twice
        assert calls and {c_.status for c_ in calls} == {CallStatus.COMMITTED}
        assert len(live.store.list_slots(key)) == len(calls) < 30
        assert live.store.list_attempts(key)[-1].status == "cancelled"
