"""The MCP server over HTTP under per-principal limits, and cancel_run (issue 26 §1, §4):
`frostline mcp --transport http` as a real process, the official client, on both stores.

One principal's flood of run_script calls runs at most `executing_attempts` at once (the rest
are refused at once, never queued on a shared thread pool), another principal's `catalog`
answers while that principal's scripts still run, and new runs count per minute."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession

from frostline.store import open_store
from tests.mcp.test_server import bearer, env, free_port, structured

SLOW = """
async def orchestrate(ctx, args):
    total = 0
    for i in range(8):
        r = await ctx.run("echo", {"n": i})
        total = total + r["n"]
    return total
"""
LONG = SLOW.replace("range(8)", "range(40)")
CONFIG = """
[providers.local]
kind = "local"
latency_s = 0.5

[service.limits]
executing_attempts = 2
runs_per_minute = 30
"""


@contextmanager
def mcp_server(url: str, tmp: Path) -> Iterator[str]:
    """`frostline mcp --transport http` with slow local providers and small limits."""
    import httpx2

    (tmp / "frostline.toml").write_text(CONFIG)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "frostline", "mcp", "--transport", "http", "--port", str(port),
         "--store", url, "--config", str(tmp / "frostline.toml")], env=env(), cwd=tmp,
        stderr=subprocess.PIPE)
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx2.get(endpoint)
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=30)


def session_of(endpoint: str, token: str, body: Any) -> Any:
    async def main() -> Any:
        async with bearer(endpoint, token)() as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)
    return anyio.run(main)


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content
    return dict(json.loads(result.content[0].text)["error"])


def test_issue26_one_principal_cannot_take_the_mcp_tool_pool(store_url: str, tmp_path) -> None:
    with open_store(store_url) as store:
        alice, bob = store.create_token("alice"), store.create_token("bob")
    flood = 44
    with mcp_server(store_url, tmp_path) as endpoint:
        order: list[str] = []

        async def alice_floods(session: ClientSession) -> list[Any]:
            results: list[Any] = [None] * flood

            async def one(i: int) -> None:
                results[i] = await session.call_tool("run_script", {
                    "run_id": f"f{i}", "script": SLOW})
                order.append("alice")

            async def bob_reads() -> None:
                # bob's catalog, on his own connection, while alice's scripts execute
                while sum(r is None for r in results) == flood:
                    await anyio.sleep(0.05)
                async with bearer(endpoint, bob)() as (read, write), \
                        ClientSession(read, write) as theirs:
                    await theirs.initialize()
                    listed = structured(await theirs.call_tool("catalog", {}))
                    assert listed["capabilities"]
                order.append("bob")

            async with anyio.create_task_group() as tg:
                for i in range(flood):
                    tg.start_soon(one, i)
                tg.start_soon(bob_reads)
            return results

        results = session_of(endpoint, alice, alice_flood := alice_floods)
        del alice_flood
        ran = [r for r in results if not r.is_error]
        refused = [_error(r) for r in results if r.is_error]
        assert ran and all(structured(r)["status"] == "succeeded" for r in ran)
        assert refused and {e["code"] for e in refused} == {"too_many_requests"}
        assert {e["limit"] for e in refused} == {"executing_attempts"}
        # bob's answer came before alice's last script finished
        assert "bob" in order and order.index("bob") < len(order) - 1
    with open_store(store_url) as store:
        spans = sorted((a.started_at, a.finished_at) for r in store.list_runs(owner="alice")
                       for a in store.list_attempts(r.run_id))
    # never more than two of alice's attempts executing at once
    for start, _ in spans:
        assert sum(1 for s, f in spans if s <= start < (f or start + 1)) <= 2
    assert len(spans) == len(ran)  # a refused call created no run


def test_issue26_cancel_run_over_mcp(store_url: str, tmp_path) -> None:
    with open_store(store_url) as store:
        alice, bob = store.create_token("alice"), store.create_token("bob")
        url = store.url

    def committed() -> int:
        with open_store(url) as s:
            run = s.find_run("alice", "long")
            return 0 if run is None else len(s.list_slots(run.run_id))

    with mcp_server(store_url, tmp_path) as endpoint:
        async def alice_cancels(session: ClientSession) -> dict[str, Any]:
            out: dict[str, Any] = {}

            async def run_long() -> None:
                out["run"] = structured(await session.call_tool(
                    "run_script", {"run_id": "long", "script": LONG}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run_long)
                while await anyio.to_thread.run_sync(committed) < 1:
                    await anyio.sleep(0.05)
                out["bob"] = await anyio.to_thread.run_sync(lambda: session_of(
                    endpoint, bob, lambda s: s.call_tool("cancel_run", {"run_id": "long"})))
                out["cancel"] = structured(await session.call_tool(
                    "cancel_run", {"run_id": "long"}))
            out["again"] = await session.call_tool("cancel_run", {"run_id": "long"})
            return out

        out = session_of(endpoint, alice, alice_cancels)
    assert _error(out["bob"])["code"] == "run_not_found"
    cancel = out["cancel"]
    assert cancel["run_id"] == "long" and cancel["by"] == "alice"
    assert cancel["jobs"] == [{"job": None, "was": "running", "state": "cancelled"}]
    assert cancel["status"] == "cancelled"
    assert out["run"]["status"] == "cancelled" and out["run"]["run_id"] == "long"
    assert _error(out["again"])["code"] == "nothing_to_cancel"
    with open_store(store_url) as store:
        key = store.find_run("alice", "long").run_id
        [attempt] = store.list_attempts(key)
        assert attempt.status == "cancelled" and attempt.error["by"] == "alice"
        assert all(c.status.value != "pending" for c in store.list_calls(key))
        assert len(store.list_slots(key)) < 40
