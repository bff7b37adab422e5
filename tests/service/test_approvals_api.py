"""Who answers an approval over HTTP (issue 26 §5): a second party. The run's owner is refused
its own approval (403, saying who may) unless self_approval is configured; a token with an
approver role, or a principal the capability names, answers it (naming the run's owner);
anyone else sees no such run. `by` records who answered, events included. On both stores."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.store import open_store
from tests.service.conftest import Live, serving

SCRIPT = """
async def orchestrate(ctx, args):
    ok = await ctx.run("human.approve", {"ask": "deploy?"})
    ev = await ctx.run("event.wait", {"event": "go"})
    return {"approved": ok["approved"], "by": ok["by"], "go": ev}
"""
APPROVAL = "orchestrate/#0@:0"
PATH = "/v1/runs/d1/approvals/" + quote(APPROVAL, safe="")


def _waiting(live: Live, run: str = "d1") -> None:
    """Alice starts `run`, which stops at its approval."""
    with live.client(live.alice) as alice:
        r = alice.post("/v1/runs", json={"script": SCRIPT, "run_id": run})
        assert r.status_code in (200, 202), r.text
        deadline = time.monotonic() + 60
        while alice.get(f"/v1/runs/{run}").json()["status"] != "waiting":
            assert time.monotonic() < deadline, "the run never reached its approval"
            time.sleep(0.05)


def _answers(live: Live) -> list[Any]:
    run = live.store.find_run("alice", "d1")
    assert run is not None
    return [a for _, a in live.store.list_waits(run.run_id)]


@pytest.fixture
def served(store_url: str, request: pytest.FixtureRequest) -> Iterator[Live]:
    """The API over each store, with the approval policy a test passes as the fixture's
    parameter (the default policy without one)."""
    policy = getattr(request, "param", None)
    with serving(open_store(store_url), approvals=policy) as running:
        yield running


def test_issue26_the_owner_cannot_approve_its_own_run(served: Live) -> None:
    _waiting(served)
    with served.client(served.alice) as alice:
        for body in ({}, {"approved": False, "reason": "no"}):
            r = alice.post(PATH, json=body)
            assert r.status_code == 403, r.text
            error = r.json()["error"]
            assert error["code"] == "approval_forbidden"
            assert "own approval" in error["message"] and "role approver" in error["message"]
            assert "self_approval" in error["message"]  # and how to allow it
            assert error["approvers"] == ["role:approver"] and error["run_id"] == "d1"
        # naming herself as the owner changes nothing
        assert alice.post(PATH, json={}, params={"owner": "alice"}).status_code == 403
    assert _answers(served) == [None]  # nothing recorded


def test_issue26_an_approver_lists_and_answers_and_by_names_it(served: Live) -> None:
    _waiting(served)
    carol = served.store.create_token("carol", roles=["approver"])
    with served.client(carol) as approver, served.client(served.alice) as alice:
        [listed] = approver.get("/v1/approvals").json()["approvals"]
        assert (listed["owner"], listed["run_id"], listed["identity"]) == ("alice", "d1",
                                                                          APPROVAL)
        assert listed["payload"] == {"ask": "deploy?"} and listed["capability"] == "human.approve"
        assert alice.get("/v1/approvals").json() == {"approvals": []}  # not her own
        r = approver.post(PATH, json={"reason": "looks right"}, params={"owner": "alice"})
        assert r.status_code == 200, r.text
        assert r.json()["run_id"] == "d1" and r.json()["owner"] == "alice"
        assert r.json()["value"]["by"] == "carol" and r.json()["by"] == "carol"
        assert approver.get("/v1/approvals").json() == {"approvals": []}
        # the run resumes by itself and then waits for its event, which its owner sends
        deadline = time.monotonic() + 60
        while len(alice.get("/v1/runs/d1/waits").json()["waits"]) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        sent = alice.post("/v1/runs/d1/signals/go", json={"data": 1})
        assert sent.status_code == 200 and sent.json()["delivered_to"] == "orchestrate/#1@:0"
        while alice.get("/v1/runs/d1").json()["status"] != "succeeded":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        result = alice.get("/v1/runs/d1").json()["attempts"][-1]["result"]
        assert result == {"approved": True, "by": "carol", "go": 1}
    assert [a.by for a in _answers(served)] == ["carol", "alice"]


def test_issue26_who_approves_nothing_sees_no_run(served: Live) -> None:
    _waiting(served)
    with served.client(served.bob) as bob:  # a runner token: approves nothing
        assert bob.get("/v1/approvals").json() == {"approvals": []}
        for identity in (APPROVAL, "orchestrate/#9@:0"):  # not even which waits exist
            r = bob.post("/v1/runs/d1/approvals/" + quote(identity, safe=""), json={},
                         params={"owner": "alice"})
            assert r.status_code == 404 and r.json()["error"]["code"] == "run_not_found"
        assert bob.post(PATH, json={}, params={"owner": "nobody"}).status_code == 404
        # nor does a malformed body tell him whether alice has a run of that name
        for run in ("d1", "nope"):
            r = bob.post(f"/v1/runs/{run}/approvals/x", json={"approved": "yes"},
                         params={"owner": "alice"})
            assert r.status_code == 404, (run, r.text)
    assert _answers(served) == [None]


@pytest.mark.parametrize("served", [ApprovalPolicy.build(
    None, None, {"human.approve": (("ops",), None)})], indirect=True)
def test_issue26_a_capability_names_its_approvers(served: Live) -> None:
    _waiting(served)
    carol = served.store.create_token("carol", roles=["approver"])
    ops = served.store.create_token("ops")  # a plain runner token: named, so it approves
    with served.client(carol) as other, served.client(ops) as named:
        r = other.post(PATH, json={}, params={"owner": "alice"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "approval_forbidden"
        assert "the principal ops" in r.json()["error"]["message"]
        assert other.get("/v1/approvals").json() == {"approvals": []}
        assert [a["run_id"] for a in named.get("/v1/approvals").json()["approvals"]] == ["d1"]
        r = named.post(PATH, json={"approved": False, "reason": "not today"},
                       params={"owner": "alice"})
        assert r.status_code == 200 and r.json()["value"]["approved"] is False
    assert [a.by for a in _answers(served)][:1] == ["ops"]


@pytest.mark.parametrize("served", [ApprovalPolicy.build(None, True, {})], indirect=True)
def test_issue26_self_approval_lets_the_owner_answer(served: Live) -> None:
    _waiting(served)
    with served.client(served.alice) as alice:
        r = alice.post(PATH, json={"reason": "mine"})
        assert r.status_code == 200, r.text
        assert r.json()["value"]["by"] == "alice"


def test_issue26_two_approvers_race_and_exactly_one_answer_stands(served: Live) -> None:
    _waiting(served)
    tokens = [served.store.create_token(f"approver{i}", roles=["approver"]) for i in range(6)]
    start, results = threading.Barrier(len(tokens)), [None] * len(tokens)

    def answer(i: int) -> None:
        with httpx.Client(base_url=served.url, timeout=60,
                          headers={"Authorization": f"Bearer {tokens[i]}"}) as c:
            start.wait(timeout=30)
            r = c.post(PATH, json={"approved": i % 2 == 0}, params={"owner": "alice"})
            results[i] = (r.status_code, r.json())  # type: ignore[call-overload]

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(len(tokens))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    codes = sorted(code for code, _ in results)  # type: ignore[misc]
    assert codes == [200] + [409] * (len(tokens) - 1), results
    [(_, won)] = [r for r in results if r[0] == 200]  # type: ignore[index]
    [stored] = _answers(served)[:1]
    assert stored.by == won["by"] and stored.value["approved"] is won["value"]["approved"]
    for code, body in results:  # type: ignore[misc]
        if code == 409:
            assert body["error"]["answer"]["by"] == won["by"]  # the first answer stands


def test_issue26_serve_takes_the_approvals_of_the_configuration(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    import frostline.service.app as app_module
    from frostline.capabilities.approvals import ApprovalRule
    from frostline.cli import main

    config = tmp_path / "frostline.toml"
    config.write_text('[approvals]\napprovers = ["ops"]\nself_approval = true\n')
    seen: dict[str, Any] = {}
    monkeypatch.setattr(app_module, "serve", lambda *a, **kw: seen.update(kw))
    res = CliRunner().invoke(main, ["serve", "--runner", "process", "--config", str(config)])
    assert res.exit_code == 0, res.output
    assert seen["approvals"].default == ApprovalRule(("ops",), True)
