"""The audit trail on its own: events in the order they were queued, replays buffered until
the next event, a full batch, a flush or the drain, and nothing of it lost or reordered."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.runtime.audit import REPLAY_BATCH
from frostline.store import Store
from tests.runtime.attempt_parts import Parts


def test_buffered_replays_wait_for_the_next_event_and_go_before_it(store: Store) -> None:
    parts = Parts(store, "r")
    parts.trail.replay("orchestrate/#0@:0", "echo", "d0", committed_in=1)
    parts.trail.note("ledger", {"state": "a"})
    asyncio.run(parts.writes.settled(parts.writes.queued))
    assert parts.events() == [] and parts.trail.buffered()  # nothing queued yet

    parts.trail.event("denied", {"identity": "orchestrate/#0@:1"})
    parts.trail.replay("orchestrate/#0@:2", "echo", "d2", committed_in=1,
                       moved_from="orchestrate/#0@:9")
    asyncio.run(parts.settle_all())
    attempt = parts.attempt
    assert parts.events() == [
        ("replay", {"attempt": attempt, "identity": "orchestrate/#0@:0", "capability": "echo",
                    "digest": "d0", "committed_in": 1}),
        ("ledger", {"state": "a"}),  # a note is written as given
        ("denied", {"attempt": attempt, "identity": "orchestrate/#0@:1"}),
        ("replay", {"attempt": attempt, "identity": "orchestrate/#0@:2", "capability": "echo",
                    "digest": "d2", "committed_in": 1, "moved_from": "orchestrate/#0@:9"}),
    ]
    assert not parts.trail.buffered() and parts.stop.error is None


def test_a_full_batch_is_queued_at_once(store: Store) -> None:
    parts = Parts(store, "r")
    for n in range(REPLAY_BATCH + 3):
        parts.trail.note("tick", {"n": n})
    assert parts.writes.queued == 1  # the full batch, in one write
    asyncio.run(parts.writes.settled(parts.writes.queued))
    assert [d["n"] for _, d in parts.events()] == list(range(REPLAY_BATCH))
    asyncio.run(parts.settle_all())
    assert [d["n"] for _, d in parts.events()] == list(range(REPLAY_BATCH + 3))


def test_an_event_keeps_what_it_quotes_storable(store: Store) -> None:
    parts = Parts(store, "r")
    parts.trail.event("provider_error", {"message": "bad \x00 byte", "lone": "\ud800"})
    asyncio.run(parts.settle_all())
    ((kind, data),) = parts.events()
    assert kind == "provider_error" and data["message"] == "bad \ufffd byte"
    assert data["lone"] == "\ufffd"
    assert data["attempt"] == parts.attempt and parts.stop.error is None


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["replay", "note", "event", "flush"]), max_size=60))
def test_the_log_holds_every_event_in_the_order_it_was_queued(sqlite_store: Store,
                                                              ops: list[str]) -> None:
    """However replays, notes, events and flushes interleave, the log is exactly them, in
    order: a buffered event is never dropped, repeated, or overtaken."""
    parts = Parts(sqlite_store, f"r{uuid.uuid4().hex[:8]}")
    expected = []
    for n, op in enumerate(ops):
        if op == "replay":
            parts.trail.replay(f"orchestrate/#0@:{n}", "echo", f"d{n}", committed_in=1)
        elif op == "note":
            parts.trail.note("note", {"n": n})
        elif op == "event":
            parts.trail.event("event", {"n": n})
        else:
            parts.trail.flush()
            continue
        expected.append((op, n))
    asyncio.run(parts.settle_all())
    got = [(kind, data["n"] if "n" in data else int(data["identity"].rsplit(":", 1)[1]))
           for kind, data in parts.events()]
    assert got == expected and parts.stop.error is None
