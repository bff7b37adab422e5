"""Write settlement on its own: waited writes, settled writes checked once in queue order,
and a settled write that fails stops the run (or, fail-open, is only logged)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from frostline.capabilities.envelope import Envelope
from frostline.contract.identity import digest
from frostline.contract.records import CallStatus, SlotRecord
from frostline.errors import FrostlineError, StoreUnavailable
from frostline.runtime.settlement import Settlement
from frostline.store import Store
from frostline.store.writes import AppendEvent, BeginCall, CommitCall
from frostline.testing import FaultyStore
from tests.runtime.attempt_parts import ident


def _attempt(store: Store, run_id: str = "r") -> int:
    store.create_run(run_id, Envelope().to_dict())
    return store.start_attempt(run_id, source="#", annotated="#", report={}).number


def test_a_waited_write_is_durable_when_it_returns(store: Store) -> None:
    attempt = _attempt(store)
    stops: list[FrostlineError] = []
    writes = Settlement(store, "r", stops.append)
    call_id = asyncio.run(writes.write(BeginCall("r", attempt, ident(0), "echo",
                                                 digest({"n": 1}), None)))
    (pending,) = store.list_calls("r")
    assert pending.call_id == call_id and pending.status is CallStatus.PENDING
    assert stops == [] and writes.queued == 0  # a waited write is not a settled one


def test_settled_writes_are_checked_once_each_in_queue_order(store: Store) -> None:
    _attempt(store)
    stops: list[FrostlineError] = []
    writes = Settlement(store, "r", stops.append)
    checked: list[tuple[int, Any]] = []
    for n in range(5):
        writes.settle(lambda exc, value, n=n: checked.append((n, exc)), AppendEvent("r", "note", {"n": n}))
    assert writes.queued == 5 and writes.pending()

    async def settle() -> None:
        await writes.settled(2)  # only those numbered up to 2
        assert [n for n, _ in checked] == [0, 1] and writes.pending()
        await writes.settled(writes.queued)
        await writes.settled(writes.queued)  # nothing is checked twice

    asyncio.run(settle())
    assert checked == [(n, None) for n in range(5)] and not writes.pending()
    assert [e.data["n"] for e in store.list_events("r")] == [0, 1, 2, 3, 4]
    assert stops == []


def test_a_commit_settles_exactly_once(store: Store) -> None:
    attempt = _attempt(store)
    writes = Settlement(store, "r", lambda err: None)
    h = digest({"n": 1})
    committed: list[Any] = []

    async def go() -> None:
        call_id = await writes.write(BeginCall("r", attempt, ident(0), "echo", h, None))
        slot = SlotRecord("r", ident(0).site, (), 0, "echo", h, {"n": 1}, {}, attempt)
        writes.settle(lambda exc, stored: committed.append((exc, stored)),
                      CommitCall(call_id, slot))
        await asyncio.gather(writes.settled(writes.queued), writes.settled(writes.queued))

    asyncio.run(go())
    ((exc, stored),) = committed
    assert exc is None and stored.result == {"n": 1}
    assert [c.status for c in store.list_calls("r")] == [CallStatus.COMMITTED]
    assert len(store.list_slots("r")) == 1


def test_a_settled_write_that_fails_stops_the_run(store: Store) -> None:
    _attempt(store)
    faulty = FaultyStore(store, fail_reads=False, fail_writes=True)
    stops: list[FrostlineError] = []
    writes = Settlement(faulty, "r", stops.append)
    writes.settle(writes.stops_on_failure("event denied"), AppendEvent("r", "denied", {}))
    asyncio.run(writes.settled(writes.queued))
    (stop,) = stops
    assert isinstance(stop, StoreUnavailable) and "during append_event" in stop.message
    assert store.list_events("r") == []


def test_a_waited_write_that_fails_raises_store_unavailable(store: Store) -> None:
    attempt = _attempt(store)
    writes = Settlement(FaultyStore(store, fail_reads=False), "r", lambda err: None)
    with pytest.raises(StoreUnavailable, match="begin_call"):
        asyncio.run(writes.write(BeginCall("r", attempt, ident(0), "echo",
                                           digest({}), None)))


def test_fail_open_logs_a_failed_settlement_instead_of_stopping(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    _attempt(store)
    stops: list[FrostlineError] = []
    writes = Settlement(FaultyStore(store, fail_reads=False), "r", stops.append,
                        fail_open=True)
    writes.settle(writes.stops_on_failure("fail_call"), AppendEvent("r", "x", {}))
    with caplog.at_level(logging.ERROR, logger="frostline.broker"):
        asyncio.run(writes.settled(writes.queued))
    assert stops == []
    assert "FAIL-OPEN: could not record fail_call for run r" in caplog.text
