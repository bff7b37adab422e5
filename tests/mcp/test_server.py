"""frostline as an MCP server, driven by the official `mcp` client (`ClientSession`) over stdio
and over streamable HTTP: list the tools, check a script, run it (it fails), gate and run a
repair under the same run id (it replays and executes only the tail), show the run, and read
the run and an image artifact as resources."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client

from frostline.store import open_store

ROOT = Path(__file__).resolve().parents[2]
V1 = """
async def orchestrate(ctx, args):
    img = await ctx.run("image.generate", {"prompt": "a red kite", "size": "512x512"})
    review = await ctx.run("review.visual", {"image": img["artifact"]})
    return review["no_such_key"]
"""
V2 = """
async def orchestrate(ctx, args):
    img = await ctx.run("image.generate", {"prompt": "a red kite", "size": "512x512"})
    review = await ctx.run("review.visual", {"image": img["artifact"]})
    await ctx.run("echo", {"reviewed": img["artifact"]})
    return {"image": img, "review": review}
"""
BROKEN = V2.replace('{"prompt": "a red kite"', '{"prompt": "a blue kite"')


def env() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT), "FROSTLINE_RUNNER": "process",
            "PATH": os.environ.get("PATH", os.defpath)}


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    assert data == json.loads(result.content[0].text)
    return dict(data)


async def scenario(session: ClientSession) -> None:
    await session.initialize()
    listed = {t.name: t for t in (await session.list_tools()).tools}
    assert set(listed) == {"catalog", "check_script", "run_script", "gate_script", "show_run",
                           "reconcile_call", "approve", "signal"}
    for name in ("approve", "signal"):
        assert listed[name].annotations.read_only_hint is False
    for name in ("catalog", "check_script", "gate_script", "show_run"):
        assert listed[name].annotations.read_only_hint is True
    run_tool = listed["run_script"].annotations
    assert (run_tool.read_only_hint, run_tool.idempotent_hint) == (False, False)
    assert run_tool.destructive_hint is True  # the built-in catalog has side-effecting entries
    assert run_tool.open_world_hint is False  # ... all answered on this host

    catalog = structured(await session.call_tool("catalog", {}))
    names = {c["name"] for c in catalog["capabilities"]}
    assert {"image.generate", "echo"} <= names and "orchestrate" in catalog["skill"]

    bad = structured(await session.call_tool("check_script", {"script": "import os\n"}))
    assert bad["valid"] is False and bad["violations"][0]["rule"] in ("R00", "R01", "R06")
    assert structured(await session.call_tool("check_script", {"script": V1}))["valid"] is True

    first = structured(await session.call_tool("run_script", {"run_id": "m1", "script": V1}))
    assert (first["status"], first["executed"]) == ("failed", 2)

    gate = structured(await session.call_tool("gate_script", {"run_id": "m1", "script": BROKEN}))
    assert gate["accepted"] is False and gate["counterexamples"][0]["kind"] == "call_changed"
    stopped = structured(await session.call_tool("run_script", {"run_id": "m1",
                                                                "script": BROKEN}))
    assert stopped["status"] == "gate_stopped" and stopped["provider_calls"] == 0

    repaired = await session.call_tool("run_script", {"run_id": "m1", "script": V2})
    outcome = structured(repaired)
    assert outcome["status"] == "succeeded", outcome["error"]
    assert (outcome["replayed"], outcome["executed"]) == (2, 1)  # only the tail executed
    images = [c for c in repaired.content if c.type == "image"]
    assert images and base64.b64decode(images[0].data).startswith(b"\x89PNG")

    shown = structured(await session.call_tool("show_run", {"run_id": "m1"}))
    assert [a["status"] for a in shown["attempts"]] == ["failed", "gate_stopped", "succeeded"]
    missing = await session.call_tool("show_run", {"run_id": "nope"})
    assert missing.is_error and "no run" in missing.content[0].text
    nothing = await session.call_tool("reconcile_call", {"run_id": "m1", "identity":
                                                         "orchestrate/#0@:0", "abandon": True})
    assert nothing.is_error
    await waits(session)

    resources = {str(r.uri) for r in (await session.list_resources()).resources}
    assert "frostline://runs/m1" in resources
    run_doc = await session.read_resource("frostline://runs/m1")
    assert json.loads(run_doc.contents[0].text)["run"]["run_id"] == "m1"
    ref = outcome["result"]["image"]["artifact"]
    blob = (await session.read_resource(f"frostline://artifacts/{ref.split(':', 1)[1]}"))
    assert blob.contents[0].mime_type == "image/png"
    assert base64.b64decode(blob.contents[0].blob).startswith(b"\x89PNG")


WAITS = """
async def orchestrate(ctx, args):
    ok = await ctx.run("human.approve", {"ask": "send?"})
    ev = await ctx.run("event.wait", {"event": "ready"})
    return {"approved": ok["approved"], "event": ev}
"""


async def waits(session: ClientSession) -> None:
    """A run that waits: approved and signalled through the tools, then run again."""
    first = structured(await session.call_tool("run_script", {"run_id": "w1", "script": WAITS}))
    assert first["status"] == "waiting" and first["exit_code"] == 10
    shown = structured(await session.call_tool("show_run", {"run_id": "w1"}))
    [wait] = shown["waits"]
    assert wait["kind"] == "approval" and wait["payload"] == {"ask": "send?"}
    answer = structured(await session.call_tool("approve", {
        "run_id": "w1", "identity": wait["identity"], "reason": "fine"}))
    assert answer["value"]["approved"] is True
    again = await session.call_tool("approve", {"run_id": "w1", "identity": wait["identity"],
                                                "approved": False})
    assert again.is_error and "already_answered" in again.content[0].text
    sent = structured(await session.call_tool("signal", {"run_id": "w1", "name": "ready",
                                                         "data": {"k": 1}}))
    assert sent["delivered_to"] is None  # kept: the run has not reached that wait yet
    done = structured(await session.call_tool("run_script", {"run_id": "w1", "script": WAITS}))
    assert done["status"] == "succeeded"
    assert done["result"] == {"approved": True, "event": {"k": 1}}
    bad = await session.call_tool("signal", {"run_id": "w1", "name": "late", "data": 1})
    assert bad.is_error and "run_finished" in bad.content[0].text


def run_session(connect: Callable[[], Any]) -> None:
    async def main() -> None:
        async with connect() as (read, write), ClientSession(read, write) as session:
            await scenario(session)
    anyio.run(main)


def test_over_stdio(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "frostline", "mcp", "--store",
                                      f"sqlite:///{tmp_path}/runs.db"],
        env=env(), cwd=str(tmp_path))
    run_session(lambda: _streams(stdio_client(params)))


@asynccontextmanager
async def _streams(transport: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as streams:
        yield streams[0], streams[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_over_streamable_http_with_a_bearer_token(tmp_path):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    url = f"sqlite:///{tmp_path}/runs.db"
    with open_store(url) as store:
        token = store.create_token("agent")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "frostline", "mcp", "--transport", "http", "--port", str(port),
         "--store", url], env=env(), cwd=tmp_path, stderr=subprocess.PIPE)
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx2.post(endpoint, json={})
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        assert refused.status_code == 401  # no token, no service

        @asynccontextmanager
        async def connect() -> AsyncIterator[tuple[Any, Any]]:
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
                    streamable_http_client(endpoint, http_client=client) as streams:
                yield streams[0], streams[1]

        run_session(connect)
    finally:
        server.terminate()
        server.wait(timeout=30)
