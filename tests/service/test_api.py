"""The HTTP API over real HTTP: fixed routes, authentication, ownership, bad input."""

from __future__ import annotations

import json
import threading
import time

ECHO = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    b = await ctx.run("echo", {"n": args["n"]})
    return [a["n"], b["n"]]
'''

FAILS = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    b = await ctx.run("image.generate", {"prompt": "x", "size": args["size"]})
    return b["artifact"]
'''


def test_create_run_and_read_it(live):
    with live.client(live.alice) as c:
        r = c.post("/v1/runs", json={"script": ECHO, "args": {"n": 2}, "envelope": {}},
                   params={"wait": 60})
        assert r.status_code == 200, r.text
        body = r.json()
        run_id = body["run_id"]
        assert body["state"] == "finished" and body["attempt"] == 1
        assert r.headers["location"] == f"/v1/runs/{run_id}/jobs/{body['job']}"
        attempt = body["outcome"]
        for key in ("run_id", "attempt", "status", "executed", "replayed", "provider_calls",
                    "spend_usd", "divergences", "orphans", "semantic_repeats", "result", "error"):
            assert key in attempt
        assert attempt["status"] == "succeeded" and attempt["result"] == [1, 2]
        detail = c.get(f"/v1/runs/{run_id}").json()
        assert detail["run_id"] == run_id and len(detail["attempts"]) == 1
        assert {row["identity"] for row in detail["timeline"]["rows"]} == {
            "orchestrate/#0@:0", "orchestrate/#1@:0"}
        assert c.get(f"/v1/runs/{run_id}/certificate").json()["consistent"] is True
        assert c.get(f"/v1/runs/{run_id}/orphans").json()["attempts"][0]["orphans"] == []
        runs = c.get("/v1/runs").json()["runs"]
        assert [r["run_id"] for r in runs] == [run_id]


def test_second_attempt_replays_and_gate_stops(live):
    with live.client(live.alice) as c:
        run_id = c.post("/v1/runs", json={"script": FAILS, "args": {"size": "7x7"}},
                        params={"wait": 60}).json()["run_id"]
        fixed = FAILS.replace('args["size"]', '"512x512"')
        # a literal edit of the failed (uncommitted) call is allowed: that site is not frozen
        r = c.post(f"/v1/runs/{run_id}/attempts", json={"script": fixed}, params={"wait": 60})
        assert r.status_code == 200, r.text
        att = r.json()["outcome"]
        assert att["status"] == "succeeded" and att["replayed"] == 1 and att["executed"] == 1
        moved = fixed.replace('a = await ctx.run("echo", {"n": 1})',
                              'if True:\n        a = await ctx.run("echo", {"n": 1})')
        r = c.post(f"/v1/runs/{run_id}/attempts", json={"script": moved}, params={"wait": 60})
        assert r.status_code == 200
        stopped = r.json()["outcome"]
        assert stopped["status"] == "gate_stopped" and stopped["provider_calls"] == 0
        # the wrapped echo leaves orchestrate/#0 to the image call, and orchestrate/#1 is gone
        kinds = {(c["kind"], c["site"]) for c in stopped["gate"]["counterexamples"]}
        assert kinds == {("capability_changed", "orchestrate/#0"), ("removed", "orchestrate/#1")}


def test_artifacts_and_events(live):
    script = FAILS.replace('args["size"]', '"512x512"')
    with live.client(live.alice) as c:
        body = c.post("/v1/runs", json={"script": script}, params={"wait": 60}).json()
        run_id, ref = body["run_id"], body["outcome"]["result"]
        r = c.get(f"/v1/runs/{run_id}/artifacts/{ref}")
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        assert r.content[:8] == b"\x89PNG\r\n\x1a\n"
        assert c.get(f"/v1/runs/{run_id}/artifacts/sha256:{'0' * 64}").status_code == 404
        with c.stream("GET", f"/v1/runs/{run_id}/events", params={"follow": "false"}) as s:
            text = "".join(s.iter_text())
        events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
        assert events and all(e["seq"] > 0 for e in events)
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


def test_auth_and_ownership(live):
    with live.client(live.alice) as alice:
        run_id = alice.post("/v1/runs", json={"script": ECHO, "args": {"n": 1}},
                            params={"wait": 60}).json()["run_id"]
        ref_body = alice.post("/v1/runs", json={"script": FAILS.replace('args["size"]', '"512x512"')},
                              params={"wait": 60}).json()
    for token in (None, "not-a-token"):
        with live.client(token) as anon:
            r = anon.get(f"/v1/runs/{run_id}")
            assert r.status_code == 401 and "token" in r.json()["error"]["message"]
            assert anon.post("/v1/runs", json={"script": ECHO}).status_code == 401
    with live.client(live.bob) as bob:
        assert bob.get(f"/v1/runs/{run_id}").status_code == 404
        assert bob.get(f"/v1/runs/{run_id}/certificate").status_code == 404
        assert bob.get(f"/v1/runs/{run_id}/events", params={"follow": "false"}).status_code == 404
        other = ref_body["run_id"]
        assert bob.get(f"/v1/runs/{other}/artifacts/{ref_body['outcome']['result']}").status_code == 404
        assert bob.post(f"/v1/runs/{run_id}/attempts", json={"script": ECHO}).status_code == 404
        assert bob.get("/v1/runs").json()["runs"] == []


def test_bad_input_is_4xx_with_message(live):
    with live.client(live.alice) as c:
        cases = [
            c.post("/v1/runs", json={"script": "import os\nasync def orchestrate(ctx, args):\n    return 1\n"}),
            c.post("/v1/runs", json={"script": ""}),
            c.post("/v1/runs", json={"script": "x" * 300_000}),
            c.post("/v1/runs", content=b"{not json", headers={"content-type": "application/json"}),
            c.post("/v1/runs", json={"script": ECHO, "envelope": {"budget": {"usd": -1}}}),
            c.post("/v1/runs", json={"script": ECHO, "surprise": 1}),
            c.post("/v1/runs", content=b"x" * (2 * 1024 * 1024), headers={"content-type": "application/json"}),
            c.get("/v1/runs/nope"),
            c.post("/v1/runs/nope/attempts", json={"script": ECHO}),
            c.post("/v1/runs/nope/reconcile", json={"identity": "a@:0", "abandon": True}),
        ]
        for r in cases:
            assert 400 <= r.status_code < 500, (r.status_code, r.text)
            assert list(r.json()) == ["error"], r.text
            assert r.json()["error"]["code"] and r.json()["error"]["message"], r.text
        rejected = cases[0].json()["error"]
        assert rejected["code"] == "rejected" and "R06" in rejected["message"]
        assert cases[6].status_code == 413


def test_repair_while_executing_is_409(live):
    slow = """
async def orchestrate(ctx, args):
    out = []
    for i in range(40):
        out.append(await ctx.run("text.generate", {"prompt": "line " + str(i)}))
    return len(out)
"""
    results = {}

    def first_attempt():
        with live.client(live.alice) as c2:
            results["run"] = c2.post("/v1/runs", json={"script": slow, "run_id": "slow-run"},
                                     params={"wait": 60})

    t = threading.Thread(target=first_attempt)
    t.start()
    seen = None
    with live.client(live.alice) as c:
        deadline = time.monotonic() + 30
        while seen is None and time.monotonic() < deadline:
            r = c.get("/v1/runs/slow-run")
            if r.status_code == 200 and r.json()["executing"]:
                seen = c.post("/v1/runs/slow-run/repair", json={"model": "openai:any-model"})
    t.join()
    assert seen is not None, "the first attempt was never observed executing"
    assert seen.status_code == 409 and "executing" in seen.json()["error"]["message"]
    assert results["run"].status_code == 200
    assert results["run"].json()["outcome"]["result"] == 40


def test_token_cli_prints_token_last(tmp_path):
    from click.testing import CliRunner

    from frostline.cli.token import token
    from frostline.store import open_store

    url = f"sqlite:///{tmp_path / 't.db'}"
    res = CliRunner().invoke(token, ["create", "carol", "--store", url])
    assert res.exit_code == 0, res.output
    value = res.output.strip().splitlines()[-1]
    with open_store(url) as store:
        assert store.principal_for_token(value) == "carol"
    assert CliRunner().invoke(token, ["create", "bad name!", "--store", url]).exit_code == 2


def test_a_new_attempt_is_prechecked_against_what_is_left_of_the_budget(live):
    """Four images ($0.08 of $0.10) committed at one site; a script that runs that loop once
    and adds two images has a whole bound ($0.06) inside the budget, but its two new calls
    ($0.04) do not fit the $0.02 left: 422 before anything is queued."""
    v1 = '''
async def orchestrate(ctx, args):
    for i in range(4):
        await ctx.run("image.generate", {"prompt": f"take {i}", "size": "512x512"})
    raise ValueError("two more angles")
'''
    v2 = '''
async def orchestrate(ctx, args):
    for i in range(1):
        await ctx.run("image.generate", {"prompt": f"take {i}", "size": "512x512"})
    a = await ctx.run("image.generate", {"prompt": "angle a", "size": "512x512"})
    b = await ctx.run("image.generate", {"prompt": "angle b", "size": "512x512"})
    return [a["artifact"], b["artifact"]]
'''
    with live.client(live.alice) as c:
        first = c.post("/v1/runs", json={"script": v1, "envelope": {"budget": {"usd": 0.10}}},
                       params={"wait": 60}).json()
        run_id = first["run_id"]
        assert first["outcome"]["spend_usd"] == 0.08
        r = c.post(f"/v1/runs/{run_id}/attempts", json={"script": v2})
        assert r.status_code == 422, r.text
        assert "$0.0200 left of the budget" in r.json()["error"]["message"]
        assert len(c.get(f"/v1/runs/{run_id}").json()["attempts"]) == 1


def test_certificate_fast_by_default_and_deep_on_request(live):
    """A result edited behind the store's back: the default check reads what the store recorded
    at commit time and cannot see it; ?deep=true hashes every stored result again."""
    import sqlite3

    with live.client(live.alice) as c:
        run_id = c.post("/v1/runs", json={"script": ECHO, "args": {"n": 2}},
                        params={"wait": 60}).json()["run_id"]
        assert c.get(f"/v1/runs/{run_id}/certificate").json()["consistent"] is True
        with sqlite3.connect(live.store.path) as conn:
            conn.execute("DROP TRIGGER slots_immutable_update")
            conn.execute("UPDATE slots SET result = '{\"n\": 99}' WHERE site = 'orchestrate/#1'")
        fast = c.get(f"/v1/runs/{run_id}/certificate").json()
        assert fast["consistent"] is True and fast["deep"] is False
        deep = c.get(f"/v1/runs/{run_id}/certificate", params={"deep": "true"}).json()
        assert deep["consistent"] is False and deep["deep"] is True
        assert [d["identity"] for d in deep["differences"]] == ["orchestrate/#1@:0"]
