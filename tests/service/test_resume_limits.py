"""Resumes and answers under the per-principal limits (issue 26 §3), over real HTTP on both
stores: signals that wake many waiting runs never give their owner more jobs than its
executing limit (the rest are resumed by the sweep as slots free up), and signals and
approvals are rate-limited per principal."""

from __future__ import annotations

import time

from frostline.service.limits import ServiceLimits
from frostline.service.operations import Services
from frostline.store import open_store
from tests.service.conftest import Live, serving

WAITS = """
async def orchestrate(ctx, args):
    ev = await ctx.run("event.wait", {"event": "go"})
    total = 0
    for i in range(6):
        r = await ctx.run("echo", {"n": i})
        total = total + r["n"]
    return total
"""


def _eventually(check, *, timeout: float = 90.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def _open_resumes(live: Live, names: list[str]) -> int:
    """How many of bob's runs have a job queued or running now."""
    from frostline.embedded.jobs import open_jobs

    return sum(bool(open_jobs(live.store, live.store.find_run("bob", n).run_id)) for n in names)


def test_issue26_signals_cannot_give_a_principal_more_jobs_than_its_limit(store_url: str):
    services = Services.default(runner_name="process", latency_s=0.2)
    with serving(open_store(store_url), services=services, pool_size=6,
                 limits=ServiceLimits(executing_attempts=2), resume_interval_s=0.2) as live, \
            live.client(live.bob) as bob:
        names = [f"w{i}" for i in range(5)]
        for name in names:
            r = bob.post("/v1/runs", json={"script": WAITS, "run_id": name}, params={"wait": 60})
            assert r.status_code == 200 and r.json()["outcome"]["status"] == "waiting", r.text
        peak = 0
        for name in names:  # every signal is accepted; the resumes wait for bob's slots
            r = bob.post(f"/v1/runs/{name}/signals/go", json={"data": 1})
            assert r.status_code == 200, r.text
            peak = max(peak, _open_resumes(live, names))
        def all_done() -> bool:
            nonlocal peak
            peak = max(peak, _open_resumes(live, names))
            runs = {r["run_id"]: r["status"] for r in bob.get("/v1/runs").json()["runs"]}
            return all(runs[n] == "succeeded" for n in names)

        _eventually(all_done, what="every woken run to finish")
        assert peak <= 2, f"bob held {peak} jobs against a limit of 2"
        # while bob's runs waited for his slots, alice was never refused
        with live.client(live.alice) as alice:
            r = alice.post("/v1/runs", json={"script": WAITS, "run_id": "a"}, params={"wait": 60})
            assert r.status_code == 200


def test_issue26_signals_and_approvals_are_rate_limited_per_principal(store_url: str):
    with serving(open_store(store_url), limits=ServiceLimits(answers_per_minute=3)) as live, \
            live.client(live.bob) as bob, live.client(live.alice) as alice:
        r = bob.post("/v1/runs", json={"script": WAITS, "run_id": "w"}, params={"wait": 60})
        assert r.status_code == 200
        for i in range(3):  # kept for the next waits (or delivered to the first)
            assert bob.post("/v1/runs/w/signals/other", json={"data": i}).status_code == 200
        r = bob.post("/v1/runs/w/signals/go", json={"data": 9})
        assert r.status_code == 429 and r.json()["error"]["limit"] == "answers_per_minute"
        assert 1 <= int(r.headers["retry-after"]) <= 60
        r = bob.post("/v1/runs/w/approvals/orchestrate%2F%230%40%3A0", json={})
        assert r.status_code == 429
        # nothing was committed for the refused signal: the run still waits for "go"
        run = bob.get("/v1/runs/w").json()
        assert run["status"] == "waiting"
        # alice is not affected
        assert alice.post("/v1/runs", json={"script": WAITS, "run_id": "a"},
                          params={"wait": 60}).status_code == 200
        assert alice.post("/v1/runs/a/signals/go", json={"data": 1}).status_code == 200
