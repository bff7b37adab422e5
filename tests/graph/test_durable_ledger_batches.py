"""Issue 12: a durable graph run writes its ledger in batches, not an append per event.

The events go to the store in order, one transaction per batch, and a batch is durable before
anything acts on it: before the next tool's effect (it is queued ahead of the call's attempt
record), before a model call (its `model_call` event is made durable at once), and before the
attempt's outcome is recorded. A batch or a commit that cannot be written stops the run. Runs on
both store backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from durable_bodies import CALLS, LOG_ENV, executions, tools, with_calls
from graph_helpers import HAPPY, ScriptedModel

from frostline.contract.identity import Identity
from frostline.errors import StoreUnavailable
from frostline.graph.durable import GraphTool, run_durable, tool_identity
from frostline.graph.engine import model_body
from frostline.graph.graph import load_graph
from frostline.graph.slot import SlotRequest
from frostline.store import CallStatus, Store, open_store
from frostline.testing import FaultyStore

TOOL_CALLS = sum(len(c) for c in CALLS.values())


@pytest.fixture(autouse=True)
def tool_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tools.jsonl"
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


def graph_events(store: Store, run_id: str) -> list[Any]:
    return [e for e in store.list_events(run_id) if e.kind.startswith("graph.")]


def test_the_ledger_is_stored_whole_and_in_order_in_few_transactions(store: Store) -> None:
    before = store.group_commit_stats[0]  # type: ignore[attr-defined]
    out = run_durable(store, "g1", load_graph("canonical"), with_calls(CALLS), tools())
    transactions = store.group_commit_stats[0] - before  # type: ignore[attr-defined]
    assert out.status == "accepted" and out.result is not None
    ledger = out.result.ledger.events
    stored = graph_events(store, "g1")
    assert [(e.kind, e.data) for e in stored] == [
        (f"graph.{e.kind}", dict(e.data, seq=e.seq, attempt=1)) for e in ledger]
    kinds = [e.kind for e in store.list_events("g1")]
    assert kinds[0] == "attempt_started" and kinds[-1] == "attempt_finished"
    # Each execution's audit event follows its tool_call event and precedes the next one.
    order = [e.kind for e in store.list_events("g1") if e.kind in ("graph.tool_call", "executed")]
    assert order == ["graph.tool_call", "executed"] * TOOL_CALLS
    # Batches, not an append per event: at most a commit and an attempt record per tool call,
    # plus the attempt's own bookkeeping — far fewer transactions than events.
    assert len(ledger) > 60
    assert transactions <= 2 * TOOL_CALLS + 8

    resumed_before = store.group_commit_stats[0]  # type: ignore[attr-defined]
    again = run_durable(store, "g1", load_graph("canonical"), with_calls(CALLS), tools())
    assert (again.status, again.executed, again.replayed) == ("accepted", 0, TOOL_CALLS)
    # A resume writes its attempt, one batch of events, and its end (certificate, attempt
    # record, run status and event together): three transactions.
    assert store.group_commit_stats[0] - resumed_before <= 4  # type: ignore[attr-defined]
    second = [e for e in graph_events(store, "g1") if e.data["attempt"] == 2]
    assert [e.data["seq"] for e in second] == [e.seq for e in again.result.ledger.events]


def test_every_event_before_a_tools_effect_is_durable_when_it_happens(store_url: str) -> None:
    """Each tool looks at the store through connections of its own as it runs."""
    seen: list[tuple[Identity, int, int]] = []

    with open_store(store_url) as store, open_store(store_url) as observer:
        def watching(name: str, fn: Any) -> GraphTool:
            def run(payload: Any, ctx: Any) -> Any:
                stored = graph_events(observer, "g1")
                calls = [e for e in stored if e.kind == "graph.tool_call"]
                last = calls[-1].data
                seen.append((tool_identity(last["state"], last["visit"], last["ordinal"]),
                             len(stored), stored[-1].data["seq"]))
                return fn(payload)
            return GraphTool(run, side_effecting=True)

        registry = {n: watching(n, t.fn if isinstance(t, GraphTool) else t)
                    for n, t in tools().items()}
        out = run_durable(store, "g1", load_graph("canonical"), with_calls(CALLS), registry)
        assert out.status == "accepted"
        ledger = out.result.ledger.events
    expected = [tool_identity(s, 0, i) for s, calls in CALLS.items() for i in range(len(calls))]
    assert [identity for identity, _, _ in seen] == expected
    for identity, count, last_seq in seen:
        # The tool's own tool_call event is the last one durable, and nothing before it is
        # missing: the whole ledger up to the call was written before the call's effect.
        call_event = next(e for e in ledger if e.kind == "tool_call"
                          and tool_identity(e.data["state"], e.data["visit"],
                                            e.data["ordinal"]) == identity)
        assert count == last_seq == call_event.seq


def test_a_model_call_event_is_durable_before_the_model_is_called(store_url: str) -> None:
    durable_draws: list[int] = []
    with open_store(store_url) as store, open_store(store_url) as observer:
        class Watching(ScriptedModel):
            def complete(self, request: SlotRequest) -> Any:
                draws = [e for e in graph_events(observer, "g1") if e.kind == "graph.model_call"]
                durable_draws.append(len(draws))
                return super().complete(request)

        model = Watching({"LOCALIZE": [{"output": {"nope": 1}}, {"output": HAPPY["LOCALIZE"]}]})
        bodies = with_calls(CALLS)
        bodies["LOCALIZE"] = model_body
        out = run_durable(store, "g1", load_graph("canonical"), bodies, tools(), model=model)
        assert out.status == "accepted", out.error
    assert durable_draws == [1, 2]  # each draw on the record before its call


class FailingBatch(FaultyStore):
    """Fails the event batch that holds a given ledger event, or the commit of a given call,
    the way a lost database would; every other write goes through."""

    def __init__(self, inner: Store, *, event: tuple[str, str] | None = None,
                 commit: Identity | None = None) -> None:
        super().__init__(inner, fail_reads=False, fail_writes=False)
        self.event, self.commit = event, commit

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        if any((kind, data.get("state")) == self.event for kind, data in events):
            raise StoreUnavailable("injected: the batch did not commit", backend="faulty",
                                   operation="append_events")
        return super().append_events(run_id, events)

    def commit_call(self, call_id: int, slot: Any, **kwargs: Any) -> Any:
        if slot.identity == self.commit:
            raise StoreUnavailable("injected: the commit did not commit", backend="faulty",
                                   operation="commit_call")
        return super().commit_call(call_id, slot, **kwargs)


def test_a_ledger_batch_that_fails_stops_the_run_before_the_next_effect(store: Store) -> None:
    faulty = FailingBatch(store, event=("graph.tool_call", "GENERATE"))
    out = run_durable(faulty, "g1", load_graph("canonical"), with_calls(CALLS), tools())
    assert out.status == "failed" and out.error["code"] == "store_unavailable"
    ran = [e["tool"] for e in executions()]
    assert "patch.generate" not in ran and ran[-1] == "code.graph"  # GENERATE's tool never ran
    generate = tool_identity("GENERATE", 0, 0)
    assert all(c.status is not CallStatus.PENDING for c in store.list_calls("g1"))
    assert generate not in {s.identity for s in store.list_slots("g1")}
    assert store.list_attempts("g1")[-1].status == "failed"
    again = run_durable(store, "g1", load_graph("canonical"), with_calls(CALLS), tools())
    assert again.status == "accepted"
    assert [e["tool"] for e in executions()].count("patch.generate") == 1


def test_a_commit_that_fails_after_the_last_call_fails_the_attempt(store: Store) -> None:
    last = tool_identity("MEMORIZE", 0, 0)
    out = run_durable(FailingBatch(store, commit=last), "g1", load_graph("canonical"),
                      with_calls(CALLS), tools())
    # The engine reached its terminal, but the attempt's outcome waits for every write.
    assert out.status == "failed" and out.error["code"] == "store_unavailable"
    assert store.list_attempts("g1")[-1].status == "failed"
    assert store.get_run("g1").status == "failed"
    assert last not in {s.identity for s in store.list_slots("g1")}
    pending = [c.identity for c in store.list_calls("g1") if c.status is CallStatus.PENDING]
    assert pending == [last]  # dispatched, never committed: the next attempt fails closed
    again = run_durable(store, "g1", load_graph("canonical"), with_calls(CALLS), tools())
    assert again.status == "unresolved" and again.error["identities"] == [str(last)]
