"""Per-principal limits over real HTTP, with concurrent clients: one principal holding every
request thread, opening every stream or creating runs without end is refused with 429 and
Retry-After, and another principal is not affected."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from frostline.errors import DefinitionError
from frostline.service.limits import LimitExceeded, PrincipalLimits, ServiceLimits
from frostline.service.operations import Services
from frostline.store import open_store
from frostline.store.base import Store
from tests.service.conftest import Live, serving

ECHO = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a["n"]\n'


class Held:
    """Real execution; a run whose id starts with 'hold-' first waits until `release` is set,
    the way a CPU-bound script holds its request thread."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        real = Services.default(runner_name="process")

        def execute(store: Store, run_id: str, source: str, args: dict[str, Any] | None) -> dict[str, Any]:
            if run_id.split("/")[-1].startswith("hold-"):
                self.started.release()
                assert self.release.wait(60)
            return real.execute(store, run_id, source, args)

        self.services = Services(execute=execute, repair=real.repair)


def create(live: Live, token: str, run_id: str) -> httpx.Response:
    with live.client(token) as c:
        # ?wait: the request holds its executing slot until the job ends, as it used to
        return c.post("/v1/runs", json={"script": ECHO, "run_id": run_id}, params={"wait": 60})


def refused(r: httpx.Response, limit: str) -> None:
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == "too_many_requests" and r.json()["error"]["limit"] == limit
    assert 1 <= int(r.headers["retry-after"]) <= 60


def test_one_principal_cannot_hold_every_request_thread(store_url: str) -> None:
    held = Held()
    with serving(open_store(store_url), services=held.services,
                 limits=ServiceLimits(executing_attempts=2)) as live, ThreadPoolExecutor(8) as pool:
        assert create(live, live.alice, "done").status_code == 200
        attack = [pool.submit(create, live, live.alice, f"hold-{i}") for i in range(6)]
        assert held.started.acquire(timeout=30) and held.started.acquire(timeout=30)
        # two hold their slots; the other four are refused at once, not queued
        deadline = time.monotonic() + 20
        while sum(f.done() for f in attack) < 4:
            assert time.monotonic() < deadline, "refused requests were queued"
            time.sleep(0.05)
        answers = [f.result() for f in attack if f.done()]
        assert len(answers) == 4 and held.started.acquire(timeout=0.5) is False
        for r in answers:
            refused(r, "executing_attempts")
        with live.client(live.alice) as c:
            refused(c.post("/v1/runs/done/attempts", json={"script": ECHO}, params={"wait": 5}),
                    "executing_attempts")
            refused(c.post("/v1/runs/done/repair", json={"model": "openai:m"}), "executing_attempts")
            # nothing was created for a refused run
            listed = {r["run_id"] for r in c.get("/v1/runs").json()["runs"]}
            assert len(listed) == 3 and "done" in listed
        # bob is not affected while alice is at her limit
        started = time.monotonic()
        r = create(live, live.bob, "bobs")
        assert r.status_code == 200 and r.json()["outcome"]["result"] == 1
        assert time.monotonic() - started < 20
        held.release.set()
        assert sorted(f.result(timeout=60).status_code for f in attack) == [200, 200, 429, 429, 429, 429]
        # her slots are back once her attempts finished
        assert create(live, live.alice, "after").status_code == 200


def test_runs_per_minute_per_principal(store_url: str) -> None:
    with serving(open_store(store_url), limits=ServiceLimits(runs_per_minute=3)) as live, \
            ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda i: create(live, live.alice, f"r{i}"), range(6)))
        assert sorted(r.status_code for r in answers) == [200] * 3 + [429] * 3
        for r in answers:
            if r.status_code == 429:
                refused(r, "runs_per_minute")
        with live.client(live.alice) as c:
            assert len(c.get("/v1/runs").json()["runs"]) == 3
        assert create(live, live.bob, "b1").status_code == 200


def test_open_event_streams_per_principal(store_url: str) -> None:
    with serving(open_store(store_url), limits=ServiceLimits(event_streams=2)) as live:
        assert create(live, live.alice, "a").status_code == 200
        assert create(live, live.bob, "b").status_code == 200
        clients = [live.client(live.alice) for _ in range(3)]
        try:
            first = clients[0].stream("GET", "/v1/runs/a/events")
            second = clients[1].stream("GET", "/v1/runs/a/events")
            held = [first.__enter__(), second.__enter__()]
            assert [r.status_code for r in held] == [200, 200]
            refused(clients[2].get("/v1/runs/a/events"), "event_streams")
            with live.client(live.bob) as c, c.stream("GET", "/v1/runs/b/events") as r:
                assert r.status_code == 200  # bob is not affected
            first.__exit__(None, None, None)  # alice hangs up one stream: its slot comes back
            deadline = time.monotonic() + 15
            while (r := clients[2].get("/v1/runs/a/events?follow=false")).status_code == 429:
                assert time.monotonic() < deadline, "a closed stream kept its slot"
                time.sleep(0.2)
            assert r.status_code == 200 and "event: " in r.text
            # streams that end by themselves give their slot back too
            for _ in range(5):
                assert clients[2].get("/v1/runs/a/events?follow=false").status_code == 200
            second.__exit__(None, None, None)
        finally:
            for c in clients:
                c.close()


def test_limits_from_a_configuration_table() -> None:
    assert ServiceLimits.from_mapping({}) == ServiceLimits()
    assert ServiceLimits.from_mapping({"runs_per_minute": 10}).runs_per_minute == 10
    with pytest.raises(DefinitionError, match="unknown service limit 'streams'"):
        ServiceLimits.from_mapping({"streams": 3})
    for bad in (0, -1, 1.5, "3", True, None):
        with pytest.raises(DefinitionError, match="whole number of at least 1"):
            ServiceLimits.from_mapping({"event_streams": bad})


def test_the_rate_window_slides() -> None:
    now = [100.0]
    limits = PrincipalLimits(ServiceLimits(runs_per_minute=2), clock=lambda: now[0])
    limits.admit_run("alice")
    now[0] += 20
    limits.admit_run("alice")
    with pytest.raises(LimitExceeded) as info:
        limits.admit_run("alice")
    assert info.value.retry_after_s == 40
    limits.admit_run("bob")
    now[0] += 40
    limits.admit_run("alice")  # the first one left the window


def test_serve_flags_reach_the_service(monkeypatch) -> None:
    import frostline.service.app as app_module
    from frostline.capabilities.approvals import ApprovalPolicy
    from frostline.cli import main

    seen: dict[str, Any] = {}
    monkeypatch.setattr(app_module, "serve", lambda *a, **kw: seen.update(kw))
    res = CliRunner().invoke(main, ["serve", "--runner", "process", "--max-executing-attempts", "3",
                                    "--max-event-streams", "4", "--max-runs-per-minute", "5", "--docs"])
    assert res.exit_code == 0, res.output
    assert seen == {"limits": ServiceLimits(3, 4, 5), "docs": True, "approvals": ApprovalPolicy(),
                    "metrics_public": False}
    res = CliRunner().invoke(main, ["serve", "--runner", "process", "--max-runs-per-minute", "6"])
    assert seen == {"limits": ServiceLimits(runs_per_minute=6), "docs": False,
                    "approvals": ApprovalPolicy(), "metrics_public": False}
    assert CliRunner().invoke(main, ["serve", "--max-event-streams", "0"]).exit_code == 2


def submit(live: Live, token: str, run_id: str) -> httpx.Response:
    """Create a run WITHOUT ?wait: answered 202 as soon as its job is queued."""
    with live.client(token) as c:
        return c.post("/v1/runs", json={"script": ECHO, "run_id": run_id})


def test_jobs_without_wait_hold_their_executing_slots_until_they_end(store_url: str) -> None:
    held = Held()
    with serving(open_store(store_url), services=held.services,
                 limits=ServiceLimits(executing_attempts=2)) as live, \
            ThreadPoolExecutor(12) as pool:
        burst = list(pool.map(lambda i: submit(live, live.alice, f"hold-{i}"), range(12)))
        accepted = [r for r in burst if r.status_code == 202]
        assert len(accepted) == 2, [r.status_code for r in burst]  # never unbounded
        for r in burst:
            if r.status_code != 202:
                refused(r, "executing_attempts")
        assert held.started.acquire(timeout=30) and held.started.acquire(timeout=30)
        # one at a time too: the queued jobs hold the slots, not the requests that queued them
        for i in range(3):
            refused(submit(live, live.alice, f"more-{i}"), "executing_attempts")
        with live.client(live.alice) as c:
            # nothing was created or queued for a refused run
            assert sorted(r["run_id"] for r in c.get("/v1/runs").json()["runs"]) == sorted(
                r.json()["run_id"] for r in accepted)
            running = accepted[0].json()["run_id"]
            refused(c.post(f"/v1/runs/{running}/repair", json={"model": "openai:m"}),
                    "executing_attempts")
        assert submit(live, live.bob, "bobs").status_code == 202  # bob is not affected
        held.release.set()
        with live.client(live.alice) as c:
            for r in accepted:
                done = c.get(r.headers["location"], params={}).json()
                deadline = time.monotonic() + 60
                while done["state"] not in ("finished", "interrupted"):
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
                    done = c.get(r.headers["location"]).json()
        # her slots come back when her jobs end (the pool lets go of a job just after its
        # finished event is written, hence the polling)
        for i in range(2):
            deadline = time.monotonic() + 30
            while (r := submit(live, live.alice, f"after-{i}")).status_code == 429:
                assert time.monotonic() < deadline, "an ended job kept its slot"
                time.sleep(0.1)
            assert r.status_code == 202, r.text
