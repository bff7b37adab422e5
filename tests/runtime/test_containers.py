"""Containers through the real broker: race decisions, caps, and settled siblings."""

from __future__ import annotations

import asyncio

from frostline.capabilities.envelope import Envelope
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallStatus
from frostline.runtime.broker import Broker
from tests.runtime.helpers import Flaky, Gauge, Slow, echo_ns, local, run

RACE = """
async def orchestrate(ctx, args):
    return await ctx.race([ctx.run("echo", {"n": 0, "delay": 0.3}),
                           ctx.run("echo", {"n": 1, "delay": 0.0})])
"""


def test_race_winner_is_recorded_and_replayed_and_losers_are_committed(store, tmp_path):
    p = Slow(local(tmp_path))
    first = run(store, "r", RACE, p)
    assert first.status == "succeeded" and first.result["n"] == 1
    # the slow loser was dispatched: the host completed and committed it anyway
    assert sorted(str(s.identity) for s in store.list_slots("r")) == ["orchestrate/#0@0:0",
                                                                      "orchestrate/#1@1:0"]
    decided = [e.data for e in store.list_events("r") if e.kind == "race_decided"]
    assert decided == [{"attempt": 1, "key": "race:#0", "proposed": 1, "winner": 1}]
    # On replay both branches answer at once (branch 0 is seen first); the record decides.
    again = run(store, "r", RACE, p)
    assert again.status == "succeeded" and again.result["n"] == 1 and again.replayed == 2
    assert sorted(echo_ns(tmp_path / "provider.jsonl")) == [0, 1]


def test_a_failing_branch_never_leaves_a_sibling_half_done(store, tmp_path):
    p = Flaky(Slow(local(tmp_path)))
    src = """
    async def orchestrate(ctx, args):
        return await ctx.parallel([ctx.run("echo", {"n": 0, "fail": True}),
                                   ctx.run("echo", {"n": 1, "delay": 0.2})])
    """
    out = run(store, "r", src, p)
    assert out.status == "failed" and out.error["type"] == "ProviderError"
    calls = {str(c.identity): c.status for c in store.list_calls("r")}
    assert calls == {"orchestrate/#0@0:0": CallStatus.FAILED,
                     "orchestrate/#1@1:0": CallStatus.COMMITTED}
    assert store.unresolved_calls("r") == []
    # the repair replays the sibling and retries only the failed branch
    again = run(store, "r", src.replace('"fail": True', '"fail": False'), p)
    assert (again.status, again.replayed, again.executed) == ("succeeded", 1, 1)


def test_envelope_concurrency_caps_provider_calls_in_flight(store, tmp_path):
    gauge = Gauge(local(tmp_path), target=3, total=10)
    src = """
    async def orchestrate(ctx, args):
        return await ctx.parallel([ctx.run("echo", {"n": i}) for i in range(10)])
    """
    out = run(store, "r", src, gauge, envelope=Envelope(concurrency=3))
    assert out.status == "succeeded" and out.executed == 10
    assert gauge.max_in_flight == 3


def test_the_host_caps_dispatch_even_when_the_script_floods_it(store, tmp_path):
    """Frames that bypass the ctx (a hostile child) still meet the host's semaphore."""
    gauge = Gauge(local(tmp_path), target=2, total=8)
    store.create_run("r", {})
    attempt = store.start_attempt("r", source="", annotated="", report={})

    async def flood():
        broker = Broker(store, "r", attempt.number, envelope=Envelope(concurrency=2),
                        providers=gauge, allowlist={"orchestrate/#0": "echo"},
                        prefix=Prefix("r"))
        tasks = [broker.submit({"type": "call", "nonce": broker.nonce, "id": i,
                                "site": "orchestrate/#0", "path": [i], "capability": "echo",
                                "payload": {"n": i}}) for i in range(8)]
        replies = await asyncio.gather(*tasks)
        await broker.drain()
        return replies

    replies = asyncio.run(flood())
    assert all(r["ok"] for r in replies) and len(store.list_slots("r")) == 8
    assert gauge.max_in_flight == 2


def test_pipeline_and_dag_identities_follow_their_paths(store, tmp_path):
    src = """
    async def orchestrate(ctx, args):
        async def up(x):
            return await ctx.run("echo", {"n": x})

        async def twice(r):
            return await ctx.run("echo", {"n": r["n"] * 2})

        piped = await ctx.pipeline([1, 2], up, twice)

        async def a(deps):
            return await ctx.run("echo", {"n": 10})

        async def b(deps):
            return await ctx.run("echo", {"n": deps["a"]["n"] + 1})

        graph = await ctx.dag({"b": (b, ["a"]), "a": (a, [])})
        return [piped[0]["n"], piped[1]["n"], graph["b"]["n"]]
    """
    p = local(tmp_path)
    out = run(store, "r", src, p)
    assert out.status == "succeeded" and out.result == [2, 4, 11]
    paths = sorted(c["identity"].split("@")[1] for c in out.calls)
    assert paths == ["0:0", "0:0", "0:0", "1:0", "1:0", "1:0"]
    again = run(store, "r", src, p)
    assert again.replayed == 6 and again.executed == 0 and again.result == [2, 4, 11]
