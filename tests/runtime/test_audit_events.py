"""The broker's audit trail: executions audited in their commit, replays batched in order.

An `executed` event is written in the transaction of its call's commit (no transaction of its
own); `replay` events are buffered and written in batches, yet every replay is audited, in
invocation order, before any later event.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any

from frostline.capabilities.envelope import Budget, Envelope
from frostline.contract.prefix import load_prefix
from frostline.errors import StoreUnavailable
from frostline.providers.local import LocalProviders
from frostline.runtime.broker import REPLAY_BATCH, Broker
from frostline.store import Store
from frostline.store.writes import AppendEvent, AppendEvents, CommitCall, Write
from frostline.testing import FaultyStore

SITE = "orchestrate/#0"


class Recording:
    """A store proxy that records which writes the broker queues, and how."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.writes: list[str] = []
        self.commit_events: list[Any] = []

    def submit(self, write: Write[Any]) -> Future[Any]:
        if isinstance(write, CommitCall):
            self.writes.append("commit_call")
            self.commit_events.append(write.event)
        elif isinstance(write, AppendEvents):
            self.writes.append(f"append_events:{len(write.events)}")
        elif isinstance(write, AppendEvent):
            self.writes.append("append_event")
        return self._inner.submit(write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _broker(store: Store, run_id: str, *, calls: int = 100, proxy: Any = None) -> Broker:
    if store.get_run(run_id) is None:
        store.create_run(run_id, _env(calls).to_dict())
    number = store.start_attempt(run_id, source="#", annotated="#", report={}).number
    return Broker(proxy or store, run_id, number, envelope=_env(calls),
                  providers=LocalProviders(), allowlist={SITE: "echo"},
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


def test_mixed_replay_and_execute_audits_everything_in_order(store: Store) -> None:
    first = _broker(store, "aud-2", calls=400)
    asyncio.run(_sequential(first, [{"n": i} for i in range(300)]))
    before = len(store.list_events("aud-2"))

    proxy = Recording(store)
    second = _broker(store, "aud-2", calls=400, proxy=proxy)
    # 300 replays, then 5 new executions on the same path.
    replies = asyncio.run(_sequential(second, [{"n": i} for i in range(305)]))
    assert all(r["ok"] for r in replies)
    assert (second.stats.replayed, second.stats.executed) == (300, 5)
    events = store.list_events("aud-2")[before:]
    assert [e.kind for e in events] == ["replay"] * 300 + ["executed"] * 5
    assert [e.data["identity"] for e in events] == [f"{SITE}@:{i}" for i in range(305)]
    assert all(e.data["attempt"] == second.attempt for e in events)
    # Replays were written in batches (not one write each), and before the first commit.
    batches = [w for w in proxy.writes if w.startswith("append_events")]
    assert "append_event" not in proxy.writes
    assert sum(int(w.split(":")[1]) for w in batches) == 300
    assert 1 <= len(batches) <= 300 // REPLAY_BATCH + 1
    assert proxy.writes.index("commit_call") > proxy.writes.index(batches[-1])


def test_replays_are_audited_when_the_attempt_stops(store: Store) -> None:
    first = _broker(store, "aud-3")
    asyncio.run(_sequential(first, [{"n": i} for i in range(10)]))
    before = len(store.list_events("aud-3"))

    second = _broker(store, "aud-3")
    # Three replays, then a divergence at occurrence 3 (another payload): the run stops.
    replies = asyncio.run(_sequential(second, [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 99}]))
    assert [r["ok"] for r in replies] == [True, True, True, False]
    assert second.stop_error is not None
    events = store.list_events("aud-3")[before:]
    assert [e.kind for e in events] == ["replay", "replay", "replay", "divergence"]
    assert [e.data["identity"] for e in events[:3]] == [f"{SITE}@:{i}" for i in range(3)]


def test_replays_of_an_attempt_that_only_replays_are_flushed_by_drain(store: Store) -> None:
    first = _broker(store, "aud-4")
    asyncio.run(_sequential(first, [{"n": i} for i in range(7)]))
    before = len(store.list_events("aud-4"))
    second = _broker(store, "aud-4")

    async def go() -> None:
        for i in range(7):
            assert (await second.submit(_frame(second, {"n": i})))["ok"]
        # Nothing forced a flush yet: the buffer waits for drain().
        assert len(store.list_events("aud-4")) == before
        await second.drain()

    asyncio.run(go())
    events = store.list_events("aud-4")[before:]
    assert [e.kind for e in events] == ["replay"] * 7
    assert [e.data["identity"] for e in events] == [f"{SITE}@:{i}" for i in range(7)]


def test_a_replay_batch_that_cannot_be_written_stops_the_run(store: Store) -> None:
    first = _broker(store, "aud-5")
    asyncio.run(_sequential(first, [{"n": i} for i in range(3)]))
    before = len(store.list_events("aud-5"))
    faulty = FaultyStore(store, fail_reads=False, fail_writes=True)
    second = _broker(store, "aud-5", proxy=faulty)
    replies = asyncio.run(_sequential(second, [{"n": i} for i in range(3)]))
    assert all(r["ok"] for r in replies)  # replies do not wait for the audit write...
    assert isinstance(second.stop_error, StoreUnavailable)  # ...but drain() fails closed
    assert len(store.list_events("aud-5")) == before
    # Later calls are refused before any effect.
    third = asyncio.run(_sequential(second, [{"n": 3}]))
    assert third[0]["ok"] is False and third[0]["error"]["kind"] == "stop"


def test_replay_hits_skip_the_schema_check_and_nothing_else_does(store: Store) -> None:
    first = _broker(store, "aud-6")
    asyncio.run(_sequential(first, [{"n": i} for i in range(4)]))
    second = _broker(store, "aud-6")
    checked: list[str] = []
    original = second._rule._schema_problem

    def counting(capability: str, schema: Any, payload: dict[str, Any]) -> str | None:
        checked.append(capability)
        return original(capability, schema, payload)

    second._rule._schema_problem = counting  # type: ignore[method-assign]
    replies = asyncio.run(_sequential(second, [{"n": i} for i in range(4)]))
    assert all(r["ok"] for r in replies) and second.stats.replayed == 4
    assert checked == []  # the committed payloads were validated when they executed
    # A new call is validated; so is a changed payload at a committed identity.
    third = _broker(store, "aud-6")
    third._rule._schema_problem = counting  # type: ignore[method-assign]
    replies = asyncio.run(_sequential(third, [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]))
    assert checked == ["echo"] and third.stats.executed == 1
    fourth = _broker(store, "aud-6")
    fourth._rule._schema_problem = counting  # type: ignore[method-assign]
    replies = asyncio.run(_sequential(fourth, [{"n": 100}]))
    assert checked == ["echo", "echo"] and replies[0]["error"]["code"] == "divergence"


def test_a_non_json_payload_at_a_committed_identity_is_invalid_not_a_divergence(
        store: Store) -> None:
    first = _broker(store, "aud-7")
    asyncio.run(_sequential(first, [{"n": 0}]))
    second = _broker(store, "aud-7")
    replies = asyncio.run(_sequential(second, [{"n": float("nan")}]))
    assert replies[0]["ok"] is False
    assert replies[0]["error"]["kind"] == "raise"  # catchable, nothing stopped
    assert second.stop_error is None and second.stats.divergences == []


def test_a_replay_is_answered_at_admission(store: Store) -> None:
    first = _broker(store, "aud-8")
    asyncio.run(_sequential(first, [{"n": 0}]))
    second = _broker(store, "aud-8")

    async def go() -> None:
        hit = second.submit(_frame(second, {"n": 0}))
        assert hit.done() and hit.result() == {"ok": True, "result": {"n": 0}}
        new = second.submit(_frame(second, {"n": 1}))  # not committed: a host task
        assert not new.done()
        assert (await new)["ok"]
        await second.drain()

    asyncio.run(go())
    assert (second.stats.replayed, second.stats.executed) == (1, 1)
    assert [r["outcome"] for r in second.stats.calls] == ["replayed", "executed"]
    assert [e.kind for e in store.list_events("aud-8")][-2:] == ["replay", "executed"]
