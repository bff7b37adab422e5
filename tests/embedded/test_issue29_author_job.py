"""The author job's body on a host (issue 29), on both stores, with the fake OpenAI-compatible
server as the configured model (scripted drafts: plumbing, not a model's skill)."""

from __future__ import annotations

import pytest

from frostline.config import parse_config
from frostline.embedded.authoring import author_params
from frostline.embedded.bodies import host_body
from frostline.embedded.jobs import JobSpec, job_state, record_queued, run_job
from frostline.providers.local import LocalProviders
from frostline.runtime.runners import ChildProcessRunner
from frostline.store.base import Store
from tests.fakes.openai_server import FakeOpenAIServer, chat
from tests.service.test_author_api import BOUNDED, TASK, WHILE


def test_issue29_a_retried_author_job_never_pays_the_model_twice(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAST_KEY", "sk-host")
    with FakeOpenAIServer(api_key="sk-host") as model:
        config = parse_config({"models": {"fast": {
            "base_url": model.url, "api_key_env": "FAST_KEY", "model": "fast-model",
            "max_retries": 0}}})
        body = host_body(LocalProviders(), ChildProcessRunner(), config=config)
        store.create_run("fox", {}, authoring=True)
        spec = JobSpec("author", "fox", author_params(TASK, "fast", args={"brief": "a fox"}))
        record_queued(store, spec, attempt=1)
        model.script(chat(WHILE), chat(BOUNDED))
        first = run_job(store, spec, body, worker="h1")
        assert first["status"] == "succeeded" and first["attempt"] == 1
        assert [d["ok"] for d in first["author"]["rewrites"]] == [False, True]
        # The same job run again (as after a hand-back): the recorded script runs, replayed.
        again = run_job(store, spec, body, worker="h2")
        assert len(model.requests) == 2
        assert again["author"] == first["author"] and again["attempt"] == 2
        assert again["status"] == "succeeded" and again["executed"] == 0 and again["replayed"] > 0
        state = job_state(store, "fox", spec.ticket)
        assert state is not None and state.outcome is not None
        assert state.outcome["author"]["accepted"] == first["author"]["accepted"]
