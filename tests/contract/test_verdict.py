"""The gate's typed verdict (frostline.contract.verdict): its JSON and reading that JSON back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.gate import Counterexample, GateResult, NearestSite
from frostline.contract.identity import Identity
from frostline.contract.rebind import TraceCounterexample, TraceVerdict
from frostline.contract.verdict import GateVerdict, TraceFailure

MOVED = Counterexample("removed", "orchestrate/#1", "image.generate", 4, "await ctx.call(x)",
                       NearestSite("orchestrate.go/#0", "image.generate", 9, "relocated"))
LOST = TraceCounterexample("lost", "orchestrate/#1@:0", "image.generate", "ab" * 32, 1,
                           at="orchestrate/#2@:0")


def test_a_static_acceptance_is_the_callsite_gates_json_alone():
    verdict = GateVerdict(GateResult(True, ()))
    assert verdict.accepted and verdict.accepted_by is None and verdict.rebinding == {}
    assert verdict.to_dict() == {"accepted": True, "counterexamples": []}


def test_an_admitting_trace_accepts_the_stopped_candidate_and_keeps_its_counterexamples():
    rebinding = {Identity("orchestrate.go/#0", (), 0): Identity("orchestrate/#1", (), 0)}
    verdict = GateVerdict(GateResult(False, (MOVED,)),
                          TraceVerdict(True, rebinding, (), "orchestrate/#2@:0", 1, 1), "rebind")
    assert verdict.accepted and verdict.accepted_by == "trace"
    assert verdict.rebinding == rebinding and verdict.counterexamples == (MOVED,)
    data = verdict.to_dict()
    assert list(data) == ["accepted", "counterexamples", "relocation", "trace", "accepted_by"]
    assert data["trace"]["rebinding"] == [{"identity": "orchestrate.go/#0@:0",
                                           "bound_to": "orchestrate/#1@:0"}]


def test_a_refusing_or_failed_trace_leaves_the_stop_standing():
    refused = GateVerdict(GateResult(False, (MOVED,)), TraceVerdict(False, {}, (LOST,)))
    failed = GateVerdict(GateResult(False, (MOVED,)), TraceFailure("the dry replay failed: x"))
    for verdict in (refused, failed):
        assert not verdict.accepted and verdict.accepted_by is None
        assert verdict.rebinding == {} and "accepted_by" not in verdict.to_dict()
    assert failed.to_dict()["trace"] == {"admitted": False, "note": "the dry replay failed: x",
                                         "counterexamples": []}


sites = st.sampled_from(["orchestrate/#0", "orchestrate/#1", "orchestrate.go/#0"])
identities = st.builds(Identity, sites, st.tuples(st.integers(0, 3)), st.integers(0, 2))
nearest = st.none() | st.builds(NearestSite, sites, st.none() | st.just("echo"),
                                st.integers(1, 50), st.sampled_from(["relocated", "closest"]))
gate_examples = st.builds(
    Counterexample, st.sampled_from(["removed", "call_changed"]), sites, st.just("echo"),
    st.integers(1, 50), st.text(max_size=8), nearest)
trace_examples = st.builds(
    TraceCounterexample, st.sampled_from(["lost", "after_frontier", "diverged", "ambiguous"]),
    identities.map(str), st.just("echo"), st.just("0" * 64), st.integers(1, 3),
    st.none() | identities.map(str), st.none() | identities.map(str))
traces = st.none() | st.builds(TraceFailure, st.text(max_size=12)) | st.builds(
    TraceVerdict, st.booleans(), st.dictionaries(identities, identities, max_size=3),
    st.lists(trace_examples, max_size=2).map(tuple), st.none() | identities.map(str),
    st.integers(0, 5), st.integers(0, 5), st.none() | st.text(max_size=8))


@given(st.lists(gate_examples, max_size=3).map(tuple), traces,
       st.none() | st.sampled_from(["stop", "rebind"]))
def test_from_dict_reads_back_what_to_dict_wrote(examples, trace, relocation):
    verdict = GateVerdict(GateResult(not examples, examples), trace, relocation)
    again = GateVerdict.from_dict(verdict.to_dict())
    assert again.to_dict() == verdict.to_dict()
    assert (again.accepted, again.accepted_by) == (verdict.accepted, verdict.accepted_by)
