"""The workflow ledger: an append-only record of everything the control plane did.

Every state entry, gate evaluation, tool-boundary event, invalidation, edge traversal and
model-call budget draw is one `LedgerEvent`, numbered in order. Events fan out to sinks: an
in-memory list, a store (``store.append_event(run_id, "graph.<kind>", data)``), or a callback
(the CLI prints as the run goes). There is no API that edits or removes an event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

KINDS = frozenset({
    "run_started",        # graph name, budgets
    "state_entered",      # state, visit, the digests of its inputs
    "model_call",         # one budget draw of the state's L slot
    "output_rejected",    # a malformed output (re-requested while the bound allows)
    "tool_call",          # a permitted call, routed; identity (state, visit, ordinal)
    "illegal_tool",       # an off-list call: recorded, never routed
    "illegal_transition", # an attempt to name or traverse an edge: never honored
    "artifact",           # an emitted artifact version (changed or identical)
    "invalidation",       # the downstream an artifact change made STALE
    "state_failed",       # the visit emitted no valid output
    "gate",               # one edge considered: its gate evaluation, budget, blocking inputs
    "edge",               # the edge taken and the budget it drew
    "stuck",              # no edge enabled (a checked graph never gets here)
    "step_limit",         # the engine's safety valve (a checked graph never gets here)
    "terminal",           # the run reached a sink
})


@dataclass(frozen=True)
class LedgerEvent:
    seq: int
    run_id: str
    kind: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "run_id": self.run_id, "kind": self.kind, "data": self.data}


class LedgerSink(Protocol):
    def write(self, event: LedgerEvent) -> None: ...


class EventStore(Protocol):
    """The part of `frostline.store.base.Store` a ledger needs."""

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int: ...


class MemorySink:
    """Keeps events in a list (tests, the A/B driver)."""

    def __init__(self) -> None:
        self.events: list[LedgerEvent] = []

    def write(self, event: LedgerEvent) -> None:
        self.events.append(event)


class EventLogSink:
    """Appends each event to a run's event log as kind ``graph.<kind>``."""

    def __init__(self, store: EventStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def write(self, event: LedgerEvent) -> None:
        self.store.append_event(self.run_id, f"graph.{event.kind}", dict(event.data, seq=event.seq))


class CallbackSink:
    def __init__(self, fn: Callable[[LedgerEvent], None]) -> None:
        self.fn = fn

    def write(self, event: LedgerEvent) -> None:
        self.fn(event)


class WorkflowLedger:
    """Append-only; `append` validates the kind and that the data is JSON.

    Example: ``ledger = WorkflowLedger("run-1", [MemorySink()]); ledger.append("terminal", {...})``
    """

    def __init__(self, run_id: str, sinks: Iterable[LedgerSink] = ()) -> None:
        self.run_id = run_id
        self.sinks = list(sinks)
        self._events: list[LedgerEvent] = []

    def append(self, kind: str, data: dict[str, Any]) -> LedgerEvent:
        if kind not in KINDS:
            raise ValueError(f"unknown ledger event kind {kind!r}; kinds are {sorted(KINDS)}")
        # Round-trip through JSON: a store sink persists JSON, so the memory copy must match it.
        payload = json.loads(json.dumps(data, sort_keys=True, allow_nan=False))
        event = LedgerEvent(len(self._events) + 1, self.run_id, kind, payload)
        self._events.append(event)
        for sink in self.sinks:
            sink.write(event)
        return event

    @property
    def events(self) -> tuple[LedgerEvent, ...]:
        return tuple(self._events)

    def of_kind(self, *kinds: str) -> list[LedgerEvent]:
        return [e for e in self._events if e.kind in kinds]
