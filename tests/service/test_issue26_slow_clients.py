"""Issue 26 §6: slow clients cannot hold the server's connections.

400 connections that trickled their headers (or their body) stayed open for ever. Served as
`frostline serve` serves (`frostline.service.server`), every connection now has a deadline for
its request's headers and one for its body, and past the connection cap a request is refused.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from frostline.service.app import create_app
from frostline.service.operations import Services
from frostline.service.server import ConnectionLimits, uvicorn_options
from frostline.store import open_store
from tests.service.conftest import _free_port


@contextmanager
def served(tmp_path, limits: ConnectionLimits) -> Iterator[tuple[int, str]]:
    store = open_store(f"sqlite:///{tmp_path / 'api.db'}")
    app = create_app(store, services=Services.default(runner_name="process"),
                     connections=limits)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", **uvicorn_options(limits)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield port, store.create_token("alice")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()


def _closed_by_server(sock: socket.socket, within_s: float) -> bytes | None:
    """What the server sent before closing `sock`, or None if it was still open after
    `within_s` seconds."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk
    return None


def test_issue26_trickled_headers_are_cut_off(tmp_path):
    limits = ConnectionLimits(header_timeout_s=1.0, keep_alive_s=1.0)
    with served(tmp_path, limits) as (port, _):
        socks = []
        for n in range(100):
            s = socket.create_connection(("127.0.0.1", port))
            # half of them send part of a request line and headers, half send nothing
            if n % 2:
                s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(s)
        try:
            # one more byte now and then does not extend the deadline
            for s in socks[1::2][:10]:
                s.sendall(b"a")
            outcomes = [_closed_by_server(s, within_s=15) for s in socks]
        finally:
            for s in socks:
                s.close()
        assert all(o is not None for o in outcomes), \
            f"{sum(o is None for o in outcomes)} slow connections were still open"


def test_issue26_a_kept_alive_connection_gets_the_same_header_deadline(tmp_path):
    limits = ConnectionLimits(header_timeout_s=1.0, keep_alive_s=30.0)
    with served(tmp_path, limits) as (port, token):
        s = socket.create_connection(("127.0.0.1", port))
        try:
            s.sendall(f"GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}"
                      "\r\n\r\n".encode())
            s.settimeout(10)
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: x\r\n")  # the next one, left unfinished
            assert _closed_by_server(s, within_s=15) is not None
        finally:
            s.close()


def test_issue26_a_trickled_body_is_answered_408(tmp_path):
    limits = ConnectionLimits(header_timeout_s=5.0, body_timeout_s=1.0)
    with served(tmp_path, limits) as (port, token):
        s = socket.create_connection(("127.0.0.1", port))
        try:
            s.sendall(f"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                      "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n"
                      '{"script": "'.encode())
            answer = _closed_by_server(s, within_s=15)
        finally:
            s.close()
        assert answer is not None, "the connection with half a body was still open"
        assert answer.startswith(b"HTTP/1.1 408")
        assert b'"code": "request_timeout"' in answer


def test_issue26_connections_past_the_cap_are_refused_in_json(tmp_path):
    limits = ConnectionLimits(header_timeout_s=30.0, max_connections=20)
    with served(tmp_path, limits) as (port, token):
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(25)]
        try:
            deadline = time.monotonic() + 15
            while True:  # the server has taken them all in
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(f"GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                          f"{token}\r\nConnection: close\r\n\r\n".encode())
                answer = _closed_by_server(s, within_s=10) or b""
                s.close()
                if answer.startswith(b"HTTP/1.1 503") or time.monotonic() > deadline:
                    break
            assert answer.startswith(b"HTTP/1.1 503"), answer[:100]
            head, _, body = answer.partition(b"\r\n\r\n")
            assert b"content-type: application/json" in head.lower()
            assert b"retry-after: 1" in head.lower()
            assert json.loads(body)["error"]["code"] == "server_busy"  # the JSON shape
        finally:
            for s in idle:
                s.close()


def test_issue26_serve_runs_uvicorn_with_the_bounds(monkeypatch, tmp_path):
    """`frostline serve`'s server function hands uvicorn the header deadline, the keep-alive
    timeout, the header size cap and the connection cap, and the app the body deadline."""
    from frostline.service import app as app_module

    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    limits = ConnectionLimits(header_timeout_s=3.0, body_timeout_s=4.0, max_connections=7)
    app_module.serve(f"sqlite:///{tmp_path / 's.db'}", "127.0.0.1", 0,
                     lambda: Services.default(runner_name="process"), connections=limits)
    assert seen["timeout_keep_alive"] == limits.keep_alive_s
    assert seen["limit_concurrency"] == 7
    assert seen["h11_max_incomplete_event_size"] == limits.max_header_bytes
    assert seen["http"].header_timeout_s == 3.0
    body_limit = [m for m in seen["app"].user_middleware if m.cls.__name__ == "BodySizeLimit"]
    assert body_limit and body_limit[0].kwargs["timeout_s"] == 4.0
