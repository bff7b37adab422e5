"""Robustness of responses over real HTTP: the body cap answers 413 however the body is sent,
every response carries the security headers, the CDN-loading docs are off unless asked for,
and revoked or expired tokens are refused from the next request on."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from importlib import resources

import httpx
import pytest

from frostline.service.headers import API_POLICY, DOCS_POLICY, UI_POLICY
from frostline.service.schemas import MAX_BODY_BYTES
from frostline.store import open_store
from tests.service.conftest import serving

ECHO = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a["n"]\n'


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    body = json.dumps({"script": ECHO, "args": {"pad": "x" * total}}).encode()
    for i in range(0, len(body), size):
        yield body[i:i + size]


def test_a_chunked_body_over_the_cap_is_413(live):
    with live.client(live.alice) as c:
        r = c.post("/v1/runs", content=chunks(MAX_BODY_BYTES + 10), headers={"content-type": "application/json"})
        assert "content-length" not in r.request.headers  # really chunked
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        # the same as with a Content-Length
        r = c.post("/v1/runs", content=b"".join(chunks(MAX_BODY_BYTES + 10)),
                   headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        assert c.get("/v1/runs").json()["runs"] == []
        # a chunked body under the cap is read whole
        r = c.post("/v1/runs", content=chunks(MAX_BODY_BYTES // 2), headers={"content-type": "application/json"},
                   params={"wait": 60})
        assert r.status_code == 200 and r.json()["outcome"]["result"] == 1


def test_security_headers_on_every_response(live):
    with live.client(live.alice) as c:
        run_id = c.post("/v1/runs", json={"script": ECHO}).json()["run_id"]
        responses = {
            "ui": [c.get("/"), c.get("/ui/app.js"), c.get("/ui/style.css"), c.get("/ui/logo.svg"),
                   c.get("/ui/nope.js")],
            "api": [c.get("/v1/catalog"), c.get("/v1/runs"), c.get(f"/v1/runs/{run_id}"),
                    c.get(f"/v1/runs/{run_id}/events?follow=false"), c.get("/openapi.json"),
                    c.get("/v1/runs/nope"), c.get("/nowhere"), c.post("/v1/runs", json={}),
                    c.post("/v1/runs", content=b"x" * (MAX_BODY_BYTES + 1)),
                    c.get("/v1/runs", headers={"Authorization": "Bearer wrong"})],
        }
    assert [r.status_code for r in responses["api"]] == [200, 200, 200, 200, 200, 404, 404, 422, 413, 401]
    for kind, policy in (("ui", UI_POLICY), ("api", API_POLICY)):
        for r in responses[kind]:
            where = f"{r.request.method} {r.request.url.path} ({r.status_code})"
            assert r.headers["content-security-policy"] == policy, where
            assert r.headers["x-content-type-options"] == "nosniff", where
            assert r.headers["referrer-policy"] == "no-referrer", where
            assert r.headers["x-frame-options"] == "DENY", where
    assert "frame-ancestors 'none'" in UI_POLICY and "frame-ancestors 'none'" in API_POLICY
    assert "script-src 'self';" in UI_POLICY and "unsafe-inline" not in UI_POLICY
    assert API_POLICY.startswith("default-src 'none';") and "script-src" not in API_POLICY


class _Inline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "style" or "style" in names or any(a.startswith("on") for a in names):
            self.found.append(f"<{tag} {attrs}>")
        self._in_script = tag == "script" and "src" not in names
        if self._in_script:
            self.found.append("<script> without src")


def test_the_ui_ships_no_inline_script_or_style():
    ui = resources.files("frostline.service").joinpath("ui")
    parser = _Inline()
    parser.feed(ui.joinpath("index.html").read_text(encoding="utf-8"))
    assert parser.found == []
    app_js = ui.joinpath("app.js").read_text(encoding="utf-8")
    # the script sets styles through the CSSOM, never as attributes or inline HTML
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function",
                         app_js)


def test_the_interactive_docs_are_off_by_default(tmp_path):
    with serving(open_store(f"sqlite:///{tmp_path / 'off.db'}")) as live, httpx.Client(base_url=live.url) as c:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            assert c.get(path).status_code == 404, path
        spec = c.get("/openapi.json")
        assert spec.status_code == 200 and spec.json()["info"]["title"] == "frostline"
    with serving(open_store(f"sqlite:///{tmp_path / 'on.db'}"), docs=True) as live, \
            httpx.Client(base_url=live.url) as c:
        for path in ("/docs", "/redoc"):
            r = c.get(path)
            assert r.status_code == 200 and "/openapi.json" in r.text
            assert r.headers["content-security-policy"] == DOCS_POLICY
            assert r.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in DOCS_POLICY
        # the relaxed policy is the docs pages' alone
        assert c.get("/").headers["content-security-policy"] == UI_POLICY


@pytest.fixture
def tokens_live(store_url):
    with serving(open_store(store_url)) as live:
        yield live


def test_a_revoked_token_is_refused_at_once(tokens_live):
    live = tokens_live
    carol = live.store.create_token("carol")
    with live.client(carol) as c:
        assert c.post("/v1/runs", json={"script": ECHO, "run_id": "c1"}).status_code == 202
        [record] = [r for r in live.store.list_tokens() if r.principal == "carol"]
        live.store.revoke_tokens(record.prefix)
        for method, path in (("GET", "/v1/runs"), ("GET", "/v1/runs/c1"), ("POST", "/v1/runs"),
                             ("GET", "/v1/runs/c1/events?follow=false")):
            r = c.request(method, path, json={"script": ECHO} if method == "POST" else None)
            assert r.status_code == 401 and r.json()["error"]["message"] == "unknown token", (method, path)
            assert r.headers["www-authenticate"] == "Bearer"
    with live.client(live.alice) as c:
        assert c.get("/v1/runs").status_code == 200  # other tokens keep working
    # a principal revoked by name loses every token it has
    d1, d2 = live.store.create_token("dave"), live.store.create_token("dave")
    live.store.revoke_tokens("dave")
    for token in (d1, d2):
        with live.client(token) as c:
            assert c.get("/v1/runs").status_code == 401


def test_an_expired_token_is_refused(tokens_live):
    live = tokens_live
    short = live.store.create_token("erin", expires_in_s=1.0)
    with live.client(short) as c:
        assert c.get("/v1/runs").status_code == 200
        time.sleep(1.1)
        r = c.get("/v1/runs")
        assert r.status_code == 401 and r.json()["error"]["message"] == "unknown token"
