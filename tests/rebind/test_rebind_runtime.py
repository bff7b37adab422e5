"""Issue 30: the trace check end to end — the dry replay in the real sandbox, the durable
rebinding, the runtime replaying rebound identities, orphans and the certificate, both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from frostline.runtime import certificates
from frostline.runtime.sandbox_runner import SandboxRunner
from tests.runtime.helpers import local, logged, run

ROOT = Path(__file__).resolve().parents[2]
BRAND = (ROOT / "examples/tour/brand.py").read_text()
MOVED = (ROOT / "examples/tour/moved.py").read_text()
ARGS = {"brief": "a fox in the snow"}


def paid(log: Path) -> list[str]:
    return [e["capability"] for e in logged(log) if e["ok"]]


@pytest.fixture(scope="module")
def sandbox() -> SandboxRunner:
    return SandboxRunner()


def first_attempt(store, tmp_path, relocation: str):
    p = local(tmp_path)
    v1 = run(store, "tour", BRAND, p, args=ARGS, runner=SandboxRunner(),
             envelope={"relocation": relocation})
    assert v1.status == "failed" and v1.executed == 4  # storyboard + three shots
    return p


def test_issue30_moved_call_stops_under_stop(store, tmp_path):
    p = first_attempt(store, tmp_path, "stop")
    v2 = run(store, "tour", MOVED, p, runner=SandboxRunner())
    assert v2.status == "gate_stopped" and v2.provider_calls == 0
    assert v2.gate is not None and v2.gate.trace is None
    assert "trace" not in v2.to_dict()["gate"]
    assert store.list_rebindings("tour") == []


def test_issue30_moved_call_is_admitted_and_replayed_under_rebind(store, tmp_path):
    p = first_attempt(store, tmp_path, "rebind")
    log = tmp_path / "provider.jsonl"
    before = paid(log)
    v2 = run(store, "tour", MOVED, p, runner=SandboxRunner())
    assert v2.status == "succeeded", v2.error
    assert v2.gate is not None and v2.gate.accepted and v2.gate.accepted_by == "trace"
    gate = v2.to_dict()["gate"]  # the attempt's JSON says the same
    assert gate["accepted"] and gate["accepted_by"] == "trace"
    assert gate["trace"]["rebound"] == 3 and gate["trace"]["frontier"] is not None
    # storyboard replayed at its own identity, three shots rebound, the fourth paid once
    assert (v2.replayed, v2.executed) == (4, 1)
    assert paid(log)[len(before):] == ["image.generate"]
    moved = [c for c in v2.calls if c.get("moved_from")]
    assert len(moved) == 3 and all(c["outcome"] == "replayed" for c in moved)
    assert v2.orphans == []  # the rebound slots were consumed
    rows = store.list_rebindings("tour", v2.attempt)
    assert sorted(r["bound_to"] for r in rows) == sorted(c["moved_from"] for c in moved)
    assert certificates.verify(store, "tour")["differences"] == []
    kinds = [e.kind for e in store.list_events("tour")]
    assert kinds.index("rebound") < kinds.index("attempt_finished", kinds.index("rebound"))


def test_issue30_a_payload_change_with_the_move_stops_under_rebind(store, tmp_path):
    p = first_attempt(store, tmp_path, "rebind")
    edited = MOVED.replace('"seed": seed', '"seed": seed + 1')
    v2 = run(store, "tour", edited, p, runner=SandboxRunner())
    assert v2.status == "gate_stopped" and v2.provider_calls == 0
    trace = v2.to_dict()["gate"]["trace"]
    assert not trace["admitted"]
    lost = [c for c in trace["counterexamples"] if c["kind"] == "lost"]
    assert len(lost) == 3 and all(c["capability"] == "image.generate" for c in lost)
    assert "the dry replay did not admit it" in v2.error["message"]
    assert store.list_rebindings("tour") == []
