"""Jobs that failed for good are shown where workers are (issue 26 §1): `frostline workers`
and `GET /v1/workers` list the recent ones (retries exhausted, refused by the store) with the
worker, the number of tries and the error; over HTTP a principal sees only its own. Real
worker processes on a real PostgreSQL; the embedded pool lists the jobs it gave up on."""

from __future__ import annotations

import json
import time

import pytest

from frostline.embedded.jobs import JobSpec
from frostline.errors import StoreUnavailable
from frostline.store import open_store
from tests.worker.conftest import eventually
from tests.worker.test_poison import FINE, _trigger_on_success
from tests.worker.test_processes import _cli


@pytest.mark.postgres
def test_issue26_workers_list_the_jobs_that_failed_for_good(fleet, pg_store, pg_store_url):
    from frostline.service.app import create_app
    from frostline.service.operations import Services
    from frostline.worker import ProcrastinateQueue
    from tests.service.conftest import serving_app

    _trigger_on_success(pg_store_url, "22000")  # every attempt's end is refused: a data error
    fleet.start("w1", "--concurrency", "1")
    before = time.time()
    app = create_app(pg_store, services=Services.remote(ProcrastinateQueue))
    with serving_app(app, pg_store) as live, live.client(live.alice) as alice, \
            live.client(live.bob) as bob:
        r = alice.post("/v1/runs", json={"script": FINE, "run_id": "refused"},
                       params={"wait": 60})
        assert r.status_code == 200 and r.json()["outcome"]["status"] == "failed", r.text
        mine = eventually(lambda: alice.get("/v1/workers").json()["failed"], timeout=30,
                          what="the failed job in /v1/workers")
        [failed] = mine
        assert failed["run_id"] == "refused" and failed["kind"] == "attempt"
        assert failed["worker"] == "w1" and failed["tries"] == 1
        assert failed["error"]["code"] == "store_refused"
        assert failed["failed_at"] >= before - 1
        assert bob.get("/v1/workers").json()["failed"] == []  # not his run: not shown
    listed = _cli("workers", "--store", pg_store_url, "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["failed"]
    assert row["error"]["code"] == "store_refused" and row["worker"] == "w1"
    table = _cli("workers", "--store", pg_store_url)
    assert table.returncode == 0, table.stderr
    assert "failed for good" in table.stdout and "store_refused" in table.stdout


def test_issue26_the_embedded_pool_lists_the_jobs_it_gave_up_on(tmp_path):
    from frostline.embedded.pool import LocalPool

    def body(store, spec):
        raise StoreUnavailable("the disk went away", backend="sqlite", operation="commit")

    with open_store(f"sqlite:///{tmp_path / 'p.db'}") as store:
        store.create_run("r1", {})
        pool = LocalPool(store, body, workers=1)
        try:
            pool.submit(store, JobSpec("attempt", "r1", {"source": FINE}))
            [failed] = eventually(pool.failed_jobs, timeout=30, what="the pool's failed job")
        finally:
            pool.close()
    assert failed["run_id"] == "r1" and failed["worker"] == "serve"
    assert failed["error"]["code"] == "store_unavailable"
    assert "disk" not in failed["error"]["message"]  # the detail stays in the log
