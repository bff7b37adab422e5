"""Issue 26 §6: an endpoint that echoes its Authorization header back in an error put the
configured key into the run's error, its events and the store's files. Configured secrets are
now removed from every provider message before anything stores or shows it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from frostline.config import parse_config
from frostline.errors import ProviderError
from frostline.providers.registry import open_registry
from frostline.providers.scrub import Secrets
from frostline.repair.clients import ModelError, OpenAIChatClient
from frostline.service.operations import Services
from frostline.store import open_store
from tests.fakes.openai_server import FakeOpenAIServer, Reply, error_body
from tests.service.conftest import serving
from tests.store.helpers import Raw

CANARY = "sk-echoed-" + os.urandom(12).hex()

SCRIPT = '''
async def orchestrate(ctx, args):
    t = await ctx.run("text.generate", {"prompt": "hello"})
    return t["text"]
'''


class EchoingServer(FakeOpenAIServer):
    """An OpenAI-compatible endpoint that refuses every request, quoting the Authorization
    header it received in its message, its code and its param."""

    def _next(self, method: str, path: str, body: Any, key: str | None) -> Reply:
        auth = self.requests[-1].headers.get("authorization", "")
        return Reply(400, error_body(f"model not allowed for key {auth}", code=f"bad:{auth}",
                                     param=auth))


def _stored_text(url: str, key: str) -> str:
    """Everything the store keeps of run `key` in its tables, as text (and for SQLite the
    bytes of its files, the WAL included)."""
    raw = Raw(url)
    try:
        rows = [raw.execute(f"SELECT * FROM {table} WHERE run_id = '{key}'")
                for table in ("events", "attempts", "calls")]
    finally:
        raw.close()
    return repr(rows)


def test_issue26_an_echoed_key_is_stored_and_shown_nowhere(store_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ECHO_TEST_KEY", CANARY)
    with EchoingServer(api_key=CANARY) as server:
        config = parse_config({
            "providers": {"openai": {"kind": "openai", "base_url": server.url,
                                     "api_key_env": "ECHO_TEST_KEY", "max_retries": 0}},
            "capabilities": {"text.generate": {"provider": "openai", "model": "m"}}})
        with open_registry(config, log_path=tmp_path / "provider.jsonl") as registry:
            services = Services.default(runner_name="process", capabilities=registry)
            with serving(open_store(store_url), services=services) as live, \
                    live.client(live.alice) as c:
                r = c.post("/v1/runs", json={"script": SCRIPT, "run_id": "echo"},
                           params={"wait": 60})
                assert r.status_code == 200, r.text
                shown = [r.text, c.get("/v1/runs/echo").text,
                         c.get("/v1/runs/echo/events", params={"follow": "false"}).text,
                         c.get(r.headers["location"]).text]
                key = live.store.find_run("alice", "echo").run_id
                stored = _stored_text(store_url, key)
                # the database, its WAL and shared memory, while the server holds them open
                files = {p.name: p.read_bytes() for p in tmp_path.glob("*.db*") if p.is_file()}
        assert [q.headers.get("authorization") for q in server.requests] == [f"Bearer {CANARY}"]
    assert r.json()["outcome"]["status"] == "failed"
    assert "model not allowed for key Bearer ***" in shown[1]  # the message, scrubbed
    for text in (*shown, stored):
        assert CANARY not in text
    if store_url.startswith("sqlite"):
        assert any(name.endswith("-wal") for name in files)
    for name, data in files.items():
        assert CANARY.encode() not in data, name
    assert CANARY not in (tmp_path / "provider.jsonl").read_text()


def test_issue26_a_model_endpoint_echoing_its_key_is_scrubbed():
    with EchoingServer(api_key=CANARY) as server:
        client = OpenAIChatClient("m", base_url=server.url, api_key=CANARY, max_retries=0)
        with pytest.raises(ModelError) as caught:
            client.complete([{"role": "user", "content": "hi"}])
        client.close()
    assert "Bearer ***" in caught.value.message and CANARY not in str(caught.value.to_dict())


def test_issue26_secrets_of_a_configuration_cover_every_named_variable():
    config = parse_config({
        "providers": {
            "openai": {"kind": "openai", "base_url": "http://127.0.0.1:1/v1",
                       "api_key_env": "K1"},
            "tools": {"kind": "mcp", "url": "http://127.0.0.1:1/mcp",
                      "bearer_token_env": "K2"},
            "local": {"kind": "mcp", "command": ["x"], "pass_env": ["K3"],
                      "env": {"TOKEN": "literal-secret"}}},
        "models": {"fast": {"base_url": "http://127.0.0.1:1/v1", "api_key_env": "K4",
                            "model": "m"}}})
    secrets = Secrets.of_config(config, {"K1": "value-one", "K2": "value-two",
                                         "K3": "value-three", "K4": "value-four",
                                         "OTHER": "not-a-secret"})
    err = secrets.error(ProviderError("saw value-one and value-two", detail=[
        "value-three", {"value-four": "literal-secret"}], other="not-a-secret"), "x")
    assert "value" not in str(err.to_dict()) and "literal-secret" not in str(err.to_dict())
    assert err.fields["other"] == "not-a-secret"
    assert secrets.error(OSError("value-one"), "x").message == "provider for x failed: OSError: ***"
