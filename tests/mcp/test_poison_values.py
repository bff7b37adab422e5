"""Issue 26 through the MCP server (the official client over stdio), on both stores: a value
no store can hold is a tool error with its code, and `show_run` and the run resource keep
answering."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp.test_server import WAITS, _streams, env, run_session, structured

NUL_RESULT = 'async def orchestrate(ctx, args):\n    return {"s": "a\\x00b"}\n'


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _refused(result: Any, code: str = "value_not_storable") -> None:
    assert result.is_error, result.content
    assert json.loads(result.content[0].text)["error"]["code"] == code


async def poison(session: ClientSession) -> None:
    await session.initialize()
    _refused(await session.call_tool("run_script", {"run_id": "p", "script": WAITS,
                                                    "args": {"s": "a\x00"}}))
    _refused(await session.call_tool("show_run", {"run_id": "a\x00"}), "definition")
    waiting = structured(await session.call_tool("run_script", {"run_id": "w",
                                                                "script": WAITS}))
    assert waiting["status"] == "waiting"
    [wait] = structured(await session.call_tool("show_run", {"run_id": "w"}))["waits"]
    _refused(await session.call_tool("approve", {"run_id": "w", "identity": wait["identity"],
                                                 "reason": "ok\x00"}))
    for data in ("a\x00b", _deep(130)):  # (past ~200 levels the SDK drops the message)
        _refused(await session.call_tool("signal", {"run_id": "w", "name": "ready",
                                                    "data": data}))
    failed = structured(await session.call_tool("run_script", {"run_id": "n",
                                                               "script": NUL_RESULT}))
    assert failed["status"] == "failed" and failed["error"]["code"] == "value_not_storable"
    for run_id in ("w", "n"):
        assert structured(await session.call_tool("show_run", {"run_id": run_id}))
        read = await session.read_resource(f"frostline://runs/{run_id}")
        assert json.loads(read.contents[0].text)["run"]["run_id"] == run_id


def test_issue26_poison_values_through_the_mcp_tools(store_url: str, tmp_path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "frostline", "mcp", "--store", store_url],
        env=env(), cwd=str(tmp_path))
    run_session(lambda: _streams(stdio_client(params)), poison)
