"""frostline as an MCP server, driven by the official `mcp` client (`ClientSession`) over stdio
and over streamable HTTP: list the tools, check a script, run it (it fails), gate and run a
repair under the same run id (it replays and executes only the tail), show the run, and read
the run and an image artifact as resources. A run's approval is answered by a second party
(issue 26): the local user on the command line next to stdio, an approver's token over HTTP."""

from __future__ import annotations

import base64
import functools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
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


# approve elsewhere: (run_id, identity, approved) -> the answer, or {"error": ...}
Elsewhere = Callable[[str, str, bool], Awaitable[dict[str, Any]]]


async def scenario(session: ClientSession, elsewhere: Elsewhere) -> None:
    await session.initialize()
    listed = {t.name: t for t in (await session.list_tools()).tools}
    assert set(listed) == {"catalog", "check_script", "run_script", "gate_script", "show_run",
                           "reconcile_call", "approve", "signal", "cancel_run"}
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
    await waits(session, elsewhere)

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


def on_the_command_line(cwd: Path, store: str | None = None) -> Elsewhere:
    """Answer as the local user does: `frostline approve` in a shell next to the agent."""
    async def answer(run_id: str, identity: str, approved: bool) -> dict[str, Any]:
        args = [sys.executable, "-m", "frostline", "approve", run_id, identity, "--json",
                *(["--store", store] if store else []), *([] if approved else ["--reject"])]
        done = await anyio.run_process(args, env=env(), cwd=cwd, check=False)
        return dict(json.loads(done.stdout))
    return answer


async def waits(session: ClientSession, elsewhere: Elsewhere) -> None:
    """A run that waits: the agent may not approve it itself (issue 26); approved elsewhere,
    signalled through the tools, then run again."""
    first = structured(await session.call_tool("run_script", {"run_id": "w1", "script": WAITS}))
    assert first["status"] == "waiting" and first["exit_code"] == 10
    shown = structured(await session.call_tool("show_run", {"run_id": "w1"}))
    [wait] = shown["waits"]
    assert wait["kind"] == "approval" and wait["payload"] == {"ask": "send?"}
    own = await session.call_tool("approve", {"run_id": "w1", "identity": wait["identity"],
                                              "reason": "fine"})
    error = json.loads(own.content[0].text)["error"]
    assert own.is_error and error["code"] == "approval_forbidden", error
    assert "role approver" in error["message"] and "self_approval" in error["message"]
    answer = await elsewhere("w1", wait["identity"], True)
    assert answer["value"]["approved"] is True, answer
    again = await elsewhere("w1", wait["identity"], False)
    assert again["error"]["code"] == "already_answered"
    sent = structured(await session.call_tool("signal", {"run_id": "w1", "name": "ready",
                                                         "data": {"k": 1}}))
    assert sent["delivered_to"] is None  # kept: the run has not reached that wait yet
    done = structured(await session.call_tool("run_script", {"run_id": "w1", "script": WAITS}))
    assert done["status"] == "succeeded"
    assert done["result"] == {"approved": True, "event": {"k": 1}}
    bad = await session.call_tool("signal", {"run_id": "w1", "name": "late", "data": 1})
    assert bad.is_error and "run_finished" in bad.content[0].text


def run_session(connect: Callable[[], Any], body: Callable[[ClientSession], Any]) -> None:
    async def main() -> None:
        async with connect() as (read, write), ClientSession(read, write) as session:
            await body(session)
    anyio.run(main)


def test_over_stdio(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "frostline", "mcp", "--store",
                                      f"sqlite:///{tmp_path}/runs.db"],
        env=env(), cwd=str(tmp_path))
    elsewhere = on_the_command_line(tmp_path, f"sqlite:///{tmp_path}/runs.db")
    run_session(lambda: _streams(stdio_client(params)),
                functools.partial(scenario, elsewhere=elsewhere))


@asynccontextmanager
async def _streams(transport: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as streams:
        yield streams[0], streams[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(url: str, cwd: Path) -> Iterator[str]:
    """`frostline mcp --transport http` on a free port; yields its endpoint once it answers."""
    import httpx2

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "frostline", "mcp", "--transport", "http", "--port", str(port),
         "--store", url], env=env(), cwd=cwd, stderr=subprocess.PIPE)
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


def bearer(endpoint: str, token: str) -> Callable[[], Any]:
    """A connect() for run_session: the official client over streamable HTTP with `token`."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def connect() -> AsyncIterator[tuple[Any, Any]]:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
                streamable_http_client(endpoint, http_client=client) as streams:
            yield streams[0], streams[1]
    return connect


def approver(endpoint: str, token: str, owner: str) -> Elsewhere:
    """Answer as a second party: an MCP session of an approver's token, naming the owner."""
    async def answer(run_id: str, identity: str, approved: bool) -> dict[str, Any]:
        async with bearer(endpoint, token)() as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            done = await session.call_tool("approve", {"run_id": run_id, "identity": identity,
                                                       "approved": approved, "owner": owner})
            return dict(json.loads(done.content[0].text))
    return answer


def test_over_streamable_http_with_a_bearer_token(tmp_path):
    import httpx2

    url = f"sqlite:///{tmp_path}/runs.db"
    with open_store(url) as store:
        token = store.create_token("agent")
        ops = store.create_token("ops", roles=["approver"])
    with http_server(url, tmp_path) as endpoint:
        assert httpx2.post(endpoint, json={}).status_code == 401  # no token, no service
        assert httpx2.post(endpoint, json={}, headers={
            "Authorization": "Bearer not-a-token"}).status_code == 401
        run_session(bearer(endpoint, token), functools.partial(
            scenario, elsewhere=approver(endpoint, ops, "agent")))
    with open_store(url) as store:  # the token's principal owns what it made
        assert sorted((r.owner, r.name) for r in store.list_runs()) == [("agent", "m1"),
                                                                         ("agent", "w1")]
        waited = store.find_run("agent", "w1")
        assert [a.by for _, a in store.list_waits(waited.run_id)] == ["ops", "agent"]


async def alice_makes_runs(session: ClientSession) -> str:
    """Alice's side: a run `shared` and a run `mine`; returns the ref of her image."""
    await session.initialize()
    done = structured(await session.call_tool("run_script", {"run_id": "shared", "script": V2}))
    assert done["status"] == "succeeded" and done["run_id"] == "shared"
    assert structured(await session.call_tool("run_script", {"run_id": "mine", "script": V1}))[
        "status"] == "failed"
    return str(done["result"]["image"]["artifact"])


async def bob_cannot_see_them(session: ClientSession, alice_image: str) -> None:
    """Bob's side: Alice's runs and artifacts are not found; his run `shared` is his own."""
    await session.initialize()
    for tool, args in (("show_run", {}), ("gate_script", {"script": V2}),
                       ("reconcile_call", {"identity": "orchestrate/#0@:0", "abandon": True}),
                       ("approve", {"identity": "orchestrate/#0@:0"}),
                       ("approve", {"identity": "orchestrate/#0@:0", "owner": "alice"}),
                       ("signal", {"name": "ready", "data": 1})):
        refused = await session.call_tool(tool, {"run_id": "mine", **args})
        assert refused.is_error and json.loads(refused.content[0].text)["error"][
            "code"] == "run_not_found", (tool, refused.content)
    assert {str(r.uri) for r in (await session.list_resources()).resources} == set()
    for uri in ("frostline://runs/mine", "frostline://runs/shared",
                f"frostline://artifacts/{alice_image.split(':', 1)[1]}"):
        with pytest.raises(Exception, match=r"no run|no resource"):
            await session.read_resource(uri)
    # The same name is a new run of Bob's: nothing of Alice's replays into it.
    own = structured(await session.call_tool("run_script", {"run_id": "shared", "script": V2}))
    assert (own["status"], own["replayed"], own["executed"]) == ("succeeded", 0, 3)
    assert own["run_id"] == "shared"  # his name for it, never the store's key
    shown = structured(await session.call_tool("show_run", {"run_id": "shared"}))
    assert shown["run"]["run_id"] == "shared" and len(shown["attempts"]) == 1
    assert {str(r.uri) for r in (await session.list_resources()).resources} == {
        "frostline://runs/shared"}


def test_over_http_each_principal_sees_only_its_own_runs(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    with open_store(url) as store:
        alice, bob = store.create_token("alice"), store.create_token("bob")
    with http_server(url, tmp_path) as endpoint:
        images: list[str] = []

        async def as_alice(session: ClientSession) -> None:
            images.append(await alice_makes_runs(session))

        async def as_bob(session: ClientSession) -> None:
            await bob_cannot_see_them(session, images[0])

        run_session(bearer(endpoint, alice), as_alice)
        run_session(bearer(endpoint, bob), as_bob)
    with open_store(url) as store:
        owners = sorted((r.owner, r.name) for r in store.list_runs())
        assert owners == [("alice", "mine"), ("alice", "shared"), ("bob", "shared")]
        assert len(store.list_slots(store.find_run("alice", "shared").run_id)) == 3


def test_over_http_a_session_serves_only_the_principal_that_opened_it(tmp_path):
    import httpx2

    url = f"sqlite:///{tmp_path}/runs.db"
    with open_store(url) as store:
        alice, bob = store.create_token("alice"), store.create_token("bob")
    accept = {"Accept": "application/json, text/event-stream"}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with http_server(url, tmp_path) as endpoint:
        opened = httpx2.post(endpoint, json=hello,
                             headers={**accept, "Authorization": f"Bearer {alice}"})
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        theirs = httpx2.post(endpoint, json=listing, headers={
            **accept, "Authorization": f"Bearer {bob}", "Mcp-Session-Id": session})
        assert theirs.status_code == 404  # as if the session did not exist
        mine = httpx2.post(endpoint, json=listing, headers={
            **accept, "Authorization": f"Bearer {alice}", "Mcp-Session-Id": session})
        assert mine.status_code == 200 and "run_script" in mine.text


def test_issue26_over_http_a_second_party_answers_the_agents_approval(store_url, tmp_path):
    with open_store(store_url) as store:
        agent = store.create_token("agent")
        ops, bob = store.create_token("ops", roles=["approver"]), store.create_token("bob")
    with http_server(store_url, tmp_path) as endpoint:

        async def as_agent(session: ClientSession) -> None:
            await session.initialize()
            first = structured(await session.call_tool("run_script", {"run_id": "w1",
                                                                      "script": WAITS}))
            identity = first["error"]["identity"]
            own = await session.call_tool("approve", {"run_id": "w1", "identity": identity})
            assert own.is_error and json.loads(own.content[0].text)["error"]["code"] == (
                "approval_forbidden")
            # a runner's token approves nothing: the agent's run is not found for it
            hidden = await approver(endpoint, bob, "agent")("w1", identity, True)
            assert hidden["error"]["code"] == "run_not_found"
            answer = await approver(endpoint, ops, "agent")("w1", identity, True)
            assert (answer["run_id"], answer["owner"], answer["by"]) == ("w1", "agent", "ops")
            structured(await session.call_tool("signal", {"run_id": "w1", "name": "ready",
                                                          "data": 2}))
            done = structured(await session.call_tool("run_script", {"run_id": "w1",
                                                                     "script": WAITS}))
            assert done["result"] == {"approved": True, "event": 2}

        run_session(bearer(endpoint, agent), as_agent)
    with open_store(store_url) as store:
        waited = store.find_run("agent", "w1")
        assert [a.by for _, a in store.list_waits(waited.run_id)] == ["ops", "agent"]


def test_issue26_self_approval_in_the_configuration_lets_the_agent_answer(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    (tmp_path / "frostline.toml").write_text('[capabilities."human.approve"]\n'
                                             "self_approval = true\n")
    with open_store(url) as store:
        agent = store.create_token("agent")
    with http_server(url, tmp_path) as endpoint:

        async def as_agent(session: ClientSession) -> None:
            await session.initialize()
            first = structured(await session.call_tool("run_script", {"run_id": "w1",
                                                                      "script": WAITS}))
            answer = structured(await session.call_tool("approve", {
                "run_id": "w1", "identity": first["error"]["identity"], "reason": "mine"}))
            assert answer["by"] == "agent" and answer["value"]["reason"] == "mine"

        run_session(bearer(endpoint, agent), as_agent)
