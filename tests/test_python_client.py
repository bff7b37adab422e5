"""`frostline.Client(url, token)` against a real `frostline serve` (a child process) whose
configured model is the fake OpenAI-compatible server (issue 29). Plumbing: the model's
replies are scripted, no model is called."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import frostline
from frostline.errors import FrostlineError, RunNotFound
from tests.cli.test_repair import FAILING, FIXED, RELOCATED
from tests.fakes.openai_server import FakeOpenAIServer, chat

ROOT = Path(__file__).parents[1]
BOUNDED = (ROOT / "tests" / "repair" / "authoring" / "2_bounded.md").read_text()
WHILE = (ROOT / "tests" / "repair" / "authoring" / "1_while.md").read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, FakeOpenAIServer]]:
    with FakeOpenAIServer(api_key="sk-served") as model:
        config = tmp_path / "frostline.toml"
        config.write_text(f'[models.fast]\nbase_url = "{model.url}"\napi_key_env = "FAST_KEY"\n'
                          'model = "fast-model"\nmax_retries = 0\n')
        store = f"sqlite:///{tmp_path / 'served.db'}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FAST_KEY": "sk-served"}
        made = subprocess.run([sys.executable, "-m", "frostline", "token", "create", "alice",
                               "--store", store, "--json"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        token = json.loads(made.stdout)["token"]
        port = _free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "frostline", "serve", "--store", store, "--port", str(port),
             "--runner", "process", "--config", str(config)], env=env, cwd=tmp_path,
            stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(url + "/v1/catalog")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and server.poll() is None
                    time.sleep(0.1)
            yield url, token, model
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_issue29_client_over_a_real_server(served: tuple[str, str, FakeOpenAIServer]) -> None:
    url, token, model = served
    model.script(chat(RELOCATED), chat(FIXED), chat(WHILE), chat(BOUNDED))
    with frostline.Client(url, token) as fl:
        report = fl.check("async def orchestrate(ctx, args):\n    import os\n")
        assert not report.ok and "R06" in {v.rule for v in report.violations}
        first = fl.run(FAILING, run_id="e5", args={"brief": "fox"})
        assert first.status == "failed" and first.executed == 4
        fixed = fl.repair("e5", model="fast")
        assert [r.ok for r in fixed.rewrites] == [False, True] and fixed.accepted
        second = fl.run(fixed.accepted, run_id="e5")
        assert second.status == "succeeded" and second.replayed == 4 and second.executed == 1
        assert [a["status"] for a in fl.show("e5")["attempts"]] == ["failed", "succeeded"]
        authored = fl.author("three shots for args.brief", model="fast", run_id="a1",
                             args={"brief": "a fox"})
        assert [d.ok for d in authored.result.rewrites] == [False, True]
        assert authored.execution is not None and authored.execution.status == "succeeded"
        with pytest.raises(RunNotFound):
            fl.show("nope")
        with pytest.raises(FrostlineError, match="configured on the server"):
            fl.author("x", model="replay:/etc/passwd")  # never a file the server opens
