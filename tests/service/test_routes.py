"""The routers as wired by `create_app`: the route table and OpenAPI operations are pinned, and
the principal and owned-run dependencies answer as the API promises. In-process (no server)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from frostline.errors import RunBusy
from frostline.service.app import create_app
from frostline.service.executing import ExecutingRuns
from frostline.service.operations import Services
from frostline.store import open_store
from frostline.store.base import Store

# (method, path, operationId, tags, success status, parameters) of every described operation.
OPERATIONS = [
    ("POST", "/v1/runs", "create_run_v1_runs_post", ["runs"], "201", []),
    ("GET", "/v1/runs", "list_runs_v1_runs_get", ["runs"], "200", []),
    ("GET", "/v1/runs/{run_id}", "get_run_v1_runs__run_id__get", ["runs"], "200", ["run_id"]),
    ("POST", "/v1/runs/{run_id}/attempts", "add_attempt_v1_runs__run_id__attempts_post", ["runs"], "201",
     ["run_id"]),
    ("POST", "/v1/runs/{run_id}/repair", "repair_v1_runs__run_id__repair_post", ["runs"], "200", ["run_id"]),
    ("GET", "/v1/runs/{run_id}/certificate", "certificate_v1_runs__run_id__certificate_get", ["contract"],
     "200", ["run_id", "verify"]),
    ("GET", "/v1/runs/{run_id}/orphans", "orphans_v1_runs__run_id__orphans_get", ["contract"], "200",
     ["run_id"]),
    ("POST", "/v1/runs/{run_id}/reconcile", "reconcile_v1_runs__run_id__reconcile_post", ["runs"], "200",
     ["run_id"]),
    ("GET", "/v1/runs/{run_id}/artifacts/{ref}", "artifact_v1_runs__run_id__artifacts__ref__get", ["runs"],
     "200", ["run_id", "ref"]),
    ("GET", "/v1/runs/{run_id}/events", "events_v1_runs__run_id__events_get", ["runs"], "200",
     ["run_id", "after", "follow"]),
    ("GET", "/v1/catalog", "get_catalog_v1_catalog_get", ["meta"], "200", []),
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
    assert "securitySchemes" not in spec.get("components", {})


def test_ui_is_served_but_not_described(store):
    app = create_app(store, services=_services([]))
    assert not any(p == "/" or p.startswith("/ui") for p in app.openapi()["paths"])
    with TestClient(app) as c:
        assert c.get("/").headers["content-type"].startswith("text/html")
        assert c.get("/ui/app.js").headers["content-type"].startswith("text/javascript")
        assert c.get("/ui/index.html").json() == {"error": "not_found", "message": "index.html"}


def test_principal_dependency(store):
    calls: list[tuple[Any, ...]] = []
    token = store.create_token("alice")
    with TestClient(create_app(store, services=_services(calls))) as c:
        r = c.get("/v1/runs")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"] == "unauthorized" and "token create" in r.json()["message"]
        r = c.get("/v1/runs", headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.json()["message"] == "unknown token"
        assert c.get("/v1/catalog").status_code == 200  # public: no token
        r = c.post("/v1/runs", json={"script": ECHO, "run_id": "r1"}, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201 and r.json() == {"run_id": "r1", "attempt": {"status": "succeeded",
                                                                                "run_id": "r1"}}
    assert calls == [("execute", "r1", {})]
    assert store.get_run("r1").owner == "alice"


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
                                       ("GET", "certificate?verify=x", None), ("GET", "orphans", None)):
                r = c.request(method, f"/v1/runs/{run_id}/{path}", json=body, headers=as_bob)
                assert r.status_code == 404, (run_id, path, r.text)
                assert r.json() == {"error": "run_not_found", "message": f"no run {run_id!r}",
                                    "detail": {"run_id": run_id}}
        as_alice = {"Authorization": f"Bearer {alice}"}
        assert c.post("/v1/runs/r1/repair", json={}, headers=as_alice).status_code == 422
        r = c.post("/v1/runs/r1/repair", json={"model": "openai:m-1"}, headers=as_alice)
        assert r.status_code == 200 and r.json() == {"accepted": None}
        assert c.get("/v1/runs/r1", headers=as_alice).json()["executing"] is False
    assert calls == [("repair", "r1", "openai:m-1")]


def test_executing_runs_are_exclusive_and_released():
    executing = ExecutingRuns()

    def nested() -> str:
        assert "r1" in executing and "r2" not in executing
        with pytest.raises(RunBusy):
            executing.exclusively("r1", lambda: "again")
        return executing.exclusively("r2", lambda: "other run")

    assert executing.exclusively("r1", nested) == "other run"
    assert "r1" not in executing
    with pytest.raises(ValueError):
        executing.exclusively("r1", lambda: int("x"))
    assert "r1" not in executing
