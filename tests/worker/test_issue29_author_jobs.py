"""Authoring on a server whose jobs run on PostgreSQL workers (issue 29): `POST /v1/runs` with
`{"task", "model"}` queues an author job, and a real `frostline worker` process (its own
configuration's [models], pointing at the fake OpenAI-compatible server this test starts)
writes the script and runs it as the run's first attempt. Plumbing: the model's replies are
scripted drafts, no model is called."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frostline.service.operations import Services
from frostline.store import open_store
from frostline.worker.queue import ProcrastinateQueue
from tests.fakes.openai_server import FakeOpenAIServer, chat, server_error, slow
from tests.service.conftest import serving
from tests.service.test_author_api import BOUNDED, TASK, WHILE
from tests.worker.conftest import Fleet, eventually


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("FAST_KEY", "sk-worker-side")  # the worker inherits it, the API never reads it
    with FakeOpenAIServer(api_key="sk-worker-side") as server:
        yield server


def _worker(fleet: Fleet, model: FakeOpenAIServer, tmp_path: Path) -> None:
    config = tmp_path / "worker.toml"
    config.write_text(f'[models.fast]\nbase_url = "{model.url}"\napi_key_env = "FAST_KEY"\n'
                      'model = "fast-model"\nmax_retries = 0\n')
    fleet.start("w1", "--config", str(config))


def test_issue29_a_worker_authors_and_runs_the_first_attempt(
        fleet: Fleet, pg_store_url: str, model: FakeOpenAIServer, tmp_path: Path) -> None:
    _worker(fleet, model, tmp_path)
    model.script(chat(WHILE), chat(BOUNDED))
    with serving(open_store(pg_store_url),
                 services=Services.remote(ProcrastinateQueue)) as live, \
            live.client(live.alice) as http:
        r = http.post("/v1/runs", json={"task": TASK, "model": "fast", "run_id": "fox",
                                        "args": {"brief": "a fox"}})
        assert r.status_code == 202, r.text  # not the 400 of a server that runs no jobs
        assert r.json()["kind"] == "author"
        location = r.headers["Location"]
        done = eventually(lambda: (lambda j: j if j["state"] == "finished" else None)(
            http.get(location).json()), timeout=90, what="the author job's end")
        assert isinstance(done, dict)
        assert done["state"] == "finished", done
        assert done["worker"] == "w1"
        assert done["outcome"]["status"] == "succeeded" and done["attempt"] == 1
        assert [d["ok"] for d in done["outcome"]["author"]["rewrites"]] == [False, True]
        assert http.get("/v1/runs/fox").json()["status"] == "succeeded"
    assert len(model.requests) == 2 and model.requests[0].body["model"] == "fast-model"


@pytest.mark.parametrize("replies", [[server_error(500)], [chat(WHILE), chat(WHILE)]],
                         ids=["500", "refused"])
def test_issue29_a_workers_model_that_fails_stores_no_run(
        fleet: Fleet, pg_store_url: str, model: FakeOpenAIServer, tmp_path: Path,
        replies: list[object]) -> None:
    _worker(fleet, model, tmp_path)
    model.script(*replies)  # type: ignore[arg-type]
    with serving(open_store(pg_store_url),
                 services=Services.remote(ProcrastinateQueue)) as live, \
            live.client(live.alice) as http:
        r = http.post("/v1/runs?wait=60", json={"task": TASK, "model": "fast", "run_id": "r1",
                                                "max_rewrites": 1})
        assert r.status_code == 200, r.text
        job = r.json()
        assert job["worker"] == "w1"
        if len(replies) == 1:
            assert job["error"]["code"] == "model" and job["error"]["removed"] is True
        else:
            assert job["outcome"]["status"] == "not_authored"
            assert job["outcome"]["removed"] is True
        assert http.get("/v1/runs/r1").status_code == 404
        assert http.get("/v1/runs").json()["runs"] == []
        assert http.get(r.headers["Location"]).json() == job
        key = "@alice/r1"
        assert live.store.list_events(key) == [] and live.store.list_authoring() == []
        # The name is free again; the queue's record of the failed job is not the run's.
        again = http.post("/v1/runs?wait=60", json={
            "run_id": "r1", "script": "async def orchestrate(ctx, args):\n    return 1\n"})
        assert again.status_code == 200 and again.json()["outcome"]["status"] == "succeeded"


def test_issue29_a_worker_killed_mid_authoring_leaves_no_half_run(
        fleet: Fleet, pg_store_url: str, model: FakeOpenAIServer, tmp_path: Path) -> None:
    """SIGKILL of the worker while the model writes: the run is held (409), never listed; the
    job is taken back by another worker, which asks the model again; that model failing, the
    name is free and the job says why."""
    _worker(fleet, model, tmp_path)
    model.script(slow(20, chat(BOUNDED)), server_error(500))
    with serving(open_store(pg_store_url),
                 services=Services.remote(ProcrastinateQueue)) as live, \
            live.client(live.alice) as http:
        r = http.post("/v1/runs", json={"task": TASK, "model": "fast", "run_id": "r1"})
        assert r.status_code == 202, r.text
        location = r.headers["Location"]
        eventually(lambda: http.get(location).json()["state"] == "running" and
                   len(model.requests) == 1, timeout=60, what="w1 asking the model")
        fleet.kill("w1")
        assert http.get("/v1/runs/r1").status_code == 409
        assert http.get("/v1/runs").json()["runs"] == []
        fleet.start("w2", "--config", str(tmp_path / "worker.toml"))
        done = eventually(lambda: (lambda j: j if j["state"] == "finished" else None)(
            http.get(location).json()), timeout=90, what="the author job's end on w2")
        assert isinstance(done, dict)
        assert done["worker"] == "w2" and done["error"]["code"] == "model"
        assert done["error"]["removed"] is True
        assert http.get("/v1/runs/r1").status_code == 404
        assert live.store.list_events("@alice/r1") == [] and live.store.list_authoring() == []
    assert len(model.requests) == 2
