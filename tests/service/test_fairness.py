"""Fair scheduling (issue 26 §1): one principal's backlog cannot hold every worker slot while
another principal's job waits. Principal A queues 16 slow jobs, principal B one trivial job, on
a 2-slot pool: B's job is the next to start once a slot frees up (the order of starts is
counted, never a wall-clock threshold)."""

from __future__ import annotations

from frostline.embedded.jobs import EVENT_PREFIX
from frostline.service.limits import ServiceLimits
from frostline.service.operations import Services
from frostline.store import open_store
from frostline.store.base import Store
from tests.service.conftest import serving
from tests.service.test_cancel import QUICK, SLOW, eventually


def started_order(store: Store, owners: dict[str, str]) -> list[str]:
    """The owners of the jobs that started, in the order they started (global event order)."""
    starts = []
    for key, owner in owners.items():
        starts += [(e.seq, owner) for e in store.list_events(key)
                   if e.kind == EVENT_PREFIX + "started"]
    return [owner for _, owner in sorted(starts)]


def test_issue26_a_backlog_does_not_hold_every_slot(store_url: str) -> None:
    services = Services.default(runner_name="process", latency_s=0.1)
    with serving(open_store(store_url), services=services, pool_size=2,
                 limits=ServiceLimits(executing_attempts=16)) as live, \
            live.client(live.alice) as a, live.client(live.bob) as b:
        for i in range(16):
            assert a.post("/v1/runs", json={"script": SLOW, "run_id": f"a{i}"}).status_code == 202
        assert b.post("/v1/runs", json={"script": QUICK, "run_id": "b"}).status_code == 202
        owners = {live.store.find_run("alice", f"a{i}").run_id: "A" for i in range(16)}
        owners[live.store.find_run("bob", "b").run_id] = "B"
        eventually(lambda: "B" in started_order(live.store, owners), timeout=120,
                   what="B's job to start")
        order = started_order(live.store, owners)
        # B's job started right after the two of A's that held the slots when it was queued
        assert order.index("B") <= 2, order
        for i in range(16):  # A's backlog is not needed any more
            a.post(f"/v1/runs/a{i}/cancel", params={"wait": 0})
