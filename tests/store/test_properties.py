"""Property: random interleavings of begin/commit/fail/abandon keep the prefix invariants.

The prefix only grows, a committed slot never changes, every slot is backed by a committed or
reconciled call of its identity, and commit_call always answers with the first stored record.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.contract.identity import Identity, digest
from frostline.errors import FrostlineError
from frostline.store import CallStatus, SlotRecord, Store

from .helpers import CAP, slot_for

IDENTITIES = [Identity(site, path, occ) for site in ("orchestrate/#0", "orchestrate.gen/#0")
              for path in ((), (0,), (1, 2)) for occ in (0, 1)]

ops = st.lists(st.one_of(
    st.tuples(st.just("begin"), st.sampled_from(IDENTITIES), st.integers(0, 1)),
    st.tuples(st.just("commit"), st.integers(0, 50), st.integers(0, 9)),
    st.tuples(st.just("fail"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("abandon"), st.sampled_from(IDENTITIES), st.just(0)),
), min_size=1, max_size=30)

_runs = itertools.count()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_prefix_invariants_under_random_interleavings(store: Store, program: list[Any]) -> None:
    run_id = f"prop{next(_runs)}"  # a fresh run per example in the shared store
    store.create_run(run_id, {})
    calls: list[tuple[int, Identity, int]] = []  # (call id, identity, payload)
    seen: dict[Identity, SlotRecord] = {}
    for op, a, b in program:
        if op == "begin":
            calls.append((store.begin_call(run_id, 1, a, CAP, digest({"p": b})), a, b))
        elif op in ("commit", "fail") and calls:
            call_id, identity, payload = calls[a % len(calls)]
            status = next(c.status for c in store.list_calls(run_id) if c.call_id == call_id)
            try:
                if op == "commit":
                    stored = store.commit_call(call_id, slot_for(run_id, identity, {"p": payload},
                                                                 {"call": call_id, "r": b}))
                    assert status is not CallStatus.FAILED
                    # The first record of an identity is the one every later commit gets back.
                    assert stored == seen.setdefault(identity, stored)
                else:
                    store.fail_call(call_id, {"why": "provider 400"})
                    assert status in (CallStatus.PENDING, CallStatus.ABANDONED)
            except FrostlineError:
                assert status is CallStatus.FAILED or (
                    op == "fail" and status is not CallStatus.PENDING)
        elif op == "abandon":
            pending = [c for c in store.unresolved_calls(run_id) if c.identity == a]
            try:
                store.reconcile_call(run_id, a, abandon=True)
                assert pending
            except FrostlineError:
                assert not pending
        check_invariants(store, run_id, seen)


def check_invariants(store: Store, run_id: str, seen: dict[Identity, SlotRecord]) -> None:
    slots = {s.identity: s for s in store.list_slots(run_id)}
    # The prefix only grows and a committed slot never changes.
    assert set(seen) == set(slots)
    for identity, first in seen.items():
        assert slots[identity] == first
    by_identity: dict[Identity, list[Any]] = {}
    for c in store.list_calls(run_id):
        by_identity.setdefault(c.identity, []).append(c)
    for identity, slot in slots.items():
        backing = [c for c in by_identity[identity]
                   if c.status in (CallStatus.COMMITTED, CallStatus.RECONCILED)]
        assert any(c.call_id == slot.result["call"] for c in backing)
