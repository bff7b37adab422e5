"""Responses stay well formed whatever a script returns or a client sends (over real HTTP)."""

from __future__ import annotations

DEEP_RESULT = '''
async def orchestrate(ctx, args):
    await ctx.run("echo", {"n": 1})
    x = 1
    for i in range(300):
        x = [x]
    return x
'''

DEEP_PAYLOAD = '''
async def orchestrate(ctx, args):
    x = 1
    for i in range(300):
        x = {"k": x}
    return await ctx.run("echo", {"n": 1, "deep": x})
'''


def test_a_deep_result_fails_the_script_and_every_read_still_answers(live_any):
    """A result nested 255+ levels deep once made the create call and every later GET 500."""
    with live_any.client(live_any.alice) as c:
        r = c.post("/v1/runs", json={"script": DEEP_RESULT, "run_id": "deep"}, params={"wait": 60})
        assert r.status_code == 200, r.text
        attempt = r.json()["outcome"]
        assert attempt["status"] == "failed" and attempt["result"] is None
        assert attempt["error"]["code"] == "result_too_deep"
        for path in ("/v1/runs", "/v1/runs/deep", "/v1/runs/deep/certificate",
                     "/v1/runs/deep/orphans", "/v1/runs/deep/events?follow=false"):
            assert c.get(path).status_code == 200, path


def test_a_deep_payload_is_refused_before_dispatch(live_any):
    with live_any.client(live_any.alice) as c:
        r = c.post("/v1/runs", json={"script": DEEP_PAYLOAD, "run_id": "deep-payload"},
                   params={"wait": 60})
        assert r.status_code == 200, r.text
        attempt = r.json()["outcome"]
        assert attempt["status"] == "failed" and attempt["provider_calls"] == 0
        assert "nests deeper than 128" in attempt["error"]["message"]
        assert c.get("/v1/runs/deep-payload").status_code == 200


def test_nan_args_create_nothing(live_any):
    with live_any.client(live_any.alice) as c:
        r = c.post("/v1/runs", content=b'{"script": "async def orchestrate(ctx, args):\\n'
                   b'    return 1\\n", "args": {"x": NaN}, "run_id": "nan"}',
                   headers={"Content-Type": "application/json"})
        assert r.status_code == 422, r.text
        assert c.get("/v1/runs/nan").status_code == 404
        assert c.get("/v1/runs").json()["runs"] == []


def test_an_event_cursor_past_63_bits_is_a_clear_422(live):
    with live.client(live.alice) as c:
        c.post("/v1/runs", json={"script": "async def orchestrate(ctx, args):\n    return 1\n",
                                 "run_id": "r"})
        for after in ("99999999999999999999999", "-1", "abc"):
            r = c.get(f"/v1/runs/r/events?after={after}&follow=false")
            assert r.status_code == 422, (after, r.status_code)
        assert c.get(f"/v1/runs/r/events?after={2**63 - 1}&follow=false").status_code == 200
