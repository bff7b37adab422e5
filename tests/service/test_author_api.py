"""`POST /v1/runs` with `{"task", "model"}` instead of a script (issue 29), over real HTTP,
against the fake OpenAI-compatible server. Plumbing tests: no model is reachable here, the
drafts are written by hand; what is tested is the route, what the model is sent, and that a
model that fails, answers garbage or writes nothing acceptable leaves no run (nothing under
its name, the name free again) while its job still says why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frostline.config import parse_config
from frostline.providers.registry import open_registry
from frostline.service.operations import Services
from frostline.store import open_store
from tests.fakes.openai_server import FakeOpenAIServer, chat, malformed, server_error, slow
from tests.service.conftest import Live, serving

DRAFTS = Path(__file__).parents[1] / "repair" / "authoring"
WHILE = (DRAFTS / "1_while.md").read_text()
BOUNDED = (DRAFTS / "2_bounded.md").read_text()
TASK = "Plan a 3-shot storyboard for args.brief and generate one 512x512 image per shot."


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="sk-server-side") as server:
        yield server


@pytest.fixture
def api(store_url: str, model: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
        ) -> Iterator[Live]:
    monkeypatch.setenv("FAST_KEY", "sk-server-side")
    config = parse_config({"models": {"fast": {"base_url": model.url, "api_key_env": "FAST_KEY",
                                               "model": "fast-model", "max_retries": 0}}})
    with open_registry(config) as registry:
        services = Services.default(runner_name="process", capabilities=registry)
        with serving(open_store(store_url), services=services,
                     catalog=registry.catalog) as live:
            yield live


def test_issue29_a_task_and_a_model_make_a_run(api: Live, model: FakeOpenAIServer) -> None:
    model.script(chat(WHILE), chat(BOUNDED))
    with api.client(api.alice) as http:
        r = http.post("/v1/runs?wait=60", json={"task": TASK, "model": "fast", "run_id": "fox",
                                                "args": {"brief": "a fox"}})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["kind"] == "author" and body["state"] == "finished"
        assert r.headers["Location"] == f"/v1/runs/fox/jobs/{body['job']}"
        assert body["outcome"]["status"] == "succeeded" and body["attempt"] == 1
        author = body["outcome"]["author"]
        assert [d["ok"] for d in author["rewrites"]] == [False, True]
        assert author["rewrites"][0]["violations"][0]["rule"] == "R03"
        assert author["accepted"] and author["wall_s"] >= 0 and "usage_total" in author
        run = http.get("/v1/runs/fox").json()
    assert run["status"] == "succeeded"
    first, second = (req.body for req in model.requests)
    assert first["model"] == "fast-model"
    assert "async def image_generate(" in first["messages"][0]["content"]
    assert "- R03 at line 5:" in second["messages"][1]["content"]
    events = [e.kind for e in api.store.list_events(api.store.find_run("alice", "fox").run_id)]
    assert "author" in events


def test_issue29_authoring_is_a_job_answered_202(api: Live, model: FakeOpenAIServer) -> None:
    model.script(chat(BOUNDED))
    with api.client(api.alice) as http:
        r = http.post("/v1/runs", json={"task": TASK, "model": "fast", "run_id": "fox",
                                        "args": {"brief": "a fox"}})
        assert r.status_code == 202, r.text
        assert r.json()["kind"] == "author" and r.json()["attempt"] == 1
        done = _ended(http, r.headers["Location"])
    assert done["outcome"]["status"] == "succeeded"
    assert [d["ok"] for d in done["outcome"]["author"]["rewrites"]] == [True]


def _ended(http: object, location: str) -> dict[str, object]:
    from tests.worker.conftest import eventually

    def finished() -> dict[str, object] | None:
        state = http.get(location).json()  # type: ignore[attr-defined]
        return state if state["state"] == "finished" else None

    found = eventually(finished, timeout=60, what="the author job's end")
    assert isinstance(found, dict)
    return found


GARBAGE = "no_script"
REFUSED = "refused"
FAILURES = [  # (what the endpoint answers, how many times, max_rewrites, the job's code)
    ([server_error(500)], 0, "model"),
    ([malformed()], 0, "model"),  # not JSON
    ([chat(WHILE), server_error(500)], 1, "model"),  # fails after a refused draft
    ([chat("I would rather not write code.")] * 3, 2, GARBAGE),  # JSON, but no script
    ([chat(WHILE)] * 2, 1, REFUSED),  # every draft breaks R03, the rewrites spent
]


@pytest.mark.parametrize("replies, max_rewrites, code", FAILURES,
                         ids=["500", "not-json", "500-after-a-draft", "no-script", "refused"])
def test_issue29_a_failing_model_stores_no_run_and_says_why(
        api: Live, model: FakeOpenAIServer, replies: list[object], max_rewrites: int,
        code: str) -> None:
    model.script(*replies)  # type: ignore[arg-type]
    body = {"task": TASK, "model": "fast", "run_id": "r1", "max_rewrites": max_rewrites}
    with api.client(api.alice) as http:
        r = http.post("/v1/runs?wait=60", json=body)
        assert r.status_code == 200, r.text  # the contract's status: the job ended in time
        job = r.json()
        assert job["state"] == "finished" and job["run_id"] == "r1" and job["kind"] == "author"
        if code == "model":  # the model's error, with the drafts paid before it
            assert job["error"]["code"] == "model" and job["outcome"] == {}
            assert job["error"]["removed"] is True
            drafts = job["error"]["author"]["rewrites"]
            assert [d["ok"] for d in drafts] == [False] * (len(replies) - 1)
        else:  # every draft refused: the report says why
            out = job["outcome"]
            assert out["status"] == "not_authored" and out["attempt"] is None
            assert out["removed"] is True and "nothing was stored as a run" in out["message"]
            drafts = out["author"]["rewrites"]
            assert [d["ok"] for d in drafts] == [False] * (max_rewrites + 1)
            if code == REFUSED:
                assert {v["rule"] for d in drafts for v in d["violations"]} >= {"R03"}
                assert "usage_total" in out["author"]
            else:
                assert all("no code block" in d["reason"] for d in drafts)
        # Nothing is a run: not listed, not readable, nothing stored under its key.
        assert http.get("/v1/runs/r1").status_code == 404
        assert [x["run_id"] for x in http.get("/v1/runs").json()["runs"]] == []
        # The answer stays readable where the 202 would have pointed.
        again = http.get(r.headers["Location"])
        assert again.status_code == 200 and again.json() == job
        _nothing_stored(api, "r1")
        # The name is free: a script run takes it, and its events hold nothing of the above.
        made = http.post("/v1/runs?wait=60", json={"run_id": "r1", "script": SCRIPT})
        assert made.status_code == 200 and made.json()["outcome"]["status"] == "succeeded"
        key = api.store.find_run("alice", "r1").run_id
        assert all(e.data.get("job") != job["job"] for e in api.store.list_events(key))
        assert http.get(r.headers["Location"]).json() == job  # still the authoring's answer


SCRIPT = "async def orchestrate(ctx, args):\n    return {'ok': 1}\n"


def _nothing_stored(api: Live, name: str) -> None:
    from frostline.contract.records import run_key

    key = run_key("alice", name)
    store = api.store
    assert store.find_run("alice", name) is None and store.get_run(key) is None
    assert store.list_events(key) == [] and store.list_attempts(key) == []
    assert store.list_slots(key) == [] and store.list_calls(key) == []
    assert store.list_waits(key) == [] and store.list_authoring() == []


def test_issue29_a_run_being_authored_is_no_run_yet(api: Live, model: FakeOpenAIServer) -> None:
    model.script(slow(1.5, chat(BOUNDED)))
    body = {"task": TASK, "model": "fast", "run_id": "fox", "args": {"brief": "a fox"}}
    with api.client(api.alice) as http:
        r = http.post("/v1/runs", json=body)
        assert r.status_code == 202, r.text
        # While the model writes: the name is held, yet nothing shows it as a run.
        held = http.get("/v1/runs/fox")
        assert held.status_code == 409 and "being authored" in held.json()["error"]["message"]
        assert r.headers["Location"] in held.json()["error"]["message"]
        assert http.get("/v1/runs").json()["runs"] == []
        taken = http.post("/v1/runs", json={"run_id": "fox", "script": SCRIPT})
        assert taken.status_code == 409 and taken.json()["error"]["code"] == "exists"
        assert http.post("/v1/runs/fox/attempts", json={"script": SCRIPT}).status_code == 409
        done = _ended(http, r.headers["Location"])
        assert done["outcome"]["status"] == "succeeded"
        assert [x["run_id"] for x in http.get("/v1/runs").json()["runs"]] == ["fox"]
        assert http.get("/v1/runs/fox").json()["status"] == "succeeded"


def test_issue29_a_cancelled_authoring_stores_no_run(api: Live, model: FakeOpenAIServer) -> None:
    model.script(slow(1.5, chat(BOUNDED)))
    with api.client(api.alice) as http:
        r = http.post("/v1/runs", json={"task": TASK, "model": "fast", "run_id": "fox"})
        assert r.status_code == 202, r.text
        from tests.worker.conftest import eventually

        eventually(lambda: http.get(r.headers["Location"]).json()["state"] == "running",
                   timeout=30, what="the author job running")
        cancelled = http.post("/v1/runs/fox/cancel?wait=30")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["jobs"][0]["state"] == "cancelled"
        assert http.get(r.headers["Location"]).json()["state"] == "cancelled"
    _nothing_stored(api, "fox")


@pytest.mark.parametrize("body", [
    {"task": TASK, "model": "replay:/etc/passwd"},
    {"task": TASK},
    {"task": TASK, "model": "fast", "script": "async def orchestrate(ctx, args):\n  return 1\n"},
    {"script": "async def orchestrate(ctx, args):\n  return 1\n", "model": "fast"},
    {"task": "x" * 20_001, "model": "fast"},
])
def test_issue29_bad_task_bodies_are_refused_before_any_model_call(
        api: Live, model: FakeOpenAIServer, body: dict[str, object]) -> None:
    with api.client(api.alice) as http:
        r = http.post("/v1/runs", json=body)
    assert r.status_code == 422, r.text
    assert model.requests == [] and api.store.list_runs() == []


def test_issue29_a_server_without_models_says_so(tmp_path: Path) -> None:
    services = Services.default(runner_name="process")
    services.author = None  # a server configured with no model endpoint
    with serving(open_store(f"sqlite:///{tmp_path / 'api.db'}"), services=services) as live:
        with live.client(live.alice) as http:
            r = http.post("/v1/runs?wait=60", json={"task": TASK, "model": "fast",
                                                    "run_id": "r1"})
        assert r.status_code == 200, r.text
        assert "send `script`" in r.json()["error"]["message"]
        assert r.json()["error"]["removed"] is True
        assert live.store.find_run("alice", "r1") is None and live.store.list_runs() == []


def test_issue29_a_taken_run_id_is_refused_before_the_model_is_paid(
        api: Live, model: FakeOpenAIServer) -> None:
    model.script(chat(BOUNDED))
    body = {"task": TASK, "model": "fast", "run_id": "fox", "args": {"brief": "a fox"}}
    with api.client(api.alice) as http:
        assert http.post("/v1/runs?wait=60", json=body).status_code == 200
        again = http.post("/v1/runs", json=body)
    assert again.status_code == 409 and again.json()["error"]["code"] == "exists"
    assert len(model.requests) == 1  # the second request never reached the model


def test_issue29_a_retried_task_with_its_key_is_the_same_author_job(
        api: Live, model: FakeOpenAIServer) -> None:
    model.script(chat(BOUNDED))
    body = {"task": TASK, "model": "fast", "args": {"brief": "a fox"}}
    with api.client(api.alice) as http:
        first = http.post("/v1/runs?wait=60", json=body, headers={"Idempotency-Key": "k1"})
        again = http.post("/v1/runs?wait=60", json=body, headers={"Idempotency-Key": "k1"})
    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["job"] == first.json()["job"] and again.json()["kind"] == "author"
    assert again.json()["outcome"]["author"] == first.json()["outcome"]["author"]
    assert len(model.requests) == 1 and len(api.store.list_runs()) == 1


def test_issue29_a_retried_key_answers_for_the_failed_authoring(
        api: Live, model: FakeOpenAIServer) -> None:
    model.script(server_error(500))
    body = {"task": TASK, "model": "fast", "run_id": "r1"}
    with api.client(api.alice) as http:
        first = http.post("/v1/runs?wait=60", json=body, headers={"Idempotency-Key": "k1"})
        again = http.post("/v1/runs?wait=60", json=body, headers={"Idempotency-Key": "k1"})
        assert first.status_code == again.status_code == 200, again.text
        assert again.json() == first.json() and first.json()["error"]["code"] == "model"
        assert http.get("/v1/runs/r1").status_code == 404
    assert len(model.requests) == 1  # the retry paid nothing and made nothing
    _nothing_stored(api, "r1")
