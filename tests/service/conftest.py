"""A real HTTP server (uvicorn in a thread, on a free loopback port) over a real SQLite store."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from frostline.service.app import create_app
from frostline.service.operations import Services
from frostline.store import open_store
from frostline.store.base import Store


@dataclass
class Live:
    url: str
    store: Store
    alice: str
    bob: str

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live(tmp_path) -> Iterator[Live]:
    with serving(open_store(f"sqlite:///{tmp_path / 'api.db'}")) as running:
        yield running


@pytest.fixture
def live_any(store_url: str) -> Iterator[Live]:
    """The server over each backend (the PostgreSQL half skips without a server)."""
    with serving(open_store(store_url)) as running:
        yield running


@contextmanager
def serving(store: Store, *, services: Services | None = None, **app_options: Any) -> Iterator[Live]:
    """Serve `store` (with `services`, or local providers in a child process) until the block
    ends; `app_options` go to `create_app` (limits, docs)."""
    services = services or Services.default(runner_name="process", latency_s=0.02)
    with serving_app(create_app(store, services=services, **app_options), store) as running:
        yield running


@contextmanager
def serving_app(app: Any, store: Store) -> Iterator[Live]:
    """`app` served by uvicorn on a free loopback port, in a thread, until the block ends."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the API server did not start")
        time.sleep(0.02)
    try:
        yield Live(f"http://127.0.0.1:{port}", store, store.create_token("alice"), store.create_token("bob"))
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def signed_in(live: Live, token: str, chromium: str) -> Iterator[Any]:
    """A headless Chromium page on `live`'s UI, signed in with `token`, until the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(live.url + "/")
            page.fill("#token", token)
            page.click("button[type=submit]")
            yield page
        finally:
            browser.close()


def poll(page: Any, script: str, what: str) -> None:
    """Wait until `script` (a JS function) returns true, polled with `evaluate`: the UI's
    Content-Security-Policy refuses the string eval that `wait_for_function` needs."""
    for _ in range(200):
        if page.evaluate(script):
            return
        page.wait_for_timeout(50)
    pytest.fail(f"{what} never happened")
