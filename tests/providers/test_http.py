"""OpenAIProviders against a real local HTTP server speaking the OpenAI API shape."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io

import pytest
from PIL import Image

from frostline.capabilities import DEFAULT_CATALOG
from frostline.errors import DefinitionError, ProviderError
from frostline.providers.http import OpenAIProviders, header_key
from frostline.providers.provider_log import ProviderLog
from tests.fakes.artifacts import MemoryArtifacts, call_context
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Reply,
    chat,
    fake_openai,  # noqa: F401  (fixture)
    image_reply,
    rate_limited,
    server_error,
    slow,
)


@pytest.fixture(autouse=True)
def _no_env_log(monkeypatch):
    monkeypatch.delenv("FROSTLINE_PROVIDER_LOG", raising=False)


def providers(server: FakeOpenAIServer, **kw) -> OpenAIProviders:
    kw.setdefault("timeout", 5)
    return OpenAIProviders(server.url, server.api_key or "", image_model="img-model",
                           text_model="txt-model", **kw)


def invoke(p, cap, payload, artifacts=None, **kw):
    return asyncio.run(p.invoke(cap, payload, call_context(artifacts, **kw)))


def test_capabilities_and_idempotency_default_from_the_catalog(fake_openai):  # noqa: F811
    p = providers(fake_openai)
    assert p.capabilities() == {"image.generate", "text.generate"}
    assert not p.honours_idempotency_keys("image.generate")
    keyed = DEFAULT_CATALOG.extended(
        dataclasses.replace(DEFAULT_CATALOG["image.generate"], idempotency_keys=True))
    assert providers(fake_openai, catalog=keyed).honours_idempotency_keys("image.generate")
    assert providers(fake_openai, idempotency_keys=True).honours_idempotency_keys("text.generate")
    assert not providers(fake_openai, idempotency_keys=True).honours_idempotency_keys("echo")


def test_image_generate_stores_the_png_and_sends_the_key(fake_openai, tmp_path):  # noqa: F811
    arts = MemoryArtifacts()
    p = providers(fake_openai, log_path=str(tmp_path / "log.jsonl"))
    res = invoke(p, "image.generate", {"prompt": "a fox", "size": "1024x1536", "seed": 9}, arts,
                 key="run-1/orchestrate/#0@:0")
    assert res.result["size"] == "1024x1536" and res.result["seed"] == 9
    assert res.result["mime"] == "image/png" and res.result["model"] == "img-model"
    data, mime = arts.get(res.result["artifact"])
    assert mime == "image/png" and Image.open(io.BytesIO(data)).size == (1024, 1536)
    assert res.usage["cost_usd"] == DEFAULT_CATALOG["image.generate"].price_usd
    (req,) = fake_openai.requests
    assert req.path == "/v1/images/generations"
    assert req.headers["authorization"] == f"Bearer {fake_openai.api_key}"
    assert req.headers["idempotency-key"] == "run-1/orchestrate/#0@:0"
    assert req.body == {"model": "img-model", "prompt": "a fox", "size": "1024x1536", "n": 1,
                        "response_format": "b64_json", "seed": 9}
    (line,) = ProviderLog(tmp_path / "log.jsonl").read()
    assert line["ok"] is True and line["capability"] == "image.generate"


def test_non_ascii_keys_are_percent_encoded(fake_openai):  # noqa: F811
    key = "run-1/orchestrate.générer/#0@1:0"
    invoke(providers(fake_openai), "image.generate", {"prompt": "p", "size": "512x512"}, key=key)
    sent = fake_openai.requests[0].headers["idempotency-key"]
    assert sent == header_key(key) and sent.isascii() and "g%C3%A9n%C3%A9rer" in sent
    assert header_key("run/orchestrate/#1@0.2:3") == "run/orchestrate/#1@0.2:3"


def test_no_key_no_header(fake_openai):  # noqa: F811
    invoke(providers(fake_openai), "image.generate", {"prompt": "p", "size": "512x512"})
    assert "idempotency-key" not in fake_openai.requests[0].headers
    assert "seed" not in fake_openai.requests[0].body


def test_http_400_becomes_a_provider_error_with_the_api_code(fake_openai, tmp_path):  # noqa: F811
    arts = MemoryArtifacts()
    p = providers(fake_openai, log_path=str(tmp_path / "log.jsonl"))
    with pytest.raises(ProviderError) as info:
        invoke(p, "image.generate", {"prompt": "p", "size": "999x999"}, arts)
    err = info.value
    assert err.fields["status"] == 400 and err.fields["error_code"] == "invalid_size"
    assert err.fields["param"] == "size" and "999x999" in err.message
    assert len(arts) == 0
    (line,) = ProviderLog(tmp_path / "log.jsonl").read()
    assert line["ok"] is False and line["status"] == 400 and line["error_code"] == "invalid_size"


def test_side_effecting_calls_are_not_retried_without_key_support(fake_openai):  # noqa: F811
    fake_openai.script(server_error(500), image_reply("512x512"))
    with pytest.raises(ProviderError) as info:
        invoke(providers(fake_openai, max_retries=3), "image.generate",
               {"prompt": "p", "size": "512x512"}, key="k")
    assert info.value.fields["status"] == 500
    assert len(fake_openai.requests) == 1  # a retry could have paid twice


def test_side_effecting_calls_retry_when_the_api_honours_keys(fake_openai):  # noqa: F811
    fake_openai.script(server_error(503), rate_limited(), image_reply("512x512"))
    res = invoke(providers(fake_openai, idempotency_keys=True, max_retries=3), "image.generate",
                 {"prompt": "p", "size": "512x512"}, MemoryArtifacts(), key="run/site@:0")
    assert res.result["size"] == "512x512"
    assert [r.headers["idempotency-key"] for r in fake_openai.requests] == ["run/site@:0"] * 3


def test_read_only_text_is_retried(fake_openai):  # noqa: F811
    fake_openai.script(rate_limited(), chat("a short answer", usage={
        "prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}))
    res = invoke(providers(fake_openai), "text.generate", {"prompt": "say it", "max_tokens": 20})
    assert res.result["text"] == "a short answer" and res.result["finish_reason"] == "stop"
    assert res.usage == {"cost_usd": DEFAULT_CATALOG["text.generate"].price_usd, "tokens": 7,
                         "prompt_tokens": 4, "completion_tokens": 3}
    last = fake_openai.requests[-1]
    assert last.path == "/v1/chat/completions" and len(fake_openai.requests) == 2
    assert last.body["model"] == "txt-model" and last.body["max_tokens"] == 20
    assert last.body["messages"] == [{"role": "user", "content": "say it"}]


def test_timeout_on_a_paid_call_reports_an_unknown_outcome(fake_openai):  # noqa: F811
    fake_openai.script(slow(30, image_reply()))
    with pytest.raises(ProviderError) as info:
        invoke(providers(fake_openai, timeout=0.3), "image.generate",
               {"prompt": "p", "size": "512x512"})
    assert info.value.fields["error_code"] == "Timeout"
    assert info.value.fields["outcome_unknown"] is True
    assert len(fake_openai.requests) == 1


def test_connection_failure(tmp_path):
    server = FakeOpenAIServer().start()
    url = server.url
    server.stop()
    p = OpenAIProviders(url, "k", image_model="i", text_model="t", timeout=2, max_retries=0)
    with pytest.raises(ProviderError) as info:
        invoke(p, "text.generate", {"prompt": "p"})
    assert info.value.fields["error_code"] == "ConnectionError"
    assert info.value.fields["outcome_unknown"] is False  # text.generate has no side effects


@pytest.mark.parametrize("reply", [
    Reply(200, "not json"),
    Reply(200, {"data": []}),
    Reply(200, {"data": [{"url": "http://example.invalid/x.png"}]}),
    Reply(200, {"data": [{"b64_json": "!!not base64!!"}]}),
    Reply(200, {"data": [{"b64_json": "aGVsbG8="}]}),  # base64 of b"hello"
])
def test_malformed_image_responses(fake_openai, reply):  # noqa: F811
    fake_openai.script(reply)
    arts = MemoryArtifacts()
    with pytest.raises(ProviderError) as info:
        invoke(providers(fake_openai), "image.generate", {"prompt": "p", "size": "512x512"}, arts)
    assert info.value.fields["status"] == 502
    assert info.value.fields["error_code"] == "MalformedResponse"
    assert len(arts) == 0


@pytest.mark.parametrize("reply", [Reply(200, {"choices": []}), Reply(200, {"object": "x"})])
def test_malformed_text_responses(fake_openai, reply):  # noqa: F811
    fake_openai.script(reply)
    with pytest.raises(ProviderError) as info:
        invoke(providers(fake_openai), "text.generate", {"prompt": "p"})
    assert info.value.fields["error_code"] == "MalformedResponse"


def test_wrong_key_is_a_401(fake_openai):  # noqa: F811
    p = OpenAIProviders(fake_openai.url, "sk-wrong", image_model="i", text_model="t")
    with pytest.raises(ProviderError) as info:
        invoke(p, "text.generate", {"prompt": "p"})
    assert info.value.fields["status"] == 401
    assert info.value.fields["error_code"] == "invalid_api_key"


def test_unknown_capability_and_bad_configuration(fake_openai):  # noqa: F811
    with pytest.raises(ProviderError) as info:
        invoke(providers(fake_openai), "echo", {})
    assert info.value.fields["status"] == 404
    with pytest.raises(DefinitionError):
        OpenAIProviders("", "k", image_model="i", text_model="t")
    with pytest.raises(DefinitionError):
        OpenAIProviders("http://x", "k", image_model="i", text_model="t", timeout=0)


def test_concurrent_calls_in_one_event_loop(fake_openai):  # noqa: F811
    p, arts = providers(fake_openai), MemoryArtifacts()

    async def main():
        return await asyncio.gather(*(
            p.invoke("image.generate", {"prompt": f"shot {i}", "size": "512x512"},
                     call_context(arts, key=f"run/orchestrate/#0@{i}:0")) for i in range(5)))

    results = asyncio.run(main())
    assert len({r.result["artifact"] for r in results}) == 5 and len(arts) == 5
    assert sorted(r.headers["idempotency-key"] for r in fake_openai.requests) == [
        f"run/orchestrate/#0@{i}:0" for i in range(5)]


def test_a_key_honouring_api_closes_the_timeout_window():
    # The first request executes at the API but the answer arrives after the client gave up;
    # the retry with the same key gets the first result and the API executes nothing new.
    with FakeOpenAIServer(honour_idempotency=True) as server:
        server.script(slow(30, image_reply("512x512", "first")))
        p = OpenAIProviders(server.url, server.api_key or "", image_model="i", text_model="t",
                            timeout=0.3, max_retries=0, idempotency_keys=True)
        arts = MemoryArtifacts()
        with pytest.raises(ProviderError) as info:
            invoke(p, "image.generate", {"prompt": "p", "size": "512x512"}, arts, key="run/s@:0")
        assert info.value.fields["outcome_unknown"] is True
        res = invoke(p, "image.generate", {"prompt": "p", "size": "512x512"}, arts, key="run/s@:0")
        assert (server.executions, server.replays) == (1, 1)
        first = base64.b64decode(image_reply("512x512", "first").body["data"][0]["b64_json"])
        assert arts.get(res.result["artifact"])[0] == first
