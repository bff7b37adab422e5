"""The API's jobs end to end: on PostgreSQL the server queues and a worker process runs (202,
Location, ?wait, a duplicate refused, SSE following the worker, /v1/workers, /v1/metrics); on
the embedded SQLite default a killed server's in-flight job is marked interrupted on restart."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from frostline.service.app import create_app
from frostline.service.operations import Services
from frostline.worker import ProcrastinateQueue
from tests.service.conftest import Live, serving_app
from tests.worker.conftest import ROOT, eventually, fleet, pg_store, pg_store_url  # noqa: F401 — fixtures

SIX = '''
async def orchestrate(ctx, args):
    out = []
    for i in range(6):
        out.append((await ctx.run("echo", {"i": i}))["i"])
    return sum(out)
'''
LONG = SIX.replace("range(6)", "range(900)")


def _sse(client: httpx.Client, run_id: str, until: str) -> list[dict]:
    seen = []
    with client.stream("GET", f"/v1/runs/{run_id}/events", timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                seen.append(json.loads(line[6:]))
                if seen[-1]["kind"] == until:
                    return seen
    return seen


@pytest.mark.postgres
def test_on_postgres_the_api_queues_and_a_worker_runs(fleet, pg_store):  # noqa: F811
    app = create_app(pg_store, services=Services.remote(ProcrastinateQueue))
    with serving_app(app, pg_store) as live, live.client(live.alice) as c:
        r = c.post("/v1/runs", json={"script": SIX, "run_id": "pg-1"})
        assert r.status_code == 202, r.text
        body = r.json()
        assert body["attempt"] == 1 and body["state"] == "queued"
        assert r.headers["location"] == f"/v1/runs/pg-1/jobs/{body['job']}"
        again = c.post("/v1/runs/pg-1/attempts", json={"script": SIX})
        assert again.status_code == 409 and again.json()["error"]["code"] == "already_queued"
        fleet.start("w1", "--concurrency", "2", latency=0.05)
        events = _sse(c, "pg-1", until="job.finished")
        kinds = [e["kind"] for e in events]
        assert kinds[:3] == ["job.queued", "job.started", "attempt_started"]
        assert kinds.count("executed") == 6 and kinds[-2:] == ["attempt_finished", "job.finished"]
        assert events[1]["data"]["worker"] == "w1"
        done = c.get(r.headers["location"]).json()
        assert done["state"] == "finished" and done["outcome"]["result"] == 15
        waited = c.post("/v1/runs/pg-1/attempts", json={"script": SIX}, params={"wait": 60})
        assert waited.status_code == 200 and waited.json()["outcome"]["replayed"] == 6
        workers = c.get("/v1/workers").json()["workers"]
        assert [w["name"] for w in workers] == ["w1"]
        assert time.time() - workers[0]["last_heartbeat"] < 30
        text = c.get("/v1/metrics").text  # a token is needed (issue 26)
        assert 'frostline_jobs{state="queued"} 0.0' in text
        assert "frostline_job_start_latency_seconds_count 2.0" in text
        assert "frostline_job_run_seconds_bucket" in text and "frostline_workers 1.0" in text


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(db: str, port: int, log) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "frostline", "serve", "--store", db, "--port", str(port),
         "--runner", "process"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    eventually(lambda: _up(port), what="the server")
    return proc


def _up(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/v1/catalog").status_code == 200
    except httpx.HTTPError:
        return False


def test_a_restart_of_the_embedded_server_marks_in_flight_jobs_interrupted(tmp_path):
    db = f"sqlite:///{tmp_path / 'api.db'}"
    made = subprocess.run([sys.executable, "-m", "frostline", "token", "create", "alice",
                           "--store", db], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    token = made.stdout.strip().splitlines()[-1]
    port = _port()
    with open(tmp_path / "serve.log", "ab") as log:
        server = _serve(db, port, log)
        c = httpx.Client(base_url=f"http://127.0.0.1:{port}",
                         headers={"Authorization": f"Bearer {token}"}, timeout=30)
        r = c.post("/v1/runs", json={"script": LONG, "run_id": "long"})
        assert r.status_code == 202
        location = r.headers["location"]
        eventually(lambda: any(e["kind"] == "executed" for e in _backlog(c, "long")),
                   what="the job executing")
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)
        server = _serve(db, port, log)
        try:
            state = c.get(location).json()
            assert state["state"] == "interrupted", state
            assert "restarted" in state["error"]["message"]
            attempt = c.get("/v1/runs/long").json()["attempts"][0]
            assert attempt["status"] == "failed" and attempt["error"]["code"] == "interrupted"
            assert not c.get("/v1/runs/long").json()["executing"]
            after = c.post("/v1/runs/long/attempts", json={"script": SIX}, params={"wait": 60})
            assert after.status_code == 200  # the run takes jobs again; crash rules decide
            assert after.json()["outcome"]["status"] in ("succeeded", "unresolved")
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


def _backlog(c: httpx.Client, run_id: str) -> list[dict]:
    r = c.get(f"/v1/runs/{run_id}/events", params={"follow": "false"})
    return [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]


def test_live_fixture_still_serves(live: Live):
    assert httpx.get(f"{live.url}/v1/metrics",
                     headers={"Authorization": f"Bearer {live.alice}"}).status_code == 200


@pytest.mark.postgres
def test_on_postgres_queued_jobs_hold_the_principals_executing_slots(fleet, pg_store):  # noqa: F811
    from concurrent.futures import ThreadPoolExecutor

    from frostline.service.limits import ServiceLimits

    app = create_app(pg_store, services=Services.remote(ProcrastinateQueue),
                     limits=ServiceLimits(executing_attempts=3))

    def create(live: Live, token: str, name: str) -> httpx.Response:
        with live.client(token) as c:  # no ?wait: 202 as soon as the job is queued
            return c.post("/v1/runs", json={"script": SIX, "run_id": name})

    with serving_app(app, pg_store) as live, ThreadPoolExecutor(10) as pool:
        # No worker yet: every accepted job stays queued in PostgreSQL, holding its slot.
        burst = list(pool.map(lambda i: create(live, live.alice, f"a{i}"), range(10)))
        codes = sorted(r.status_code for r in burst)
        assert codes == [202] * 3 + [429] * 7, codes
        for r in burst:
            if r.status_code == 429:
                assert r.json()["error"]["limit"] == "executing_attempts"
                assert int(r.headers["retry-after"]) >= 1
        assert create(live, live.alice, "late").status_code == 429
        assert create(live, live.bob, "b0").status_code == 202  # bob is not affected
        with live.client(live.alice) as c:
            assert len(c.get("/v1/runs").json()["runs"]) == 3  # nothing made for the refused
        fleet.start("w1", "--concurrency", "2")
        eventually(lambda: create(live, live.alice, "after").status_code == 202,
                   what="alice's slots to come back as her jobs finish")


def test_issue31_an_attempt_submitted_again_with_its_idempotency_key_is_not_queued_twice(
        live_any):
    with live_any.client(live_any.alice) as c:
        made = c.post("/v1/runs", json={"script": SIX, "run_id": "idem"}, params={"wait": 60})
        assert made.status_code == 200, made.text
        first = c.post("/v1/runs/idem/attempts", json={"script": SIX}, params={"wait": 60},
                       headers={"Idempotency-Key": "k-1"})
        assert first.status_code == 200 and first.json()["attempt"] == 2, first.text
        # a client that lost the answer sends it again: the same job, not a third attempt
        again = c.post("/v1/runs/idem/attempts", json={"script": SIX}, params={"wait": 60},
                       headers={"Idempotency-Key": "k-1"})
        assert again.status_code == 200, again.text
        assert again.json()["job"] == first.json()["job"] and again.json()["attempt"] == 2
        other = c.post("/v1/runs/idem/attempts", json={"script": SIX}, params={"wait": 60},
                       headers={"Idempotency-Key": "k-2"})
        assert other.status_code == 200 and other.json()["attempt"] == 3, other.text
        assert len(c.get("/v1/runs/idem").json()["attempts"]) == 3


def test_issue31_a_run_created_again_with_its_idempotency_key_is_the_same_run(live_any):
    with live_any.client(live_any.alice) as c:
        key = {"Idempotency-Key": "new-run-1"}
        first = c.post("/v1/runs", json={"script": SIX}, params={"wait": 60}, headers=key)
        assert first.status_code == 200, first.text
        again = c.post("/v1/runs", json={"script": SIX}, params={"wait": 60}, headers=key)
        assert again.status_code == 200, again.text
        assert (again.json()["run_id"], again.json()["job"]) == (first.json()["run_id"],
                                                                 first.json()["job"])
        assert len(c.get("/v1/runs").json()["runs"]) == 1
        named = c.post("/v1/runs", json={"script": SIX, "run_id": first.json()["run_id"]},
                       headers={"Idempotency-Key": "another"})
        assert named.status_code == 409  # another key for an existing run: refused as before
