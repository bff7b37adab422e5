"""Folding a graph run's ledger back into its path, visits, edges and artifact freshness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from frostline.graph.shipped import canonical_graph
from frostline.graph.trace import ledger_events, run_trace, trace_attempt


@dataclass
class Ev:
    kind: str
    data: dict[str, Any]


def test_an_invalidation_marks_artifacts_stale_until_recomputed():
    events = [(1, "artifact", {"artifact": "Plan", "version": 1, "digest": "a"}),
              (1, "artifact", {"artifact": "Patch", "version": 1, "digest": "b"}),
              (1, "invalidation", {"changed": "Diagnosis", "stale": ["Plan", "Patch"]}),
              (1, "artifact", {"artifact": "Plan", "version": 2, "digest": "c"})]
    arts = trace_attempt(events, 1).artifacts
    assert arts["Plan"]["freshness"] == "VALID" and arts["Plan"]["version"] == 2
    assert arts["Patch"]["freshness"] == "STALE"


def test_only_the_latest_attempt_is_folded_and_other_events_are_ignored():
    log = [Ev("attempt_started", {"attempt": 1}),
           Ev("graph.state_entered", {"state": "INIT", "attempt": 1, "seq": 1}),
           Ev("graph.illegal_tool", {"attempt": 1, "seq": 2}),
           Ev("graph.state_entered", {"state": "INIT", "attempt": 2, "seq": 1}),
           Ev("graph.edge", {"from": "INIT", "to": "RECONNAISSANCE", "kind": "forward",
                             "attempt": 2, "seq": 2})]
    view = run_trace(canonical_graph(), log, 2)
    assert view["attempt"] == 2 and view["path"] == ["INIT"] and view["illegal_actions"] == 0
    assert view["ledger_events_per_attempt"] == {"1": 2, "2": 2}
    assert len(ledger_events(log)) == 4


STATES = st.sampled_from(["INIT", "LOCALIZE", "EDIT", "TEST", "REPAIR"])


@given(st.lists(st.tuples(st.sampled_from(["state_entered", "edge", "illegal_tool"]), STATES,
                          STATES), max_size=60))
def test_counts_add_up(seq):
    events = []
    for kind, a, b in seq:
        data = {"state": a} if kind == "state_entered" else {"from": a, "to": b, "kind": "forward"}
        events.append((1, kind, data))
    trace = trace_attempt(events, 1)
    assert sum(trace.visits.values()) == len(trace.path) == sum(k == "state_entered" for k, _, _ in seq)
    assert sum(trace.edges.values()) == sum(k == "edge" for k, _, _ in seq)
    assert trace.illegal == sum(k == "illegal_tool" for k, _, _ in seq)
    assert len(trace.ledger) == len(seq)
