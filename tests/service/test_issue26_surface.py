"""Issue 26 §6: what the HTTP surface gave away or let a client hold, over real HTTP.

Each test reproduces an attack of issue 26 against a real uvicorn server and pins what stops
it: metrics closed by default, authentication before parsing, per-run event numbers, a
revoked token's streams ended, bounded signals, results stored once.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from frostline.store import open_store
from tests.service.conftest import Live, serving

WAITS = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    ev = await ctx.run("event.wait", {"event": "go"})
    return {"a": a["n"], "ev": ev}
'''
ECHO = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": args.get("n", 1)})
    return {"n": a["n"], "pad": "x" * 1000}
'''


def _until(c: httpx.Client, run: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        body: dict[str, Any] = c.get(f"/v1/runs/{run}").json()
        if body.get("status") == status or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def _backlog(c: httpx.Client, run: str, after: int = 0) -> list[dict[str, Any]]:
    r = c.get(f"/v1/runs/{run}/events", params={"follow": "false", "after": after})
    assert r.status_code == 200, r.text
    return [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]


def test_issue26_metrics_need_a_token_unless_made_public(store_url):
    with serving(open_store(store_url)) as live:
        assert httpx.get(f"{live.url}/v1/metrics").status_code == 401
        assert httpx.get(f"{live.url}/v1/metrics",
                         headers={"Authorization": "Bearer nope"}).status_code == 401
        with live.client(live.bob) as bob:
            r = bob.get("/v1/metrics")
            assert r.status_code == 200 and "frostline_jobs" in r.text
    with serving(open_store(store_url), metrics_public=True) as live:
        assert httpx.get(f"{live.url}/v1/metrics").status_code == 200


def test_issue26_serve_metrics_public_flag_reaches_the_server(monkeypatch):
    from frostline.cli import main
    from frostline.service import app as app_module

    seen: dict[str, Any] = {}
    monkeypatch.setattr(app_module, "serve", lambda *a, **kw: seen.update(kw))
    assert CliRunner().invoke(main, ["serve", "--runner", "process"]).exit_code == 0
    assert seen["metrics_public"] is False
    assert CliRunner().invoke(main, ["serve", "--runner", "process",
                                     "--metrics-public"]).exit_code == 0
    assert seen["metrics_public"] is True


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/v1/runs"), ("POST", "/v1/runs/r/reconcile"), ("POST", "/v1/runs/r/signals/go"),
    ("POST", "/v1/runs/r/attempts"),
])
def test_issue26_a_malformed_body_without_a_valid_token_is_401(live: Live, method, path):
    broken = {"content": b"{not json", "headers": {"content-type": "application/json"}}
    for token in (None, "not-a-token"):
        with live.client(token) as c:
            r = c.request(method, path, **broken)
            assert r.status_code == 401, (token, r.status_code, r.text)
            assert r.json()["error"]["code"] == "unauthorized"
            assert r.headers["www-authenticate"] == "Bearer"
            # a well-formed body that fails validation: 401 as well
            assert c.request(method, path, json={"surprise": 1}).status_code == 401
    with live.client(live.alice) as c:  # the token is good: now the body is judged
        r = c.request(method, path, **broken)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"


def test_issue26_event_numbers_are_per_run_and_tell_nothing_of_others(store_url):
    with serving(open_store(store_url)) as live, live.client(live.alice) as alice, \
            live.client(live.bob) as bob:
        assert alice.post("/v1/runs", json={"script": ECHO, "run_id": "a"},
                          params={"wait": 60}).status_code == 200
        first = _backlog(alice, "a")
        assert [e["seq"] for e in first] == list(range(1, len(first) + 1))
        # bob is busy meanwhile; alice's next events go on from where hers stopped
        for n in range(3):
            assert bob.post("/v1/runs", json={"script": ECHO, "run_id": f"b{n}"},
                            params={"wait": 60}).status_code == 200
        assert alice.post("/v1/runs/a/attempts", json={"script": ECHO},
                          params={"wait": 60}).status_code == 200
        every = _backlog(alice, "a")
        assert [e["seq"] for e in every] == list(range(1, len(every) + 1))
        assert every[:len(first)] == first
        # `after` counts the same way: the rest, numbered on
        rest = _backlog(alice, "a", after=len(first))
        assert rest == every[len(first):]
        assert _backlog(alice, "a", after=10_000) == []
        # the SSE ids are the same per-run numbers
        r = alice.get("/v1/runs/a/events", params={"follow": "false"})
        ids = [int(line[4:]) for line in r.text.splitlines() if line.startswith("id: ")]
        assert ids == list(range(1, len(every) + 1))
        # a signal's answer no longer carries the store's global signal seq
        assert alice.post("/v1/runs", json={"script": WAITS, "run_id": "w"},
                          params={"wait": 60}).status_code == 200
        sent = alice.post("/v1/runs/w/signals/go", json={"data": 1}).json()
        assert "seq" not in sent and sent["run_id"] == "w"


def test_issue26_a_revoked_token_ends_its_open_event_streams(store_url):
    with serving(open_store(store_url)) as live:
        token = live.store.create_token("carol")
        with live.client(token) as carol:
            assert carol.post("/v1/runs", json={"script": WAITS, "run_id": "w"},
                              params={"wait": 60}).status_code == 200
            _until(carol, "w", "waiting")
            lines, revoked = 0, None
            with carol.stream("GET", "/v1/runs/w/events", timeout=30) as stream:
                for _ in stream.iter_lines():  # the backlog, then a keep-alive every 0.5 s
                    lines += 1
                    if lines == 3:
                        live.store.revoke_tokens("carol")
                        revoked = time.monotonic()
                    if revoked is not None and time.monotonic() - revoked > 15:
                        pytest.fail("the stream of a revoked token went on delivering")
            # it ended by itself, within seconds of the revocation
            assert revoked is not None and time.monotonic() - revoked < 15
            assert carol.get("/v1/runs/w").status_code == 401


def test_issue26_signals_are_bounded_per_run_and_refused_without_a_wait(store_url, monkeypatch):
    from frostline.store import sql_waits

    monkeypatch.setattr(sql_waits, "MAX_SIGNALS_PER_RUN", 3)
    with serving(open_store(store_url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": WAITS, "run_id": "w"},
                      params={"wait": 60}).status_code == 200
        codes = [c.post("/v1/runs/w/signals/other", json={"data": n}).status_code
                 for n in range(5)]
        assert codes == [200, 200, 200, 409, 409]
        r = c.post("/v1/runs/w/signals/other", json={"data": 9})
        assert r.json()["error"]["code"] == "signal_limit"
        assert "3 events" in r.json()["error"]["message"]
        # a run whose script waits for no event takes none (it would keep them for ever)
        assert c.post("/v1/runs", json={"script": ECHO, "run_id": "e"},
                      params={"wait": 60}).status_code == 200
        refused = c.post("/v1/runs/e/signals/go", json={"data": 1})
        assert refused.status_code == 409 and refused.json()["error"]["code"] in (
            "no_event_wait", "run_finished")
    monkeypatch.setattr(sql_waits, "MAX_SIGNALS_PER_RUN", 1000)
    monkeypatch.setattr(sql_waits, "MAX_SIGNAL_BYTES_PER_RUN", 5000)
    with serving(open_store(store_url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": WAITS, "run_id": "w2"},
                      params={"wait": 60}).status_code == 200
        assert c.post("/v1/runs/w2/signals/x", json={"data": "a" * 3000}).status_code == 200
        over = c.post("/v1/runs/w2/signals/x", json={"data": "a" * 3000})
        assert over.status_code == 409 and over.json()["error"]["limit"] == "bytes"


def test_issue26_a_waiting_script_run_still_takes_its_signal(live: Live):
    with live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": WAITS, "run_id": "w"},
                      params={"wait": 60}).status_code == 200
        assert c.post("/v1/runs/w/signals/go", json={"data": 5}).status_code == 200
        assert _until(c, "w", "succeeded")["attempts"][-1]["result"] == {"a": 1, "ev": 5}


def test_issue26_a_result_is_stored_once_not_again_in_job_finished(store_url):
    with serving(open_store(store_url)) as live, live.client(live.alice) as c:
        r = c.post("/v1/runs", json={"script": ECHO, "run_id": "r", "args": {"n": 4}},
                   params={"wait": 60})
        assert r.status_code == 200
        # the job's outcome still shows the result, read from the attempt's record
        assert r.json()["outcome"]["result"] == {"n": 4, "pad": "x" * 1000}
        assert c.get(r.headers["location"]).json()["outcome"]["result"]["n"] == 4
        [finished] = [e for e in _backlog(c, "r") if e["kind"] == "job.finished"]
        assert "result" not in finished["data"]["outcome"]
        assert "x" * 1000 not in json.dumps(finished)


BIG = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    return {"blob": "y" * args["bytes"], "n": a["n"]}
'''


def test_issue26_a_run_page_leaves_large_results_out_and_holds_little(store_url):
    import tracemalloc

    from frostline.service.operations import INLINE_RESULT_BYTES, run_detail

    size = 2 * 1024 * 1024
    with serving(open_store(store_url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": BIG, "run_id": "big", "args": {"bytes": size}},
                      params={"wait": 120}).status_code == 200
        for _ in range(4):
            assert c.post("/v1/runs/big/attempts", json={"script": BIG},
                          params={"wait": 120}).status_code == 200
        assert c.post("/v1/runs/big/attempts", json={"script": BIG, "args": {"bytes": 10}},
                      params={"wait": 120}).status_code == 200
        page = c.get("/v1/runs/big")
        assert page.status_code == 200 and len(page.content) < 10 * INLINE_RESULT_BYTES
        attempts = page.json()["attempts"]
        assert [a["status"] for a in attempts] == ["succeeded"] * 6
        for a in attempts[:5]:  # left out, with its size and where to read it
            assert a["result"] is None and a["result_bytes"] > size
            assert a["result_href"] == f"/v1/runs/big/attempts/{a['attempt']}/result"
        assert attempts[5]["result"] == {"blob": "y" * 10, "n": 1}
        whole = c.get(attempts[0]["result_href"])
        assert whole.status_code == 200 and whole.json()["result"]["blob"] == "y" * size
        assert c.get("/v1/runs/big/attempts/99/result").status_code == 404
        with live.client(live.bob) as bob:
            assert bob.get(attempts[0]["result_href"]).status_code == 404
        # building the page holds far less than the 10 MiB of results the run keeps
        run = live.store.find_run("alice", "big")
        tracemalloc.start()
        try:
            run_detail(live.store, run)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < size, f"building the page held {peak} bytes"
