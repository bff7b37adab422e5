"""MCP `show_run` and the run resource never read a large result whole (issue 26 §6), as
`GET /v1/runs/{id}` does not: an attempt's result over 64 KiB is left out with its size
(`result_bytes`) and the resource that reads it on its own (`result_uri`); smaller results are
shown. On both stores; the resource read through the real MCP server over HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from frostline.mcp import operations as ops
from frostline.store import open_store
from tests.mcp.test_limits import mcp_server, session_of

SRC = "async def orchestrate(ctx, args):\n    return 1\n"
BIG = {"blob": "y" * (100 * 1024)}


def _two_attempts(store: Any) -> str:
    key = store.create_run("r", {}, owner="alice").run_id
    big = store.start_attempt(key, source=SRC, annotated=SRC, report={})
    store.finish_attempt(key, big.number, status="succeeded", result=BIG)
    small = store.start_attempt(key, source=SRC, annotated=SRC, report={})
    store.finish_attempt(key, small.number, status="succeeded", result=[1, 2])
    return key


def test_issue26_show_run_leaves_large_results_out(store, monkeypatch) -> None:
    _two_attempts(store)

    def whole(*args: Any) -> Any:
        raise AssertionError("a whole read of every result")
    monkeypatch.setattr(store, "list_attempts", whole)
    monkeypatch.setattr(store, "list_slots", whole)
    shown = ops.show_run(store, "r", owner="alice")
    big, small = shown["attempts"]
    assert "result" not in big and big["result_bytes"] > 100 * 1024
    assert big["result_uri"] == "frostline://runs/r/attempts/1/result"
    assert small["result"] == [1, 2] and "result_bytes" not in small
    monkeypatch.undo()
    assert ops.attempt_result(store, "r", 1, owner="alice") == BIG
    with pytest.raises(Exception, match="no run"):
        ops.attempt_result(store, "r", 1, owner="bob")  # another's run reads as missing


def test_issue26_the_large_result_is_a_resource_of_its_own(store_url, tmp_path) -> None:
    with open_store(store_url) as store:
        _two_attempts(store)
        alice, bob = store.create_token("alice"), store.create_token("bob")

    async def read(session: Any) -> list[Any]:
        run = await session.read_resource("frostline://runs/r")
        result = await session.read_resource("frostline://runs/r/attempts/1/result")
        return [json.loads(run.contents[0].text), json.loads(result.contents[0].text)]

    async def steal(session: Any) -> Any:
        try:
            return await session.read_resource("frostline://runs/r/attempts/1/result")
        except Exception as exc:  # the MCP error a missing run gets
            return exc

    with mcp_server(store_url, tmp_path) as endpoint:
        run, result = session_of(endpoint, alice, read)
        refused = session_of(endpoint, bob, steal)
    assert run["attempts"][0]["result_uri"] == "frostline://runs/r/attempts/1/result"
    assert "result" not in run["attempts"][0] and run["attempts"][1]["result"] == [1, 2]
    assert result == BIG
    assert isinstance(refused, Exception) and "no run" in str(refused)
