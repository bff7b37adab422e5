"""The routers as wired by `create_app`: the route table and OpenAPI operations are pinned, and
the principal and owned-run dependencies answer as the API promises. In-process (no server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from frostline.contract.records import run_key
from frostline.embedded.jobs import JobSpec, wait_job
from frostline.embedded.pool import LocalPool
from frostline.errors import AlreadyQueued
from frostline.service.app import create_app
from frostline.service.operations import Services
from frostline.service.schemas import ErrorBody
from frostline.store import open_store
from frostline.store.base import Store

# (method, path, operationId, tags, success status, parameters) of every described operation.
OPERATIONS = [
    ("POST", "/v1/runs", "create_run_v1_runs_post", ["runs"], "202", ["wait", "Idempotency-Key"]),
    ("GET", "/v1/runs", "list_runs_v1_runs_get", ["runs"], "200", []),
    ("GET", "/v1/runs/{run_id}", "get_run_v1_runs__run_id__get", ["runs"], "200", ["run_id"]),
    ("POST", "/v1/runs/{run_id}/cancel", "cancel_v1_runs__run_id__cancel_post", ["runs"], "200",
     ["run_id", "wait"]),
    ("POST", "/v1/runs/{run_id}/attempts", "add_attempt_v1_runs__run_id__attempts_post", ["runs"], "202",
     ["run_id", "wait", "Idempotency-Key"]),
    ("POST", "/v1/runs/{run_id}/repair", "repair_v1_runs__run_id__repair_post", ["runs"], "202",
     ["run_id", "wait", "Idempotency-Key"]),
    ("POST", "/v1/runs/{run_id}/gate", "gate_v1_runs__run_id__gate_post", ["runs"], "200",
     ["run_id"]),
    ("GET", "/v1/runs/{run_id}/attempts/{number}/result",
     "attempt_result_v1_runs__run_id__attempts__number__result_get", ["runs"], "200",
     ["number", "run_id"]),
    ("GET", "/v1/runs/{run_id}/jobs/{job}", "get_job_v1_runs__run_id__jobs__job__get", ["jobs"], "200",
     ["job", "run_id"]),
    ("GET", "/v1/workers", "list_workers_v1_workers_get", ["jobs"], "200", []),
    ("GET", "/v1/metrics", "get_metrics_v1_metrics_get", ["jobs", "meta"], "200", []),
    ("GET", "/v1/runs/{run_id}/certificate", "certificate_v1_runs__run_id__certificate_get", ["contract"],
     "200", ["run_id", "verify", "deep"]),
    ("GET", "/v1/runs/{run_id}/orphans", "orphans_v1_runs__run_id__orphans_get", ["contract"], "200",
     ["run_id"]),
    ("POST", "/v1/runs/{run_id}/reconcile", "reconcile_v1_runs__run_id__reconcile_post", ["runs"], "200",
     ["run_id"]),
    ("GET", "/v1/runs/{run_id}/artifacts/{ref}", "artifact_v1_runs__run_id__artifacts__ref__get", ["runs"],
     "200", ["run_id", "ref"]),
    ("GET", "/v1/runs/{run_id}/events", "events_v1_runs__run_id__events_get", ["runs"], "200",
     ["run_id", "after", "follow"]),
    ("GET", "/v1/runs/{run_id}/waits", "list_waits_v1_runs__run_id__waits_get", ["waits"], "200",
     ["run_id"]),
    ("POST", "/v1/runs/{run_id}/approvals/{identity}",
     "answer_approval_v1_runs__run_id__approvals__identity__post", ["waits"], "200",
     ["identity", "run_id", "owner"]),
    ("GET", "/v1/approvals", "list_approvals_v1_approvals_get", ["waits"], "200", []),
    ("POST", "/v1/runs/{run_id}/signals/{name}", "send_signal_v1_runs__run_id__signals__name__post",
     ["waits"], "200", ["name", "run_id"]),
    ("GET", "/v1/catalog", "get_catalog_v1_catalog_get", ["meta"], "200", []),
    ("GET", "/v1/runs/{run_id}/graph", "graph_run_v1_runs__run_id__graph_get", ["runs"], "200",
     ["run_id"]),
    ("GET", "/v1/runs/{run_id}/graph.svg", "graph_run_svg_v1_runs__run_id__graph_svg_get", ["runs"],
     "200", ["run_id"]),
    ("GET", "/v1/runs/{run_id}/report", "ab_report_v1_runs__run_id__report_get", ["runs"], "200",
     ["run_id"]),
]

ECHO = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a["n"]\n'


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = open_store(f"sqlite:///{tmp_path / 'routes.db'}")
    try:
        yield s
    finally:
        s.close()


def _services(calls: list[tuple[Any, ...]]) -> Services:
    def execute(store: Store, run_id: str, source: str, args: dict[str, Any] | None) -> dict[str, Any]:
        calls.append(("execute", run_id, args))
        return {"status": "succeeded", "run_id": run_id}

    def repair(store: Store, run_id: str, model: str, max_rewrites: int, run_it: bool) -> dict[str, Any]:
        calls.append(("repair", run_id, model))
        return {"accepted": None}

    return Services(execute=execute, repair=repair)


def test_openapi_operations_are_pinned(store):
    spec = create_app(store, services=_services([])).openapi()
    found = [(method.upper(), path, op["operationId"], op["tags"], next(iter(op["responses"])),
              [p["name"] for p in op.get("parameters", [])])
             for path, methods in spec["paths"].items() for method, op in methods.items()]
    assert sorted(found) == sorted(OPERATIONS)
    # the bearer scheme is declared, on every operation but the public catalog (the metrics
    # need a token unless the server runs with --metrics-public: issue 26)
    assert spec["components"]["securitySchemes"] == {"HTTPBearer": {
        "type": "http", "scheme": "bearer", "description": "A token from `frostline token create NAME`."}}
    secured = {(m.upper(), p) for p, ms in spec["paths"].items() for m, op in ms.items()
               if op.get("security") == [{"HTTPBearer": []}]}
    assert secured == {(m, p) for m, p, *_ in OPERATIONS if p != "/v1/catalog"}


def test_ui_is_served_but_not_described(store):
    app = create_app(store, services=_services([]))
    assert not any(p == "/" or p.startswith("/ui") for p in app.openapi()["paths"])
    with TestClient(app) as c:
        assert c.get("/").headers["content-type"].startswith("text/html")
        assert c.get("/ui/app.js").headers["content-type"].startswith("text/javascript")
        assert c.get("/ui/index.html").json() == {"error": {"code": "not_found",
                                                             "message": "index.html"}}


def test_principal_dependency(store):
    calls: list[tuple[Any, ...]] = []
    token = store.create_token("alice")
    with TestClient(create_app(store, services=_services(calls))) as c:
        r = c.get("/v1/runs")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        err = ErrorBody.model_validate(r.json()).error
        assert err.code == "unauthorized" and "token create" in err.message
        r = c.get("/v1/runs", headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.json()["error"]["message"] == "unknown token"
        assert c.get("/v1/catalog").status_code == 200  # public: no token
        auth = {"Authorization": f"Bearer {token}"}
        r = c.post("/v1/runs", json={"script": ECHO, "run_id": "r1"}, headers=auth)
        assert r.status_code == 202, r.text
        body = r.json()
        assert body["run_id"] == "r1" and body["attempt"] == 1 and body["kind"] == "attempt"
        assert r.headers["location"] == body["location"] == f"/v1/runs/r1/jobs/{body['job']}"
        done = c.get(r.headers["location"], headers=auth).json()
        while done["state"] != "finished":
            done = c.get(r.headers["location"], headers=auth).json()
        assert done["outcome"] == {"status": "succeeded", "run_id": "r1"} and done["run_id"] == "r1"
    # the store key of alice's r1 reaches the services; the client only ever sees the name
    assert calls == [("execute", run_key("alice", "r1"), {})]
    assert store.find_run("alice", "r1").owner == "alice"


def test_owned_run_dependency_answers_404_before_reading_the_request(store):
    calls: list[tuple[Any, ...]] = []
    alice, bob = store.create_token("alice"), store.create_token("bob")
    store.create_run("r1", {}, owner="alice")
    with TestClient(create_app(store, services=_services(calls))) as c:
        as_bob = {"Authorization": f"Bearer {bob}"}
        for run_id in ("r1", "nope"):
            # the run is looked up before the body or query is validated: an invisible run is
            # 404 whatever the request carries
            for method, path, body in (("POST", "attempts", {"script": ""}), ("POST", "repair", {}),
                                       ("POST", "reconcile", {}), ("GET", "events?after=x", None),
                                       ("GET", "certificate?verify=x", None), ("GET", "orphans", None),
                                       ("GET", "jobs/j-1", None)):
                r = c.request(method, f"/v1/runs/{run_id}/{path}", json=body, headers=as_bob)
                assert r.status_code == 404, (run_id, path, r.text)
                assert r.json() == {"error": {"type": "RunNotFound", "code": "run_not_found",
                                              "message": f"no run {run_id!r}",
                                              "run_id": run_id}}
        as_alice = {"Authorization": f"Bearer {alice}"}
        assert c.post("/v1/runs/r1/repair", json={}, headers=as_alice).status_code == 422
        r = c.post("/v1/runs/r1/repair", json={"model": "openai:m-1"}, headers=as_alice,
                   params={"wait": 30})
        assert r.status_code == 200 and r.json()["outcome"] == {"accepted": None}
        assert r.json()["attempt"] is None  # a repair that does not execute opens no attempt
        assert c.get("/v1/runs/r1", headers=as_alice).json()["executing"] is False
    assert calls == [("repair", run_key("alice", "r1"), "openai:m-1")]


def test_a_run_takes_one_job_at_a_time_and_is_released(store):
    gate, started = threading.Event(), threading.Event()

    def body(_: Store, spec: JobSpec) -> dict[str, Any]:
        started.set()
        gate.wait(10)
        return {"status": "succeeded", "attempt": 1}

    store.create_run("r1", {})
    store.create_run("r2", {})
    pool = LocalPool(store, body, workers=2)
    try:
        first = pool.submit(store, JobSpec("attempt", "r1", {"source": ECHO}))
        assert started.wait(10)
        with pytest.raises(AlreadyQueued) as refused:
            pool.submit(store, JobSpec("attempt", "r1", {"source": ECHO}))
        assert refused.value.fields["job"] == first.ticket and "executing" in refused.value.message
        other = pool.submit(store, JobSpec("attempt", "r2", {"source": ECHO}))
        assert [w["jobs"][0]["run_id"] for w in pool.workers()] == ["r1"]
        gate.set()
        assert wait_job(store, "r1", first.ticket, 10).state == "finished"
        assert wait_job(store, "r2", other.ticket, 10).state == "finished"
        again = pool.submit(store, JobSpec("attempt", "r1", {"source": ECHO}))  # released
        assert wait_job(store, "r1", again.ticket, 10).outcome == {"status": "succeeded",
                                                                   "attempt": 1}
        assert pool.stats().start_latency.count == 3
    finally:
        gate.set()
        pool.close()


def test_every_error_answer_has_the_one_shape(store):
    """Routing's own 404 and 405, auth, validation and frostline errors: {"error": {code, message}}."""
    token = store.create_token("alice")
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(store, services=_services([]))) as c:
        answers = [c.get("/v1/no-such-route"), c.delete("/v1/catalog"), c.get("/v1/runs"),
                   c.post("/v1/runs", json={"surprise": 1}, headers=auth),
                   c.get("/v1/runs/nope", headers=auth)]
    assert [r.status_code for r in answers] == [404, 405, 401, 422, 404]
    for r in answers:
        assert list(r.json()) == ["error"], r.text
        ErrorBody.model_validate(r.json())
    assert answers[0].json()["error"] == {"code": "http_404", "message": "Not Found"}
    assert answers[3].json()["error"]["errors"][0]["loc"]
