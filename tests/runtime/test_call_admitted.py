"""`Broker.call_admitted`: the one operation a graph run uses for a call the engine admitted.

A graph state's tool call has its identity from the graph engine (state, visit, ordinal), not
from a frame; the broker counts it as invoked and decides it under the state's grants, leaving
its own envelope as it was (issue 28 §4: the graph no longer swaps the broker's envelope or
calls its private methods).
"""

from __future__ import annotations

import asyncio
from typing import Any

from frostline.capabilities.envelope import Budget, Envelope
from frostline.contract.identity import Identity
from frostline.contract.prefix import load_prefix
from frostline.providers.local import LocalProviders
from frostline.runtime.broker import Broker
from frostline.store import Store

A = Identity("graph/A/v0", (), 0)
B = Identity("graph/B/v0", (), 0)


def _broker(store: Store, run_id: str) -> Broker:
    env = Envelope(budget=Budget(usd=10.0, calls=10))
    store.create_run(run_id, env.to_dict(), kind="graph")
    number = store.start_attempt(run_id, source="", annotated="", report={}).number
    return Broker(store, run_id, number, envelope=env, providers=LocalProviders(),
                  allowlist={}, prefix=load_prefix(store, run_id))


def test_issue28_call_admitted_decides_under_the_states_grants(store: Store) -> None:
    broker = _broker(store, "adm-1")

    async def both() -> list[dict[str, Any]]:
        ok = await broker.call_admitted(A, "echo", {"n": 0}, grants=("echo",))
        denied = await broker.call_admitted(B, "echo", {"n": 1}, grants=("image.generate",))
        await broker.drain()
        return [ok, denied]

    ok, denied = asyncio.run(both())
    assert ok["ok"] and ok["result"] == {"n": 0}
    assert not denied["ok"] and denied["error"]["code"] == "grant_denied"
    assert denied["error"]["kind"] == "stop"
    assert broker.invoked == [A, B]
    assert broker.envelope.grants is None  # the broker's own envelope is not swapped
    assert [c.identity for c in store.list_calls("adm-1")] == [A]


def test_issue28_call_admitted_replays_a_committed_call(store: Store) -> None:
    first = _broker(store, "adm-2")

    async def once(broker: Broker) -> dict[str, Any]:
        reply = await broker.call_admitted(A, "echo", {"n": 0}, grants=("echo",))
        await broker.drain()
        return reply

    executed = asyncio.run(once(first))
    number = store.start_attempt("adm-2", source="", annotated="", report={}).number
    second = Broker(store, "adm-2", number, envelope=first.envelope, providers=LocalProviders(),
                    allowlist={}, prefix=load_prefix(store, "adm-2"))
    replayed = asyncio.run(once(second))
    assert executed["ok"] and first.stats.executed == 1
    assert replayed == executed and second.stats.replayed == 1 and second.stats.executed == 0
