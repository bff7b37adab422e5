"""Workers under hostile tenants (issue 26 §1): fair scheduling across principals, and
cancelling a queued or running job, on real worker processes over PostgreSQL."""

from __future__ import annotations

import contextlib

from frostline.embedded.cancel import cancel_run
from frostline.embedded.jobs import EVENT_PREFIX, wait_job
from frostline.errors import NothingToCancel
from frostline.worker.queue import ProcrastinateQueue
from frostline.worker.submit import submit_attempt
from tests.service.test_cancel import QUICK, SLOW
from tests.service.test_fairness import started_order
from tests.worker.conftest import eventually


def _run(store, owner: str, name: str) -> str:
    return store.create_run(name, {}, owner=owner).run_id


def test_issue26_a_backlog_does_not_hold_every_worker_slot(fleet, pg_store):
    owners = {_run(pg_store, "alice", f"a{i}"): "A" for i in range(16)}
    for key in owners:
        submit_attempt(pg_store, key, SLOW)
    bob = _run(pg_store, "bob", "b")
    owners[bob] = "B"
    submit_attempt(pg_store, bob, QUICK)
    fleet.start("w1", "--concurrency", "2", latency=0.1)
    eventually(lambda: "B" in started_order(pg_store, owners), timeout=120,
               what="B's job to start")
    order = started_order(pg_store, owners)
    assert order.index("B") <= 2, order
    queue = ProcrastinateQueue(pg_store)
    try:
        for key in owners:  # the rest of A's backlog is not needed
            if key != bob:
                with contextlib.suppress(NothingToCancel):  # already finished
                    cancel_run(pg_store, key, by="alice", queue=queue)
    finally:
        queue.close()


def test_issue26_cancel_on_workers(fleet, pg_store):
    fleet.start("w1", "--concurrency", "1", latency=0.2)
    running, queued = _run(pg_store, "alice", "r"), _run(pg_store, "alice", "q")
    first = submit_attempt(pg_store, running, SLOW)
    second = submit_attempt(pg_store, queued, QUICK)
    eventually(lambda: len(pg_store.list_slots(running)) >= 2, what="two committed calls")
    queue = ProcrastinateQueue(pg_store)
    try:
        found = cancel_run(pg_store, queued, by="alice", queue=queue)
        assert found["jobs"] == [{"job": second.ticket, "state": "queued"}]
        found = cancel_run(pg_store, running, by="alice", queue=queue)
        assert found["jobs"] == [{"job": first.ticket, "state": "running"}]
        state = wait_job(pg_store, running, first.ticket, 60)
        assert state.state == "cancelled" and state.error["by"] == "alice"
        assert wait_job(pg_store, queued, second.ticket, 1).state == "cancelled"
        # Procrastinate ended them: the queued one cancelled, the running one aborted
        with queue._connections().connection() as conn:
            statuses = dict(conn.execute(
                "SELECT lock, status::text FROM procrastinate_jobs").fetchall())
        assert statuses == {queued: "cancelled", running: "aborted"}
    finally:
        queue.close()
    attempt = pg_store.list_attempts(running)[-1]
    assert attempt.status == "cancelled" and attempt.error["by"] == "alice"
    assert all(c.status.value != "pending" for c in pg_store.list_calls(running))
    assert pg_store.list_attempts(queued) == []
    kinds = [e.kind for e in pg_store.list_events(running)]
    assert EVENT_PREFIX + "cancel_requested" in kinds and EVENT_PREFIX + "cancelled" in kinds
    assert EVENT_PREFIX + "requeued" not in kinds  # never handed back: cancelled for good


TIMER = """
async def orchestrate(ctx, args):
    t = await ctx.run("timer.sleep", {"seconds": 2})
    total = 0
    for i in range(5):
        r = await ctx.run("echo", {"n": i})
        total = total + r["n"]
    return total
"""


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    return max(sum(1 for s, f in spans if s <= start < f) for start, _ in spans)


def test_issue26_due_timers_resume_under_the_owners_limit(fleet, pg_store):
    fleet.start("w1", "--concurrency", "4", "--resume-limit", "2", latency=0.2)
    runs = [_run(pg_store, "bob", f"t{i}") for i in range(4)]
    for key in runs:
        submit_attempt(pg_store, key, TIMER)
    # nobody resumes them: the worker scheduled each resume at its timer
    eventually(lambda: all(pg_store.get_run(k).status == "succeeded" for k in runs),
               timeout=120, what="every timer's resume to finish")
    resumed = [(a.started_at, a.finished_at) for k in runs for a in pg_store.list_attempts(k)
               if a.number == 2]
    assert len(resumed) == 4
    assert _most_at_once(resumed) <= 2  # four due at once, two of bob's slots


def test_issue26_cancel_over_http_on_workers(fleet, pg_store_url):
    from frostline.service.operations import Services
    from frostline.store import open_store
    from tests.service.conftest import serving

    fleet.start("w1", "--concurrency", "2", latency=0.2)
    with serving(open_store(pg_store_url),
                 services=Services.remote(ProcrastinateQueue)) as live, \
            live.client(live.alice) as c, live.client(live.bob) as b:
        assert c.post("/v1/runs", json={"script": SLOW, "run_id": "s"}).status_code == 202
        key = live.store.find_run("alice", "s").run_id
        eventually(lambda: len(live.store.list_slots(key)) >= 2, what="two committed calls")
        assert b.post("/v1/runs/s/cancel").status_code == 404
        r = c.post("/v1/runs/s/cancel")
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "cancelled" and r.json()["by"] == "alice"
        assert [(j["was"], j["state"]) for j in r.json()["jobs"]] == [("running", "cancelled")]
        assert live.store.list_attempts(key)[-1].status == "cancelled"
        assert c.post("/v1/runs/s/cancel").status_code == 409


def test_issue26_cancel_run_over_mcp_stops_a_workers_job(fleet, pg_store, tmp_path):
    import json

    from tests.mcp.test_limits import mcp_server, session_of

    fleet.start("w1", "--concurrency", "1", latency=0.2)
    token = pg_store.create_token("alice")
    key = _run(pg_store, "alice", "s")
    sub = submit_attempt(pg_store, key, SLOW)
    eventually(lambda: len(pg_store.list_slots(key)) >= 2, what="two committed calls")
    with mcp_server(fleet.url, tmp_path) as endpoint:
        result = session_of(endpoint, token,
                            lambda s: s.call_tool("cancel_run", {"run_id": "s"}))
    assert not result.is_error, result.content
    out = json.loads(result.content[0].text)
    assert out["run_id"] == "s" and out["by"] == "alice" and out["status"] == "cancelled"
    assert out["jobs"] == [{"job": sub.ticket, "was": "running", "state": "cancelled"}]
    assert pg_store.list_attempts(key)[-1].status == "cancelled"
