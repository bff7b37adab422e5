"""Issue 30, the proof by generation: over the valid corpus, random refactorings that move
committed calls (helper extraction, block wraps, loop rewrites with the same requests, computed
payloads, reordering of independent statements, and pairs of them) after random failure
points, under relocation = "rebind":

- 0 duplicate provider calls: no request (capability, payload digest) is paid in the repair
  more often than the candidate issues it beyond the run's committed count of it;
- 0 stale results: every replayed call was served a slot committed for its own request, and
  the repaired run's result equals a clean run's of the same candidate;
- the same generator with a payload change always stops, paying nothing.

Both stores; the in-process runner (the sandbox's own tests are tests/rebind/test_rebind_*.py
and tests/runtime: here the runner only has to be deterministic and fast).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bench.corpus import load
from bench.refactor import REFACTORINGS, call_count, payload_change
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.identity import Identity, digest
from frostline.errors import ProviderError
from frostline.testing import Delegating, InProcessRunner
from tests.runtime.helpers import local, run

CORPUS = sorted((s for s in load("valid") if call_count(s.source) > 0), key=lambda s: s.name)
REBIND = {"relocation": "rebind", "budget": {"usd": 100.0, "calls": 1000}, "ledger_policy": "warn"}
_ids = itertools.count()


class Paid(Delegating):
    """Records every request a provider is asked for; fails the `fail_at`-th (1-based)."""

    def __init__(self, inner: Provider, fail_at: int | None = None) -> None:
        super().__init__(inner)
        self.fail_at = fail_at
        self.requests: list[tuple[str, str]] = []

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        self.requests.append((capability, digest(dict(payload))))
        if self.fail_at is not None and len(self.requests) == self.fail_at:
            raise ProviderError(f"{capability}: injected failure (HTTP 503)", status=503)
        return await self.inner.invoke(capability, payload, ctx)


refactorings = st.lists(st.tuples(st.sampled_from(sorted(REFACTORINGS)), st.integers(0, 7)),
                        min_size=1, max_size=2)


def refactored(source: str, steps: list[tuple[str, int]]) -> str | None:
    out: str | None = source
    for name, i in steps:
        assert out is not None
        out = REFACTORINGS[name](out, i % max(call_count(out), 1))
        if out is None:
            return None
    return None if out == source else out


def first_attempt(store, tmp_path, script, fail_at: int):
    """Attempt 1 under rebind, failing at the `fail_at`-th provider call (if it gets there)."""
    run_id = f"p{next(_ids)}"
    out = run(store, run_id, script.source, Paid(local(tmp_path), fail_at),
              args=script.args, envelope=REBIND)
    assume(len(store.list_slots(run_id)) > 0)  # something committed: a prefix to move
    return run_id, out


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(script=st.sampled_from(CORPUS), fail_at=st.integers(1, 8), steps=refactorings)
def test_issue30_refactorings_pay_nothing_twice_and_serve_no_stale_result(
        store, tmp_path, script, fail_at, steps):
    candidate = refactored(script.source, steps)
    assume(candidate is not None)
    run_id, _ = first_attempt(store, tmp_path, script, fail_at)
    committed = Counter((s.capability, s.digest) for s in store.list_slots(run_id))
    slots = {s.identity: s for s in store.list_slots(run_id)}
    paid = Paid(local(tmp_path))
    out = run(store, run_id, candidate, paid, runner=InProcessRunner())
    if out.status in ("rejected",):  # the refactoring broke a checker rule: not a relocation
        return
    if out.status == "gate_stopped":
        assert out.provider_calls == 0 and paid.requests == []
        return
    # 0 duplicates: paid ≤ issued beyond the committed count, per request
    issued = Counter((c["capability"], c["digest"]) for c in out.calls if c.get("digest"))
    for request, n in Counter(paid.requests).items():
        assert n <= max(0, issued[request] - committed[request]), (request, steps)
    # 0 stale results: each replay was served a slot committed for its own request
    for row in out.calls:
        if row.get("outcome") != "replayed":
            continue
        source = Identity.parse(row.get("moved_from") or row["identity"])
        assert slots[source].digest == row["digest"] and \
            slots[source].capability == row["capability"]
    if out.status == "succeeded":
        assert clean_result(store, run_id, candidate, tmp_path, script.args) == out.result


def clean_result(store, run_id: str, candidate: str, tmp_path, args) -> Any:
    """The result of a clean run of `candidate` that is given the repaired run's race winners.

    A race's winner is whichever branch finishes first, so two clean runs of one script may
    return different branches; the repaired run must return the branch its recorded decision
    names. The clean run is seeded with those decisions, so the comparison is exact."""
    decided = {e.data["key"]: e.data["winner"] for e in store.list_events(run_id)
               if e.kind == "race_decided"}
    clean_id = f"clean{next(_ids)}"
    store.create_run(clean_id, REBIND)
    for key, winner in decided.items():
        store.decide(clean_id, key, winner)
    clean = run(store, clean_id, candidate, local(tmp_path), args=args)
    assert clean.status == "succeeded", clean.error
    return clean.result


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(script=st.sampled_from(CORPUS), fail_at=st.integers(2, 8), steps=refactorings,
       which=st.integers(0, 7))
def test_issue30_the_same_refactorings_with_a_payload_change_always_stop(
        store, tmp_path, script, fail_at, steps, which):
    run_id, _ = first_attempt(store, tmp_path, script, fail_at)
    # the payload of a committed call changes (its literal), then the refactorings apply
    committed_lines = _committed_call_indexes(store, run_id, script.source)
    assume(committed_lines)
    edited = payload_change(script.source, committed_lines[which % len(committed_lines)])
    assume(edited is not None)
    assert edited is not None
    candidate = refactored(edited, steps) or edited
    paid = Paid(local(tmp_path))
    out = run(store, run_id, candidate, paid, runner=InProcessRunner())
    assume(out.status != "rejected")
    assert out.status in ("gate_stopped", "diverged"), (out.status, steps)
    assert paid.requests == [] and out.provider_calls == 0


def _committed_call_indexes(store, run_id: str, source: str) -> list[int]:
    """Indexes (source order) of the script's calls whose site has a committed slot with a
    literal in its payload."""
    from frostline.script import sites

    frozen = {s.site for s in store.list_slots(run_id)}
    ordered = sorted(sites(source), key=lambda s: (s.line, s.col))
    return [i for i, s in enumerate(ordered) if s.site in frozen]


def test_issue30_the_generator_applies_each_refactoring_somewhere():
    applied = {name: sum(1 for s in CORPUS if f(s.source, 0) not in (None, s.source))
               for name, f in REFACTORINGS.items()}
    assert all(n > 0 for n in applied.values()), applied


pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
