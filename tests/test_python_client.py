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
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

import frostline
from frostline.errors import FrostlineError, RunNotFound, ScriptRejected
from tests.cli.test_repair import FAILING, FIXED, RELOCATED
from tests.fakes.openai_server import FakeOpenAIServer, chat

ROOT = Path(__file__).parents[1]
BOUNDED = (ROOT / "tests" / "repair" / "authoring" / "2_bounded.md").read_text()
WHILE = (ROOT / "tests" / "repair" / "authoring" / "1_while.md").read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _serve(tmp_path: Path, store: str) -> Iterator[tuple[str, str, FakeOpenAIServer]]:
    """A real `frostline serve` on `store` whose configured model is the fake server; on a
    PostgreSQL store, with a real `frostline worker` (the same configuration) running its jobs."""
    with FakeOpenAIServer(api_key="sk-served") as model:
        config = tmp_path / "frostline.toml"
        config.write_text(f'[models.fast]\nbase_url = "{model.url}"\napi_key_env = "FAST_KEY"\n'
                          'model = "fast-model"\nmax_retries = 0\n')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FAST_KEY": "sk-served"}
        made = subprocess.run([sys.executable, "-m", "frostline", "token", "create", "alice",
                               "--store", store, "--json"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        token = json.loads(made.stdout)["token"]
        port = _free_port()
        procs = [subprocess.Popen(
            [sys.executable, "-m", "frostline", "serve", "--store", store, "--port", str(port),
             "--runner", "process", "--config", str(config)], env=env, cwd=tmp_path,
            stderr=subprocess.PIPE)]
        if store.startswith("postgresql"):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "frostline", "worker", "--store", store, "--runner",
                 "process", "--config", str(config), "--name", "w1", "--heartbeat", "0.5",
                 "--grace", "1"], env=env, cwd=tmp_path, stderr=subprocess.DEVNULL))
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(url + "/v1/catalog")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and procs[0].poll() is None
                    time.sleep(0.1)
            yield url, token, model
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait(timeout=30)
            if store.startswith("postgresql"):  # the queue's schema, next to the store's
                import psycopg

                base, schema = store.partition("?")[0], store.rsplit("%3D", 1)[1]
                with psycopg.connect(base, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_jobs" CASCADE')


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, FakeOpenAIServer]]:
    with _serve(tmp_path, f"sqlite:///{tmp_path / 'served.db'}") as live:
        yield live


@pytest.fixture
def served_any(tmp_path: Path, store_url: str) -> Iterator[tuple[str, str, FakeOpenAIServer]]:
    with _serve(tmp_path, store_url) as live:
        yield live


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


def _code(reply: str) -> str:
    return reply.split("```python\n")[1].split("```")[0]


def _attempts(fl: frostline.Client, run_id: str, n: int) -> list[str]:
    from tests.worker.conftest import eventually

    def ended() -> list[str] | None:
        statuses = [a["status"] for a in fl.show(run_id)["attempts"]]
        return statuses if len(statuses) == n and "running" not in statuses else None

    found = eventually(ended, timeout=90, what=f"{n} attempt(s) of {run_id}")
    assert isinstance(found, list)
    return found


def test_issue29_client_gate_submit_author_on_both_stores(
        served_any: tuple[str, str, FakeOpenAIServer]) -> None:
    url, token, model = served_any
    model.script(chat(WHILE), chat(BOUNDED))
    with frostline.Client(url, token) as fl:
        # author: a job on whichever host runs jobs (the worker, on PostgreSQL)
        authored = fl.author("three shots for args.brief", model="fast", run_id="a1",
                             args={"brief": "a fox"})
        assert [d.ok for d in authored.result.rewrites] == [False, True]
        assert authored.execution is not None and authored.execution.status == "succeeded"
        # submit: queued, returned at once; a retried key is the same job
        sub = fl.submit(FAILING, "s1", args={"brief": "fox"}, envelope={"relocation": "stop"})
        assert sub.kind == "attempt" and sub.attempt == 1 and sub.location.endswith(sub.ticket)
        assert _attempts(fl, "s1", 1) == ["failed"]
        with pytest.raises(ScriptRejected):
            fl.submit("async def orchestrate(ctx, args):\n    import os\n", "s1")
        # gate: the server's verdict, nothing recorded
        moved = _code(RELOCATED)
        stopped = fl.gate("s1", moved)
        assert not stopped.accepted and stopped.counterexamples and stopped.trace is None
        assert stopped.counterexamples[0].kind and stopped.to_dict()["counterexamples"]
        rebound = fl.gate("s1", moved, relocation="rebind")
        assert rebound.accepted and rebound.trace is not None
        assert fl.gate("s1", _code(FIXED)).accepted
        again = fl.submit(_code(FIXED), "s1", key="k1")
        assert fl.submit(_code(FIXED), "s1", key="k1").ticket == again.ticket
        assert again.attempt == 2
        assert _attempts(fl, "s1", 2) == ["failed", "succeeded"]
        with pytest.raises(RunNotFound):
            fl.gate("nope", moved)


def test_issue29_client_author_that_fails_stores_no_run(
        served: tuple[str, str, FakeOpenAIServer]) -> None:
    from frostline.errors import ModelError
    from tests.fakes.openai_server import server_error

    url, token, model = served
    with frostline.Client(url, token) as fl:
        model.script(chat(WHILE), server_error(500))
        with pytest.raises(ModelError) as caught:  # the model's error, and what was paid
            fl.author("three shots for args.brief", model="fast", run_id="a1")
        assert caught.value.fields["removed"] is True
        assert [d["ok"] for d in caught.value.fields["author"]["rewrites"]] == [False]
        with pytest.raises(RunNotFound):
            fl.show("a1")
        model.script(chat(WHILE), chat(WHILE))  # every draft refused
        refused = fl.author("three shots for args.brief", model="fast", run_id="a1",
                            max_rewrites=1)
        assert refused.accepted is None and refused.execution is None
        assert [d.ok for d in refused.result.rewrites] == [False, False]
        with pytest.raises(RunNotFound):
            fl.show("a1")
        model.script(chat(BOUNDED))  # the name is free
        authored = fl.author("three shots for args.brief", model="fast", run_id="a1",
                             args={"brief": "a fox"})
        assert authored.execution is not None and authored.execution.attempt == 1
        assert [a["status"] for a in fl.show("a1")["attempts"]] == ["succeeded"]
