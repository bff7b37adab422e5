"""Issue 26 over real HTTP, on both stores: a value no store can hold is a JSON 422 before
anything is stored (never a plain-text 500, never a run without a job, never a 503), and every
read of a run answers 200 or the JSON error shape."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import httpx

from tests.service.conftest import Live

WAITS = """
async def orchestrate(ctx, args):
    ok = await ctx.run("human.approve", {"ask": "publish?"})
    ev = await ctx.run("event.wait", {"event": "paid"})
    return ev
"""
APPROVAL = "approvals/" + quote("orchestrate/#0@:0", safe="")
SIMPLE = "async def orchestrate(ctx, args):\n    return 1\n"


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def _refused(r: httpx.Response, code: str = "value_not_storable") -> dict[str, Any]:
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = r.json()["error"]
    assert error["code"] == code and error["message"]
    return error


def _raw_post(c: httpx.Client, path: str, body: str) -> httpx.Response:
    # JSON text as sent (a lone surrogate has no str form httpx would encode)
    return c.post(path, content=body.encode(), headers={"Content-Type": "application/json"})


def _waiting(c: httpx.Client, run: str) -> None:
    deadline = time.monotonic() + 60
    while c.get(f"/v1/runs/{run}").json()["status"] != "waiting":
        assert time.monotonic() < deadline, "the run never waited"
        time.sleep(0.05)


def test_issue26_poison_args_are_a_422_and_create_nothing(live_any: Live) -> None:
    with live_any.client(live_any.alice) as c:
        for args in ({"s": "a\x00b"}, {"a\x00": 1}, _deep(600)):
            _refused(c.post("/v1/runs", json={"script": SIMPLE, "args": args, "run_id": "p"}))
        error = _refused(_raw_post(c, "/v1/runs", json.dumps(
            {"script": SIMPLE, "run_id": "p"})[:-1] + ', "args": {"s": "\\ud800"}}'))
        assert error["reason"] == "surrogate"
        assert c.get("/v1/runs").json()["runs"] == []
        assert c.get("/v1/runs/p").status_code == 404
        c.post("/v1/runs", json={"script": SIMPLE, "run_id": "ok"}, params={"wait": 60})
        _refused(c.post("/v1/runs/ok/attempts", json={"script": SIMPLE,
                                                      "args": {"s": "\x00"}}))
        assert len(c.get("/v1/runs/ok").json()["attempts"]) == 1


def test_issue26_poison_signals_and_reasons_are_a_422_and_reads_stay_200(
        live_any: Live) -> None:
    with live_any.client(live_any.alice) as c:
        c.post("/v1/runs", json={"script": WAITS, "run_id": "w"}, params={"wait": 60})
        _waiting(c, "w")
        _refused(c.post(f"/v1/runs/w/{APPROVAL}", json={"reason": "fine\x00"}))
        # a typed string field: the request's validation refuses a lone surrogate itself
        _refused(_raw_post(c, f"/v1/runs/w/{APPROVAL}", '{"reason": "\\udc00"}'),
                 "invalid_request")
        for body in ("a\x00b", {"k\x00": 1}, _deep(600)):
            _refused(c.post("/v1/runs/w/signals/paid", json={"data": body}))
        for path in ("/v1/runs", "/v1/runs/w", "/v1/runs/w/waits",
                     "/v1/runs/w/events?follow=false"):
            assert c.get(path).status_code == 200, path
        waits = c.get("/v1/runs/w/waits").json()["waits"]
        assert [w["answer"] for w in waits] == [None]  # nothing was taken
    # the approval is still open: a second party (an approver) answers it
    ops = live_any.store.create_token("ops", roles=["approver"])
    with live_any.client(ops) as approver:
        r = approver.post(f"/v1/runs/w/{APPROVAL}", json={"reason": "fine"},
                          params={"owner": "alice"})
        assert r.status_code == 200, r.text


def test_issue26_a_far_future_timer_fails_its_run_and_reads_stay_200(live_any: Live) -> None:
    script = ('async def orchestrate(ctx, args):\n    return await ctx.run("timer.sleep", '
              '{"until": "9999-12-31T23:59:59-01:00"})\n')
    with live_any.client(live_any.alice) as c:
        r = c.post("/v1/runs", json={"script": script, "run_id": "t"}, params={"wait": 60})
        assert r.status_code == 200, r.text
        assert r.json()["outcome"]["error"]["code"] == "payload_invalid"
        for path in ("/v1/runs", "/v1/runs/t", "/v1/runs/t/waits"):
            assert c.get(path).status_code == 200, path


def test_issue26_a_nul_in_a_path_is_a_json_error_not_a_store_outage(live_any: Live) -> None:
    with live_any.client(live_any.alice) as c:
        for path in ("/v1/runs/a%00b", "/v1/runs/a%00b/waits"):
            r = c.get(path)
            assert r.status_code in (404, 422), (path, r.status_code, r.text)
            assert "error" in r.json()
        c.post("/v1/runs", json={"script": WAITS, "run_id": "w"}, params={"wait": 60})
        _waiting(c, "w")
        r = c.post("/v1/runs/w/approvals/" + quote("orchestrate/#0@:0\x00", safe=""), json={})
        assert r.status_code in (404, 422) and "error" in r.json(), r.text


def test_issue26_a_value_stored_before_the_checks_reads_as_a_json_500(live_any: Live) -> None:
    """A 600-deep result a store kept before this release: the run's detail cannot be
    serialized, and the read answers the one error shape, not a plain-text page."""
    from tests.store.helpers import Raw

    with live_any.client(live_any.alice) as c:
        c.post("/v1/runs", json={"script": SIMPLE, "run_id": "old"}, params={"wait": 60})
        run = live_any.store.find_run("alice", "old")
        assert run is not None
        raw = Raw(live_any.store.url)
        try:
            raw.execute(f"UPDATE attempts SET result = '{json.dumps(_deep(600))}' "
                        f"WHERE run_id = '{run.run_id}'")
        finally:
            raw.close()
        r = c.get("/v1/runs/old")
        assert r.status_code == 500, r.text
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == "internal"
    with live_any.client(live_any.alice) as c:  # (the server closes a connection after a 500)
        assert c.get("/v1/runs").status_code == 200
