"""A revoked token's MCP session stops being served within seconds (issue 26 §6), as the HTTP
API's event streams do: `frostline mcp --transport http` as a real process and the official
client, a long `run_script` whose answer streams back on its request, the token revoked while
the script runs: the answer's stream ends within seconds (not when the script ends, and
without the answer), and the session's next request is refused. On both stores."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession

from frostline.store import open_store
from tests.mcp.test_limits import LONG, mcp_server
from tests.mcp.test_server import bearer


def _started(url: str) -> bool:
    with open_store(url) as store:
        run = store.find_run("alice", "long")
        return run is not None and len(store.list_slots(run.run_id)) >= 1


def test_issue26_a_revoked_token_s_mcp_stream_ends_within_seconds(store_url, tmp_path):
    with open_store(store_url) as store:
        token = store.create_token("alice")
    out: dict[str, Any] = {}
    with mcp_server(store_url, tmp_path) as endpoint:
        async def main() -> None:
            async with bearer(endpoint, token)() as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()

                async def long_call() -> None:
                    try:  # 40 calls at 0.5 s: a 20-second script
                        out["answer"] = await session.call_tool(
                            "run_script", {"run_id": "long", "script": LONG})
                    except Exception as exc:  # the stream was cut: what revocation should do
                        out["cut"] = exc
                    out["ended"] = time.monotonic()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(long_call)
                    deadline = time.monotonic() + 30
                    while not await anyio.to_thread.run_sync(_started, store_url):
                        assert time.monotonic() < deadline, "the script never started"
                        await anyio.sleep(0.05)
                    with open_store(store_url) as store:
                        assert store.revoke_tokens("alice")
                    out["revoked"] = time.monotonic()
                    with anyio.fail_after(25):
                        while "ended" not in out:
                            await anyio.sleep(0.05)
                try:
                    out["after"] = await session.call_tool("catalog", {})
                except Exception as exc:
                    out["after_refused"] = exc

        anyio.run(main)
    assert "answer" not in out or out["answer"].is_error, out  # no answer for a revoked token
    assert out["ended"] - out["revoked"] < 10, out["ended"] - out["revoked"]
    assert "after_refused" in out or out["after"].is_error, out
