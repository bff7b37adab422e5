"""A durable graph run killed with a real SIGKILL at many points, then resumed: no committed
tool result is lost, no committed tool call runs again, and the ledger the store kept is an
unbroken prefix of the run's ledger in which every tool call is recorded before its effect.

The ledger is written in batches (one transaction per batch, queued ahead of the next tool
call's attempt record), so a kill lands with events buffered, a batch in flight, or a commit
settling. The child (`durable_killed.py`) kills itself while the ledger appends event number k
— anywhere in the run — or right after the k-th tool's effect. Every tool is side-effecting, so
a call that had its effect without a durable commit fails closed on resume; the test then plays
the operator, reconciling each such call from the tools' own log (the effect happened: write
back its result) or abandoning it (it never ran). CI runs a sample of the kill points;
FROSTLINE_SLOW=1 runs every one of them.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from durable_bodies import CALLS, LOG_ENV, executions, with_calls
from durable_killed import registry

from frostline.contract.identity import Identity
from frostline.graph.allowlist import LocalToolRouter
from frostline.graph.durable import run_durable, tool_identity
from frostline.graph.engine import Engine
from frostline.graph.graph import load_graph
from frostline.graph.ledger import LedgerEvent
from frostline.store import CallStatus, open_store

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("durable_killed.py")
SLOW = bool(os.environ.get("FROSTLINE_SLOW"))

CALL_LIST = [(tool_identity(s, 0, i), t, p) for s, calls in CALLS.items()
             for i, (t, p) in enumerate(calls)]


@functools.cache
def reference_ledger() -> tuple[LedgerEvent, ...]:
    """The ledger of the same run, in memory: what the store's ledger must be a prefix of."""
    pure = {t: (lambda p, t=t: {"tool": t, "ok": True, "echo": dict(p)})  # logs no effect
            for _, t, _ in CALL_LIST}
    result = Engine(load_graph("canonical"), with_calls(CALLS), router=LocalToolRouter(pure)).run()
    return result.ledger.events


def event_points() -> list[int]:
    if SLOW:
        return list(range(1, 69))  # every event of the run (68: see the skip below)
    return [2, 6, 12, 17, 23, 30, 38, 46, 55, 62, 67]


EFFECT_POINTS = list(range(len(CALL_LIST))) if SLOW else [0, 3, 7]


def identity_of(execution: dict[str, Any]) -> Identity:
    return next(i for i, t, p in CALL_LIST if (t, p) == (execution["tool"], execution["payload"]))


def tool_result(identity: Identity) -> dict[str, Any]:
    _, tool, payload = next(c for c in CALL_LIST if c[0] == identity)
    return {"tool": tool, "ok": True, "echo": payload}


def kill_run(url: str, run_id: str, at_event: int, after_effect: int) -> None:
    proc = subprocess.run([sys.executable, str(CHILD), url, run_id, str(at_event),
                           str(after_effect)], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout + proc.stderr)


def check_what_the_kill_left(store: Any, run_id: str) -> dict[Identity, Any]:
    """The durable state right after the kill; returns the committed slots."""
    reference = reference_ledger()
    graph = [e for e in store.list_events(run_id) if e.kind.startswith("graph.")]
    # An unbroken prefix of the run's ledger, in order, each event as the run appended it.
    assert [e.data["seq"] for e in graph] == list(range(1, len(graph) + 1))
    for stored, ref in zip(graph, reference, strict=False):
        assert stored.kind == f"graph.{ref.kind}"
        assert {k: v for k, v in stored.data.items() if k not in ("seq", "attempt")} == ref.data
    recorded_calls = {tool_identity(e.data["state"], e.data["visit"], e.data["ordinal"])
                      for e in graph if e.kind == "graph.tool_call"}
    begun = {c.identity: c for c in store.list_calls(run_id)}
    slots = {s.identity: s for s in store.list_slots(run_id)}
    ran = [identity_of(e) for e in executions()]
    assert len(ran) == len(set(ran))
    for identity in ran:
        # Before its effect, a call's ledger event and its attempt record were durable.
        assert identity in recorded_calls
        assert identity in begun
    for identity, slot in slots.items():
        assert identity in ran  # committed means its effect happened
        assert slot.result == tool_result(identity)
        assert begun[identity].status is CallStatus.COMMITTED
    return slots


def resume(store: Any, run_id: str) -> Any:
    """Resume as an operator would: reconcile what fails closed from the tools' own log."""
    graph = load_graph("canonical")
    before = len(executions())
    outcome = run_durable(store, run_id, graph, with_calls(CALLS), registry())
    if outcome.status == "unresolved":
        assert len(executions()) == before  # failing closed ran nothing
        ran = {identity_of(e) for e in executions()}
        for text in outcome.error["identities"]:
            identity = next(i for i, _, _ in CALL_LIST if str(i) == text)
            if identity in ran:
                store.reconcile_call(run_id, identity, abandon=False,
                                     result=tool_result(identity))
            else:
                store.reconcile_call(run_id, identity, abandon=True)
        outcome = run_durable(store, run_id, graph, with_calls(CALLS), registry())
    return outcome


def kill_and_resume(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    at_event: int, after_effect: int) -> None:
    monkeypatch.setenv(LOG_ENV, str(tmp_path / "tools.jsonl"))
    run_id = f"killed-{at_event}-{after_effect}"
    kill_run(url, run_id, at_event, after_effect)
    with open_store(url) as store:
        committed = check_what_the_kill_left(store, run_id)
        outcome = resume(store, run_id)
        assert outcome.status == "accepted", outcome.error
        # No committed tool call ran again, and every tool call's effect happened once.
        ran = [identity_of(e) for e in executions()]
        assert sorted(ran) == sorted(i for i, _, _ in CALL_LIST)
        assert outcome.replayed >= len(committed)
        # No committed result was lost or changed.
        after = {s.identity: s for s in store.list_slots(run_id)}
        assert set(after) == {i for i, _, _ in CALL_LIST}
        for identity, slot in committed.items():
            assert (after[identity].result, after[identity].attempt) == (slot.result,
                                                                         slot.attempt)
        finished = store.list_attempts(run_id)[-1]
        assert finished.status == "accepted"
        last = [e for e in store.list_events(run_id)
                if e.kind.startswith("graph.") and e.data["attempt"] == finished.number]
        assert [e.data["seq"] for e in last] == [e.seq for e in reference_ledger()]


@pytest.mark.parametrize("at_event", event_points())
def test_sigkill_at_a_ledger_event_then_resume(store_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               at_event: int) -> None:
    if at_event > len(reference_ledger()):
        pytest.skip(f"the run has {len(reference_ledger())} ledger events")
    kill_and_resume(store_url, tmp_path, monkeypatch, at_event, -1)


@pytest.mark.parametrize("after_effect", EFFECT_POINTS)
def test_sigkill_after_a_tools_effect_then_resume(store_url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  after_effect: int) -> None:
    kill_and_resume(store_url, tmp_path, monkeypatch, -1, after_effect)
