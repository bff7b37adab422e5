"""The waits over HTTP (issue 16): approve, reject and signal a run, owner-scoped, with the one
error shape; the service resumes the run itself once the answer is in. An approval is answered
by a second party, a token with the approver role (issue 26; tests/service/test_approvals_api.py
covers who may answer)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx

from tests.service.conftest import Live

SCRIPT = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    ok = await ctx.run("human.approve", {"ask": "publish?", "data": {"title": "t"}})
    ev = await ctx.run("event.wait", {"event": "paid"})
    b = await ctx.run("echo", {"n": 2})
    return {"approved": ok["approved"], "by": ok["by"], "paid": ev}
"""
APPROVAL = "orchestrate/#1@:0"


def _until(c: httpx.Client, run: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        body: dict[str, Any] = c.get(f"/v1/runs/{run}").json()
        if body["status"] == status or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def _approval(identity: str) -> str:
    return "approvals/" + quote(identity, safe="")


def test_approve_and_signal_resume_the_run(live: Live) -> None:
    with live.client(live.alice) as alice, live.client(live.bob) as bob:
        r = alice.post("/v1/runs", json={"script": SCRIPT, "run_id": "w1"}, params={"wait": 60})
        assert r.status_code == 200, r.text
        run = _until(alice, "w1", "waiting")
        [wait] = [w for w in run["waits"] if w["answer"] is None]
        assert wait["identity"] == APPROVAL and wait["payload"]["data"] == {"title": "t"}
        # another principal sees no such run, whatever it asks
        for path, body in ((_approval(APPROVAL), {}), ("signals/paid", {"data": 1}),
                           ("waits", None)):
            got = bob.request("GET" if body is None else "POST", f"/v1/runs/w1/{path}", json=body)
            assert got.status_code == 404 and got.json()["error"]["code"] == "run_not_found"
    carol = live.store.create_token("carol", roles=["approver"])
    with live.client(live.alice) as alice, live.client(carol) as approver:
        own = alice.post(f"/v1/runs/w1/{_approval(APPROVAL)}", json={"reason": "go"})
        assert own.status_code == 403 and own.json()["error"]["code"] == "approval_forbidden"
        r = approver.post(f"/v1/runs/w1/{_approval(APPROVAL)}", json={"reason": "go"},
                          params={"owner": "alice"})
        assert r.status_code == 200, r.text
        assert r.json()["value"]["by"] == "carol" and r.json()["run_id"] == "w1"
        second = approver.post(f"/v1/runs/w1/{_approval(APPROVAL)}", json={"approved": False},
                               params={"owner": "alice"})
        assert second.status_code == 409
        assert second.json()["error"]["code"] == "already_answered"
        # the service resumes it by itself: it now waits for the event
        run = _until(alice, "w1", "waiting")
        deadline = time.monotonic() + 60
        while not any(w["kind"] == "event" for w in run["waits"]) and time.monotonic() < deadline:
            time.sleep(0.05)
            run = alice.get("/v1/runs/w1").json()
        r = alice.post("/v1/runs/w1/signals/paid", json={"data": {"amount": 5}})
        assert r.status_code == 200 and r.json()["delivered_to"] == "orchestrate/#2@:0"
        done = _until(alice, "w1", "succeeded")
        assert done["status"] == "succeeded", done
        result = done["attempts"][-1]["result"]
        assert result == {"approved": True, "by": "carol", "paid": {"amount": 5}}
        assert [w["answer"]["value"]["reason"] for w in done["waits"]
                if w["kind"] == "approval"] == ["go"]
        assert [w["answer"]["by"] for w in done["waits"]] == ["carol", "alice"]  # the sender
        # a finished run takes no more answers; nothing changes
        late = alice.post("/v1/runs/w1/signals/paid", json={"data": 1})
        assert late.status_code == 409 and late.json()["error"]["code"] == "run_finished"


def test_bad_answers_are_refused_with_the_error_shape(live: Live) -> None:
    with live.client(live.alice) as alice:
        alice.post("/v1/runs", json={"script": SCRIPT, "run_id": "w2"}, params={"wait": 60})
        _until(alice, "w2", "waiting")
        r = alice.post(f"/v1/runs/w2/{_approval('orchestrate/#9@:0')}", json={})
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_wait"
        for body in ({"approved": "yes"}, {"reason": "x" * 3000}, {"extra": 1}, []):
            r = alice.post(f"/v1/runs/w2/{_approval(APPROVAL)}", json=body)
            assert r.status_code == 422 and "error" in r.json(), body
        r = alice.post("/v1/runs/w2/signals/bad%20name", json={"data": 1})
        assert r.status_code == 400 and r.json()["error"]["code"] == "answer_invalid"
        r = alice.post("/v1/runs/w2/signals/paid", json={})
        assert r.status_code == 422
        waits = alice.get("/v1/runs/w2/waits").json()["waits"]
        assert [w["answer"] for w in waits] == [None]  # nothing changed


TIMER = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    t = await ctx.run("timer.sleep", {"seconds": 1})
    return t["due_at"] <= t["woke_at"]
"""


def test_serve_resumes_a_due_timer_after_a_restart(tmp_path: Any) -> None:
    from frostline.store import open_store
    from tests.service.conftest import serving

    url = f"sqlite:///{tmp_path / 'timer.db'}"
    with serving(open_store(url), resume_interval_s=0) as first, \
            first.client(first.alice) as alice:
        alice.post("/v1/runs", json={"script": TIMER, "run_id": "t"}, params={"wait": 60})
        run = _until(alice, "t", "waiting")
        assert [w["kind"] for w in run["waits"]] == ["timer"]
    # a new server over the same store: its sweep resumes the run once the timer is due
    with serving(open_store(url), resume_interval_s=0.1) as second:
        token = second.store.create_token("alice")
        with second.client(token) as alice:
            done = _until(alice, "t", "succeeded")
    assert done["status"] == "succeeded" and done["attempts"][-1]["result"] is True
