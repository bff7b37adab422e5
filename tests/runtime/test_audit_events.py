"""The broker's audit trail: executions audited in their commit, replays batched in order.

An `executed` event is written in the transaction of its call's commit (no transaction of its
own); `replay` events are buffered and written in batches, yet every replay is audited, in
invocation order, before any later event.
"""

from __future__ import annotations

import asyncio
from typing import Any

from frostline.capabilities.envelope import Budget, Envelope
from frostline.capabilities.local import LocalProviders
from frostline.contract.prefix import load_prefix
from frostline.runtime.broker import Broker
from frostline.store import Store

SITE = "orchestrate/#0"


class Recording:
    """A store proxy that records which write methods the broker calls, and how."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.writes: list[str] = []
        self.commit_events: list[Any] = []

    def commit_call(self, call_id: int, slot: Any, **kwargs: Any) -> Any:
        self.writes.append("commit_call")
        self.commit_events.append(kwargs.get("event"))
        return self._inner.commit_call(call_id, slot, **kwargs)

    def append_event(self, *args: Any) -> int:
        self.writes.append("append_event")
        return self._inner.append_event(*args)

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        self.writes.append(f"append_events:{len(events)}")
        return self._inner.append_events(run_id, events)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _broker(store: Store, run_id: str, *, calls: int = 100, proxy: Any = None) -> Broker:
    if store.get_run(run_id) is None:
        store.create_run(run_id, _env(calls).to_dict())
    number = store.start_attempt(run_id, source="#", annotated="#", report={}).number
    return Broker(proxy or store, run_id, number, envelope=_env(calls),
                  providers=LocalProviders(), whitelist={SITE: "echo"},
                  prefix=load_prefix(store, run_id))


def _env(calls: int) -> Envelope:
    return Envelope(budget=Budget(usd=10.0, calls=calls), concurrency=8, max_fanout=64)


def _frame(broker: Broker, payload: dict[str, Any], path: list[int] | None = None
           ) -> dict[str, Any]:
    return {"type": "call", "nonce": broker.nonce, "site": SITE, "path": path or [],
            "capability": "echo", "payload": payload}


async def _sequential(broker: Broker, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    replies = [await broker.submit(_frame(broker, p)) for p in payloads]
    await broker.drain()
    return replies


def test_executed_event_is_written_in_the_commit(store: Store) -> None:
    proxy = Recording(store)
    broker = _broker(store, "aud-1", proxy=proxy)
    replies = asyncio.run(_sequential(broker, [{"n": 0}, {"n": 1}]))
    assert all(r["ok"] for r in replies)
    assert proxy.writes == ["commit_call", "commit_call"]  # no separate event write
    assert [e[0] for e in proxy.commit_events] == ["executed", "executed"]
    events = store.list_events("aud-1")
    assert [e.kind for e in events] == ["executed", "executed"]
    assert [e.data["identity"] for e in events] == [f"{SITE}@:0", f"{SITE}@:1"]
    assert events[0].data["attempt"] == broker.attempt
    assert events[0].data["digest"] == broker.stats.calls[0]["digest"]
