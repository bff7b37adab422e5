"""The workflow ledger: append-only, fanned out to memory and to a real store."""

from __future__ import annotations

import os

import pytest
from graph_helpers import run_canonical

from frostline.graph.ledger import KINDS, CallbackSink, EventLogSink, MemorySink, WorkflowLedger
from frostline.store import open_store


def test_ledger_is_append_only_and_numbered():
    sink = MemorySink()
    ledger = WorkflowLedger("r1", [sink])
    ledger.append("run_started", {"graph": "g"})
    ledger.append("terminal", {"state": "TERMINAL_ACCEPT"})
    assert [e.seq for e in ledger.events] == [1, 2]
    assert isinstance(ledger.events, tuple)  # a snapshot: no handle to edit the record
    assert sink.events == list(ledger.events)
    assert not hasattr(ledger, "remove") and not hasattr(ledger, "clear")
    with pytest.raises(ValueError):
        ledger.append("whatever", {})
    with pytest.raises(ValueError):
        ledger.append("gate", {"x": float("nan")})  # only JSON reaches a sink


def test_a_run_records_every_kind_of_control_decision(forbidden_model):
    result = run_canonical({"TEST": [{"failed": 1}], "REVIEW": [{"verified_defects": 1}]},
                           model=forbidden_model)
    kinds = {e.kind for e in result.ledger.events}
    for needed in ("run_started", "state_entered", "gate", "artifact", "invalidation", "edge", "terminal"):
        assert needed in kinds
    assert kinds <= KINDS
    gates = [e for e in result.ledger.events if e.kind == "gate"]
    assert all("gate" in e.data and "budget_ok" in e.data for e in gates)
    retry = next(e for e in result.ledger.of_kind("edge") if e.data["kind"] == "retry")
    assert retry.data["budget_drawn"] == "retry" and retry.data["budget"]["retry_used"] == 1


def test_callback_sink_sees_events_as_they_happen():
    seen = []
    ledger = WorkflowLedger("r", [CallbackSink(lambda e: seen.append(e.kind))])
    ledger.append("state_entered", {"state": "INIT"})
    assert seen == ["state_entered"]


def test_store_backed_ledger_writes_graph_events(store_url, tmp_path, forbidden_model):
    # store_url: a fresh SQLite file, and a fresh PostgreSQL schema (never the shared public one)
    backend = store_url.partition(":")[0]
    for store in (open_store(store_url),):
        with store:
            run_id = f"graph-ledger-{backend}-{os.getpid()}-{tmp_path.name}"
            store.create_run(run_id, {}, kind="graph")
            result = run_canonical({"REVIEW": [{"verified_defects": 1}]}, model=forbidden_model,
                                   sinks=[EventLogSink(store, run_id)], run_id=run_id)
            stored = store.list_events(run_id)
            graph_events = [e for e in stored if e.kind.startswith("graph.")]
            assert [e.kind for e in graph_events] == [f"graph.{e.kind}" for e in result.ledger.events]
            assert [e.data["seq"] for e in graph_events] == [e.seq for e in result.ledger.events]
            rollback = next(e for e in graph_events if e.kind == "graph.edge" and e.data["kind"] == "rollback")
            assert (rollback.data["from"], rollback.data["to"]) == ("REVIEW", "REPAIR")
            last = graph_events[-1]
            assert last.kind == "graph.terminal" and last.data["state"] == "TERMINAL_ACCEPT"
