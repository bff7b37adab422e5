"""What one graph run did, read back from its ledger: the path, visits per state, the edges
taken, each artifact's latest version and freshness, and the termination.

A durable run's ledger lives in the store's event log as ``graph.<kind>`` events tagged with
their attempt. Every attempt replays the graph from its initial state (committed tool calls
come back from the store), so the latest attempt's ledger tells the whole run; earlier
attempts are kept for the record and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from frostline.graph.graph import Graph
from frostline.graph.records import Freshness

LEDGER_PREFIX = "graph."


@dataclass
class RunTrace:
    """The ledger of one attempt, folded into what a reader of the run wants to see."""

    path: list[str] = field(default_factory=list)
    visits: Counter[str] = field(default_factory=Counter)
    edges: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    ledger: list[dict[str, Any]] = field(default_factory=list)
    terminal: dict[str, Any] | None = None
    illegal: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "visits": dict(self.visits),
            "edges": [{"from": f, "to": t, "kind": k, "taken": n}
                      for (f, t, k), n in sorted(self.edges.items())],
            "artifacts": [dict(v, artifact=k) for k, v in sorted(self.artifacts.items())],
            "terminal": self.terminal,
            "illegal_actions": self.illegal,
            "ledger": self.ledger,
        }


def ledger_events(events: Iterable[Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """(attempt, kind, data) of every ledger event in a run's event log, in log order."""
    out = []
    for e in events:
        if e.kind.startswith(LEDGER_PREFIX):
            data = dict(e.data)
            out.append((int(data.get("attempt", 0)), e.kind[len(LEDGER_PREFIX):], data))
    return out


def trace_attempt(events: Iterable[tuple[int, str, dict[str, Any]]], attempt: int) -> RunTrace:
    """Fold the ledger events of `attempt` into a RunTrace."""
    trace = RunTrace()
    for number, kind, data in events:
        if number != attempt:
            continue
        trace.ledger.append({"seq": data.get("seq"), "kind": kind, "data": data})
        _fold(trace, kind, data)
    return trace


def _fold(trace: RunTrace, kind: str, data: Mapping[str, Any]) -> None:
    if kind == "state_entered":
        state = str(data.get("state", ""))
        trace.path.append(state)
        trace.visits[state] += 1
    elif kind == "edge":
        trace.edges[(str(data.get("from")), str(data.get("to")), str(data.get("kind")))] += 1
    elif kind == "artifact":
        name = str(data.get("artifact", ""))
        trace.artifacts[name] = {"version": data.get("version"), "digest": data.get("digest"),
                                 "produced_by": data.get("produced_by"),
                                 "freshness": Freshness.VALID.value}
    elif kind == "invalidation":
        for name in data.get("stale", ()):
            if name in trace.artifacts:
                trace.artifacts[str(name)]["freshness"] = Freshness.STALE.value
    elif kind in ("illegal_tool", "illegal_transition"):
        trace.illegal += 1
    elif kind == "terminal":
        trace.terminal = {"state": data.get("state"), "status": data.get("status"),
                          "reason": data.get("reason")}


def run_trace(graph: Graph, events: Iterable[Any], attempts: int) -> dict[str, Any]:
    """The JSON view of a graph run: its graph, the latest attempt's trace, and per attempt
    how many ledger events it wrote. `events` is the run's event log."""
    folded = ledger_events(events)
    per_attempt = Counter(n for n, _, _ in folded)
    latest = max(per_attempt) if per_attempt else attempts
    trace = trace_attempt(folded, latest)
    unknown = sorted(set(trace.visits) - set(graph.states))
    return {"graph": graph.name, "states": list(graph.states), "attempt": latest,
            "ledger_events_per_attempt": {str(k): v for k, v in sorted(per_attempt.items())},
            "unknown_states": unknown, **trace.to_dict()}


__all__ = ["LEDGER_PREFIX", "RunTrace", "ledger_events", "run_trace", "trace_attempt"]
