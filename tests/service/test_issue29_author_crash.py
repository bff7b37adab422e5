"""A real `frostline serve` (SQLite, its in-process pool) SIGKILLed while a model writes a run's
first script: the row that held the name is not a run (listed nowhere), and the next serve on
the store removes it and ends its job `interrupted`, saying nothing was stored. Plumbing: the
model's reply is scripted and delayed, no model is called."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from frostline.store import open_store
from tests.fakes.openai_server import FakeOpenAIServer, chat, slow
from tests.service.test_author_api import BOUNDED, SCRIPT, TASK
from tests.test_python_client import _free_port
from tests.worker.conftest import eventually

ROOT = Path(__file__).parents[2]


def _start(store: str, config: Path, cwd: Path, env: dict[str, str]) -> tuple[
        subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "frostline", "serve", "--store", store, "--port", str(port),
         "--runner", "process", "--config", str(config)], env=env, cwd=cwd,
        stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url + "/v1/catalog")
            return proc, url
        except httpx.TransportError:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)


def test_issue29_serve_killed_mid_authoring_leaves_no_half_run(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'served.db'}"
    with FakeOpenAIServer(api_key="sk-served") as model:
        config = tmp_path / "frostline.toml"
        config.write_text(f'[models.fast]\nbase_url = "{model.url}"\napi_key_env = "FAST_KEY"\n'
                          'model = "fast-model"\nmax_retries = 0\n')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FAST_KEY": "sk-served"}
        made = subprocess.run([sys.executable, "-m", "frostline", "token", "create", "alice",
                               "--store", store, "--json"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        auth = {"Authorization": f"Bearer {json.loads(made.stdout)['token']}"}
        model.script(slow(30, chat(BOUNDED)))
        first, url = _start(store, config, tmp_path, env)
        try:
            r = httpx.post(url + "/v1/runs", headers=auth,
                           json={"task": TASK, "model": "fast", "run_id": "r1"})
            assert r.status_code == 202, r.text
            location = url + r.headers["Location"]
            eventually(lambda: httpx.get(location, headers=auth).json()["state"] == "running"
                       and len(model.requests) == 1, timeout=60, what="the model asked")
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait(30)
        with open_store(store) as s:  # what the killed host left: a held name, not a run
            assert s.list_runs() == [] and [r.name for r in s.list_authoring()] == ["r1"]
        second, url = _start(store, config, tmp_path, env)
        try:
            location = url + r.headers["Location"]
            job = httpx.get(location, headers=auth).json()
            assert job["state"] == "interrupted" and job["error"]["removed"] is True
            assert "nothing was stored as a run" in job["error"]["message"]
            assert httpx.get(url + "/v1/runs/r1", headers=auth).status_code == 404
            assert httpx.get(url + "/v1/runs", headers=auth).json()["runs"] == []
            again = httpx.post(url + "/v1/runs?wait=60", headers=auth,
                               json={"run_id": "r1", "script": SCRIPT})
            assert again.status_code == 200 and again.json()["outcome"]["status"] == "succeeded"
        finally:
            second.terminate()
            second.wait(30)
    with open_store(store) as s:
        run = s.find_run("alice", "r1")
        assert run is not None
        assert all(e.data.get("job") != job["job"] for e in s.list_events(run.run_id))
