"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and images shapes.

Tests point real clients (the `openai` package) at it, so retries, timeouts, headers and
malformed bodies travel over real sockets. Behaviour is scripted per request: queue replies
with `server.script(...)`; when the queue is empty the server answers like the real API
(a chat completion echoing the last user message, or a PNG of the requested size, with a 400
for an unsupported size). Every request is recorded (method, path, headers, JSON body).

    with FakeOpenAIServer() as server:
        server.script(rate_limited(), chat("done"))
        client = OpenAIChatClient("m", base_url=server.url, api_key=server.api_key)
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PIL import Image

SUPPORTED_SIZES = ("256x256", "512x512", "1024x1024", "1024x1536", "1536x1024")


@dataclass(frozen=True)
class Reply:
    """One scripted response. `body` is JSON (dict/list) or raw text/bytes sent as-is."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before answering (longer than a client timeout → timeout)


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON


def error_body(message: str, *, type_: str = "invalid_request_error", code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": param}}


def chat_body(content: Any, *, model: str = "fake-model", usage: dict[str, int] | None = None,
              finish_reason: str = "stop") -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def chat(content: Any, *, usage: dict[str, int] | None = None, model: str = "fake-model",
         finish_reason: str = "stop") -> Reply:
    """A successful chat completion. Usage defaults to 10 prompt + 5 completion tokens."""
    usage = usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 5,
                                             "total_tokens": 15}
    return Reply(200, chat_body(content, model=model, usage=usage, finish_reason=finish_reason))


def rate_limited(retry_after: str = "0.01") -> Reply:
    return Reply(429, error_body("Rate limit reached", type_="rate_limit_error",
                                 code="rate_limit_exceeded"), {"Retry-After": retry_after})


def server_error(status: int = 500, retry_after: str | None = "0.01") -> Reply:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Reply(status, error_body("The server had an error", type_="server_error"), headers)


def malformed(raw: str = '{"choices": [ this is not json') -> Reply:
    return Reply(200, raw, {"Content-Type": "application/json"})


def slow(seconds: float, then: Reply | None = None) -> Reply:
    base = then or chat("late")
    return Reply(base.status, base.body, base.headers, delay_s=seconds)


def png_bytes(size: str, prompt: str = "") -> bytes:
    width, height = (int(v) for v in size.split("x"))
    colour = tuple(hashlib.sha256(prompt.encode()).digest()[:3])
    buf = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buf, format="PNG")
    return buf.getvalue()


def image_reply(size: str = "512x512", prompt: str = "", *, revised_prompt: str | None = None) -> Reply:
    item: dict[str, Any] = {"b64_json": base64.b64encode(png_bytes(size, prompt)).decode()}
    if revised_prompt is not None:
        item["revised_prompt"] = revised_prompt
    return Reply(200, {"created": 1700000000, "data": [item]})


class FakeOpenAIServer:
    """Threaded HTTP server with a queue of scripted replies and a request log."""

    def __init__(self, *, api_key: str | None = "sk-fake-test-key",
                 honour_idempotency: bool = False) -> None:
        self.api_key = api_key
        self.honour_idempotency = honour_idempotency
        self.executions = 0  # requests that produced a fresh reply (not an idempotent replay)
        self.replays = 0
        self._by_key: dict[str, Reply] = {}
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request consumes the next one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a delayed reply
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # request handling ------------------------------------------------------------------
    def _next(self, method: str, path: str, body: Any, key: str | None) -> Reply:
        # Like an API that honours Idempotency-Key: a repeated key gets the first successful
        # reply again, at once, without executing (and without the first reply's delay).
        with self._lock:
            if self.honour_idempotency and key is not None and key in self._by_key:
                self.replays += 1
                cached = self._by_key[key]
                return Reply(cached.status, cached.body, cached.headers)
            reply = self._queue.popleft() if self._queue else None
        reply = reply or self._default(method, path, body)
        with self._lock:
            self.executions += 1
            if self.honour_idempotency and key is not None and 200 <= reply.status < 300:
                self._by_key[key] = reply
        return reply

    def _default(self, method: str, path: str, body: Any) -> Reply:
        if method == "POST" and path == "/v1/chat/completions" and isinstance(body, dict):
            messages = body.get("messages") or [{}]
            last = str(messages[-1].get("content", ""))
            words = sum(len(str(m.get("content", "")).split()) for m in messages)
            reply = f"echo: {last}"
            return chat(reply, model=str(body.get("model", "fake-model")),
                        usage={"prompt_tokens": words, "completion_tokens": len(reply.split()),
                               "total_tokens": words + len(reply.split())})
        if method == "POST" and path == "/v1/images/generations" and isinstance(body, dict):
            size = body.get("size", "1024x1024")
            if size not in SUPPORTED_SIZES:
                return Reply(400, error_body(
                    f"Invalid value: '{size}'. Supported values are: {', '.join(SUPPORTED_SIZES)}.",
                    code="invalid_size", param="size"))
            return image_reply(size, str(body.get("prompt", "")))
        return Reply(404, error_body(f"Unknown route {method} {path}", code="unknown_url"))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                path = self.path.split("?", 1)[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(Recorded(method, path, headers, body))
                if server.api_key is not None and headers.get("authorization") != f"Bearer {server.api_key}":
                    reply = Reply(401, error_body("Incorrect API key provided",
                                                  code="invalid_api_key"))
                else:
                    reply = server._next(method, path, body, headers.get("idempotency-key"))
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    return
                if isinstance(reply.body, (dict, list)):
                    payload = json.dumps(reply.body).encode()
                elif isinstance(reply.body, bytes):
                    payload = reply.body
                else:
                    payload = str(reply.body or "").encode()
                try:
                    self.send_response(reply.status)
                    headers_out = {"Content-Type": "application/json", **reply.headers}
                    for name, value in headers_out.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. its timeout fired); nothing to deliver

        return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started FakeOpenAIServer, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server
