"""Model clients against a real local HTTP server speaking the OpenAI API shape."""

from __future__ import annotations

import json
import threading

import pytest

from frostline.errors import DefinitionError, RunError
from frostline.repair import (
    ModelError,
    OpenAIChatClient,
    ReplayClient,
    ReplayPolicy,
    Usage,
    client_from_spec,
)
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Reply,
    chat,
    chat_body,
    fake_openai,  # noqa: F401  (fixture)
    malformed,
    rate_limited,
    server_error,
    slow,
)

MSGS = [{"role": "system", "content": "write code"}, {"role": "user", "content": "fix it"}]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("FROSTLINE_MODEL_BASE_URL", "FROSTLINE_MODEL_API_KEY", "OPENAI_API_KEY",
                 "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def client(server: FakeOpenAIServer, **kw) -> OpenAIChatClient:
    kw.setdefault("max_retries", 3)
    kw.setdefault("timeout", 5)
    return OpenAIChatClient("test-model", base_url=server.url, api_key=server.api_key, **kw)


def test_completion_and_the_request_it_sent(fake_openai):  # noqa: F811
    fake_openai.script(chat("```python\nx = 1\n```", usage={"prompt_tokens": 7,
                                                            "completion_tokens": 3,
                                                            "total_tokens": 10}))
    with client(fake_openai, temperature=0.0, max_tokens=100) as c:
        out = c.complete(MSGS)
    assert out.text == "```python\nx = 1\n```"
    assert out.usage == Usage(7, 3, 10) and out.model == "fake-model"
    assert out.raw["choices"][0]["message"]["content"] == out.text
    (req,) = fake_openai.requests
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {fake_openai.api_key}"
    assert req.body["model"] == "test-model" and req.body["messages"] == MSGS
    assert req.body["temperature"] == 0.0 and req.body["max_tokens"] == 100


def test_retries_429_and_500_then_succeeds(fake_openai):  # noqa: F811
    fake_openai.script(rate_limited(), server_error(502), rate_limited(), chat("done"))
    c = client(fake_openai, max_retries=3)
    assert c.complete(MSGS).text == "done"
    assert len(fake_openai.requests) == 4
    assert [r.headers.get("x-stainless-retry-count") for r in fake_openai.requests] == [
        "0", "1", "2", "3"]
    # every retry carries the same body
    assert len({json.dumps(r.body, sort_keys=True) for r in fake_openai.requests}) == 1


def test_retries_exhausted_raise_a_clear_model_error(fake_openai):  # noqa: F811
    fake_openai.script(*[rate_limited()] * 3)
    with pytest.raises(ModelError) as info:
        client(fake_openai, max_retries=2).complete(MSGS)
    err = info.value
    assert isinstance(err, RunError)
    assert err.fields["kind"] == "rate_limited" and err.fields["status"] == 429
    assert "429" in err.message and "max_retries" in err.message
    assert len(fake_openai.requests) == 3 and fake_openai.pending == 0


def test_server_errors_exhausted(fake_openai):  # noqa: F811
    fake_openai.script(server_error(500), server_error(503))
    with pytest.raises(ModelError) as info:
        client(fake_openai, max_retries=1).complete(MSGS)
    assert info.value.fields["kind"] == "server_error" and info.value.fields["status"] == 503


def test_backoff_without_retry_after_still_retries(fake_openai):  # noqa: F811
    fake_openai.script(server_error(500, retry_after=None), chat("after backoff"))
    assert client(fake_openai, max_retries=1).complete(MSGS).text == "after backoff"


def test_no_retries_when_disabled(fake_openai):  # noqa: F811
    fake_openai.script(rate_limited(), chat("never reached"))
    with pytest.raises(ModelError):
        client(fake_openai, max_retries=0).complete(MSGS)
    assert len(fake_openai.requests) == 1


def test_timeout(fake_openai):  # noqa: F811
    fake_openai.script(slow(30), slow(30))
    with pytest.raises(ModelError) as info:
        client(fake_openai, timeout=0.3, max_retries=1).complete(MSGS)
    assert info.value.fields["kind"] == "timeout"
    assert len(fake_openai.requests) == 2  # the timeout was retried once


@pytest.mark.parametrize("reply,why", [
    (malformed(), "not JSON"),
    (Reply(200, "<html>gateway</html>", {"Content-Type": "text/html"}), "not JSON"),
    (Reply(200, {"object": "chat.completion"}), "no 'choices'"),
    (Reply(200, {"choices": []}), "no 'choices'"),
    (Reply(200, {"choices": [{"index": 0}]}), "no 'message'"),
    (Reply(200, chat_body("")), "empty message content"),
    (Reply(200, chat_body(None, finish_reason="length")), "finish_reason='length'"),
    (Reply(200, [1, 2]), "not a JSON object"),
])
def test_malformed_responses(fake_openai, reply, why):  # noqa: F811
    fake_openai.script(reply)
    c = client(fake_openai)
    with pytest.raises(ModelError) as info:
        c.complete(MSGS)
    assert info.value.fields["kind"] == "malformed"
    assert why in info.value.message
    assert c.usage == Usage() and c.calls == 0


def test_missing_usage_counts_zero_and_content_parts_are_joined(fake_openai):  # noqa: F811
    body = chat_body([{"type": "text", "text": "part one, "}, {"type": "text", "text": "two"}])
    fake_openai.script(Reply(200, body))
    out = client(fake_openai).complete(MSGS)
    assert out.text == "part one, two" and out.usage == Usage()


def test_token_accounting_is_cumulative(fake_openai):  # noqa: F811
    fake_openai.script(
        chat("a", usage={"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}),
        chat("b", usage={"prompt_tokens": 20, "completion_tokens": 4}),  # no total given
        rate_limited(),
        chat("c", usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
    )
    c = client(fake_openai)
    for _ in range(3):
        c.complete(MSGS)
    assert c.usage == Usage(31, 7, 38) and c.calls == 3


def test_token_accounting_is_thread_safe(fake_openai):  # noqa: F811
    c = client(fake_openai)

    def work():
        for _ in range(5):
            c.complete([{"role": "user", "content": "one two three"}])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # the fake counts 3 prompt words and 4 completion words ("echo: one two three")
    assert c.calls == 20 and c.usage == Usage(60, 80, 140)


def test_wrong_key_is_an_auth_error(fake_openai):  # noqa: F811
    c = OpenAIChatClient("m", base_url=fake_openai.url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(ModelError) as info:
        c.complete(MSGS)
    assert info.value.fields["kind"] == "auth" and "API key" in info.value.message
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-wrong"


def test_connection_refused_is_a_connection_error():
    server = FakeOpenAIServer().start()
    url = server.url
    server.stop()
    with pytest.raises(ModelError) as info:
        OpenAIChatClient("m", base_url=url, api_key="k", max_retries=0, timeout=2).complete(MSGS)
    assert info.value.fields["kind"] == "connection"


def test_environment_supplies_url_and_key_and_arguments_win(fake_openai, monkeypatch):  # noqa: F811
    monkeypatch.setenv("FROSTLINE_MODEL_BASE_URL", fake_openai.url)
    monkeypatch.setenv("FROSTLINE_MODEL_API_KEY", fake_openai.api_key)
    assert OpenAIChatClient("m").complete(MSGS).text == "echo: fix it"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-lower-precedence")
    assert OpenAIChatClient("m").complete(MSGS).text == "echo: fix it"
    with pytest.raises(ModelError):
        OpenAIChatClient("m", api_key="sk-argument", max_retries=0).complete(MSGS)
    assert fake_openai.requests[-1].headers["authorization"] == "Bearer sk-argument"
    with pytest.raises(ModelError):  # the argument URL wins over the environment's
        OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1", max_retries=0,
                         timeout=2).complete(MSGS)


def test_missing_key_is_a_definition_error():
    with pytest.raises(DefinitionError, match="FROSTLINE_MODEL_API_KEY"):
        OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1")


def test_bad_messages_are_refused_before_any_request(fake_openai):  # noqa: F811
    c = client(fake_openai)
    for bad in ([], [{"role": "user"}], ["hi"], [{"role": "user", "content": 3}]):
        with pytest.raises(DefinitionError):
            c.complete(bad)
    assert fake_openai.requests == []


# recorded client ------------------------------------------------------------------------------
def write(tmp_path, data) -> str:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_client_from_spec(tmp_path, fake_openai):  # noqa: F811
    path = write(tmp_path, {"responses": [{"content": "x"}]})
    policy = ReplayPolicy((tmp_path,))
    assert isinstance(client_from_spec(f"recorded:{path}", replay=policy), ReplayClient)
    assert isinstance(client_from_spec(f"replay:{path}", replay=policy), ReplayClient)
    with pytest.raises(DefinitionError, match="command-line and test facility"):
        client_from_spec(f"replay:{path}")  # no policy: a server never opens a named file
    c = client_from_spec("openai:gpt-test", base_url=fake_openai.url, api_key=fake_openai.api_key)
    assert isinstance(c, OpenAIChatClient) and c.model == "gpt-test"
    assert c.complete(MSGS).text == "echo: fix it"
    for bad in ("", "openai", "openai:", "recorded:", "anthropic:claude", "gpt-4o"):
        with pytest.raises(DefinitionError, match="openai:MODEL"):
            client_from_spec(bad, replay=policy)
    with pytest.raises(DefinitionError):
        client_from_spec(f"recorded:{path}", timeout=3, replay=policy)
