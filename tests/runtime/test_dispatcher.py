"""Dispatch on its own, over a real store and a real provider: a call the rule let through is
recorded, executed and committed once; nothing is dispatched once the run has stopped, nor
while a write queued before its attempt record failed; a provider's rejection is a failed
call that the script may catch."""

from __future__ import annotations

import asyncio
from typing import Any

from frostline.contract.records import CallStatus
from frostline.errors import Divergence, StoreUnavailable
from frostline.providers.local import LocalProviders
from frostline.runtime.call import Call
from frostline.store import Store
from frostline.testing import FaultyStore
from tests.runtime.attempt_parts import Parts
from tests.runtime.helpers import Flaky


def _decided(parts: Parts, occurrence: int, payload: dict[str, Any]) -> Call:
    call = parts.call(occurrence, payload)
    assert parts.rule.decide(call, parts.env) is None
    return call


def test_a_dispatched_call_is_executed_and_committed_once(store: Store) -> None:
    parts = Parts(store, "r")
    call = _decided(parts, 0, {"n": 5})

    async def go() -> dict[str, Any]:
        reply = await parts.dispatcher.dispatch(call, parts.env.concurrency)
        await parts.settle_all()
        return reply

    assert asyncio.run(go()) == {"ok": True, "result": {"n": 5}}
    assert call.outcome == "executed"
    assert (parts.stats.executed, parts.stats.provider_calls) == (1, 1)
    (record,) = store.list_calls("r")
    assert record.status is CallStatus.COMMITTED and record.attempt == parts.attempt
    (slot,) = store.list_slots("r")
    assert (slot.identity, slot.result) == (call.identity, {"n": 5})
    assert [kind for kind, _ in parts.events()] == ["executed"]
    assert parts.stop.error is None


def test_nothing_is_dispatched_after_the_run_stopped(store: Store) -> None:
    parts = Parts(store, "r")
    call = _decided(parts, 0, {"n": 1})
    assert parts.spend.calls == 1
    parts.stop.stop(Divergence("stopped by an earlier call", identity="x"))
    reply = asyncio.run(parts.dispatcher.dispatch(call, parts.env.concurrency))
    assert reply["error"]["kind"] == "stop" and reply["error"]["type"] == "Divergence"
    assert call.outcome == "stopped" and parts.stats.provider_calls == 0
    assert parts.spend.calls == 0  # its claim was released
    assert store.list_calls("r") == []  # no attempt record either


class EventsFail(FaultyStore):
    """A real store whose audit events fail: every other write goes through."""

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        raise StoreUnavailable(f"events are down ({kind})")


def test_a_failed_write_queued_before_the_attempt_record_prevents_the_effect(
        store: Store) -> None:
    parts = Parts(EventsFail(store, fail_reads=False, fail_writes=False), "r")
    parts.trail.event("denied", {"identity": "orchestrate/#0@:9"})  # will fail to settle
    call = _decided(parts, 0, {"n": 1})
    reply = asyncio.run(parts.dispatcher.dispatch(call, parts.env.concurrency))
    assert reply["error"]["kind"] == "stop" and reply["error"]["type"] == "StoreUnavailable"
    assert call.outcome == "stopped" and parts.stats.provider_calls == 0
    asyncio.run(parts.settle_all())
    (record,) = store.list_calls("r")  # written, then marked failed: it never ran
    assert record.status is CallStatus.FAILED
    assert record.error is not None and record.error["code"] == "not_dispatched"


def test_a_provider_rejection_is_a_failed_call_the_script_may_catch(store: Store) -> None:
    parts = Parts(store, "r", providers=Flaky(LocalProviders()))
    call = _decided(parts, 0, {"fail": True})

    async def go() -> dict[str, Any]:
        reply = await parts.dispatcher.dispatch(call, parts.env.concurrency)
        await parts.settle_all()
        return reply

    reply = asyncio.run(go())
    assert reply["ok"] is False and reply["error"]["kind"] == "raise"
    assert call.outcome == "failed" and call.row["error"]["status"] == 400
    assert parts.stop.error is None and parts.stats.executed == 0
    (record,) = store.list_calls("r")
    assert record.status is CallStatus.FAILED
    assert [kind for kind, _ in parts.events()] == ["provider_error"]


def test_concurrent_dispatches_each_commit_their_own_slot(store: Store) -> None:
    parts = Parts(store, "r")
    calls = [_decided(parts, n, {"n": n}) for n in range(12)]

    async def go() -> list[dict[str, Any]]:
        replies = await asyncio.gather(*(parts.dispatcher.dispatch(c, 3) for c in calls))
        await parts.settle_all()
        return list(replies)

    assert [r["result"] for r in asyncio.run(go())] == [{"n": n} for n in range(12)]
    assert sorted(s.occurrence for s in store.list_slots("r")) == list(range(12))
    assert parts.stats.executed == parts.stats.provider_calls == 12
