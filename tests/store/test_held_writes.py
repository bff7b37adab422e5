"""Held writes: a write the runtime settles rather than waits for (a commit, a failed-call mark,
an audit event) waits briefly for the next write, so a sequential call's commit shares the
transaction of the next call's attempt record — one durable transaction per call, not two.
Waiting for a held write ends the hold at once; closing the store commits what is held; and
nothing about queue order or per-write outcomes changes. Runs on both store backends."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from frostline.contract.identity import digest
from frostline.errors import FrostlineError
from frostline.store import Store, groupcommit, open_store
from frostline.store.writes import WRITES, AppendEvent, AppendEvents, CommitCall

from .helpers import CAP, eventually, ident, slot_for


def transactions(store: Any) -> int:
    return int(store.group_commit_stats[0])


def test_a_commit_shares_the_transaction_of_the_next_attempt_record(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)  # however slow this machine is
    store.create_run("r1", {})
    call_id = store.begin_call("r1", 1, ident(0), CAP, digest({"x": 0}))
    before = transactions(store)
    for n in range(1, 21):  # what a sequential script does: commit, then the next record
        committed = store.submit(CommitCall(call_id,
                                       slot_for("r1", ident(n - 1), {"x": n - 1}, {"n": n - 1}),
                                       event=("executed", {"n": n - 1})))
        # Meanwhile the caller waits on I/O (a sandboxed script's next frame): the writer
        # thread is free to run, and it holds the commit rather than committing it alone.
        assert store.get_run("r1") is not None
        call_id = store.begin_call("r1", 1, ident(n), CAP, digest({"x": n}))
        assert committed.done()  # queued before the record: durable when the record is
        assert committed.result().result == {"n": n - 1}
    assert transactions(store) - before == 20  # one transaction per call, commit included
    assert [e.data["n"] for e in store.list_events("r1")] == list(range(20))


def test_waiting_for_a_held_write_ends_the_hold(store_url: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)  # only a waiter can end it
    with open_store(store_url) as store:
        store.create_run("r1", {})
        held = store.submit(AppendEvent("r1", "note", {"i": 0}))
        assert held.result(timeout=60) > 0  # a blocking wait
        also = store.submit(AppendEvents("r1", [("a", {}), ("b", {})]))

        async def settle() -> Any:  # how the broker waits: through asyncio
            return await asyncio.wrap_future(also)

        assert len(asyncio.run(asyncio.wait_for(settle(), 60))) == 2
        assert [e.kind for e in store.list_events("r1")] == ["note", "a", "b"]


def test_a_held_write_nobody_waits_for_becomes_durable_by_itself(store: Store) -> None:
    store.create_run("r1", {})
    held = store.submit(AppendEvent("r1", "note", {"i": 0}))
    with open_store(store.url) as other:  # another connection sees it once it is durable
        eventually(lambda: [e.kind for e in other.list_events("r1")] == ["note"],
                   what="the held event to be committed")
    assert held.done() and held.result() > 0


def test_closing_the_store_commits_what_is_held(store_url: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groupcommit, "HOLD_S", 3600.0)
    with open_store(store_url) as store:
        store.create_run("r1", {})
        held = [store.submit(AppendEvent("r1", "note", {"i": i})) for i in range(3)]
    assert all(f.done() for f in held)
    with open_store(store_url) as store:
        assert [e.data["i"] for e in store.list_events("r1")] == [0, 1, 2]


def test_a_held_write_that_fails_fails_alone(store: Store) -> None:
    store.create_run("r1", {})
    call_id = store.begin_call("r1", 1, ident(0), CAP, digest({"x": 0}))
    store.fail_call(call_id, {"code": "provider"})
    refused = store.submit(CommitCall(call_id,
                                 slot_for("r1", ident(0), {"x": 0}, {"ok": True})))
    nxt = store.begin_call("r1", 1, ident(1), CAP, digest({"x": 1}))  # shares its batch
    with pytest.raises(FrostlineError, match="recorded as failed"):
        refused.result(timeout=30)
    assert nxt > call_id
    assert [c.identity for c in store.unresolved_calls("r1")] == [ident(1)]


def test_only_settled_writes_are_held() -> None:
    held = {w.operation for w in WRITES if w.held}
    assert held == {"commit_call", "fail_call", "append_event", "append_events"}
    # The attempt record precedes an effect, a race decision is read at once, and an
    # attempt's end is waited for: never held.
    assert {w.operation for w in WRITES if not w.held} == {
        "begin_call", "decide", "put_certificate", "finish_attempt", "set_run_status"}
