"""Issue 30: the trace check's matcher as pure logic (frostline.contract.rebind)."""

from __future__ import annotations

from frostline.contract.gate import Counterexample, CounterexampleKind
from frostline.contract.identity import Identity, digest
from frostline.contract.rebind import Matcher, vanished_sites
from frostline.contract.records import SlotRecord


def slot(site: str, occ: int, payload: dict, result: object = None, *, path=(), cap="echo",
         at: float = 0.0) -> SlotRecord:
    return SlotRecord("r", site, tuple(path), occ, cap, digest(payload),
                      result if result is not None else {"of": payload}, {}, 1, at)


def ident(site: str, occ: int = 0, path=()) -> Identity:
    return Identity(site, tuple(path), occ)


H1, H2, H3 = digest({"n": 1}), digest({"n": 2}), digest({"n": 3})


def test_issue30_moved_calls_are_rebound_and_new_work_after_them_is_admitted():
    slots = [slot("orchestrate/#0", 0, {"n": 1}, at=1), slot("orchestrate/#1", 0, {"n": 2}, at=2)]
    m = Matcher(slots, vanished={"orchestrate/#0", "orchestrate/#1"})
    assert m.match(ident("orchestrate.go/#0"), "echo", H1).kind == "rebound"
    assert m.match(ident("orchestrate.go/#0", 1), "echo", H2).kind == "rebound"
    assert m.match(ident("orchestrate/#0"), "echo", H3).kind == "diverged"  # a vanished ι
    v = Matcher(slots, vanished={"orchestrate/#0", "orchestrate/#1"})
    v.match(ident("orchestrate.go/#0"), "echo", H1)
    v.match(ident("orchestrate.go/#0", 1), "echo", H2)
    assert v.match(ident("orchestrate.go/#1"), "echo", H3).kind == "frontier"
    verdict = v.verdict()
    assert verdict.admitted and verdict.frontier == "orchestrate.go/#1@:0"
    assert verdict.rebinding == {ident("orchestrate.go/#0"): ident("orchestrate/#0"),
                                 ident("orchestrate.go/#0", 1): ident("orchestrate/#1")}


def test_issue30_intact_site_replays_only_at_its_own_identity_not_a_content_cache():
    slots = [slot("orchestrate/#0", 0, {"n": 1}), slot("orchestrate/#1", 0, {"n": 1})]
    m = Matcher(slots, vanished={"orchestrate/#1"})
    assert m.match(ident("orchestrate/#0"), "echo", H1).kind == "replay"
    # a second request equal to the intact site's slot takes the vanished site's slot only
    found = m.match(ident("orchestrate/if#0.body/#0"), "echo", H1)
    assert found.kind == "rebound" and found.slot.identity == ident("orchestrate/#1")
    # a third is new work: the intact slot is never served at another identity
    assert m.match(ident("orchestrate/if#0.body/#0", 1), "echo", H1).kind == "frontier"
    assert m.verdict().admitted


def test_issue30_a_slot_consumed_after_new_work_names_the_committed_call():
    slots = [slot("orchestrate/#0", 0, {"n": 1}), slot("orchestrate/#1", 0, {"n": 2})]
    m = Matcher(slots, vanished={"orchestrate/#1"})
    m.match(ident("orchestrate/#0"), "echo", H1)
    m.match(ident("orchestrate/#1"), "echo", H3)  # diverged: a vanished identity
    v = m.verdict()
    assert not v.admitted
    assert {c.kind for c in v.counterexamples} == {"diverged", "lost"}
    m = Matcher(slots, vanished={"orchestrate/#1"})
    m.match(ident("orchestrate/#0"), "echo", H1)
    assert m.match(ident("orchestrate/if#0.body/#0"), "echo", H3).kind == "frontier"
    m.match(ident("orchestrate/if#0.body/#1"), "echo", H2)
    v = m.verdict()
    assert [c.kind for c in v.counterexamples] == ["after_frontier"]
    only = v.counterexamples[0]
    assert only.committed == "orchestrate/#1@:0" and only.at == "orchestrate/if#0.body/#0@:0"
    assert "paid again" in only.message


def test_issue30_a_slot_never_requested_again_is_lost():
    m = Matcher([slot("orchestrate/#0", 0, {"n": 1})], vanished={"orchestrate/#0"})
    m.match(ident("orchestrate/#0"), "echo", H2)  # same σ, edited payload: vanished, diverged
    v = m.verdict()
    assert not v.admitted and {c.kind for c in v.counterexamples} == {"diverged", "lost"}
    m = Matcher([slot("orchestrate/#0", 0, {"n": 1})], vanished={"orchestrate/#0"})
    m.match(ident("orchestrate.g/#0"), "echo", H2)
    v = m.verdict()
    assert [c.kind for c in v.counterexamples] == ["lost"]
    assert v.counterexamples[0].at == "orchestrate.g/#0@:0"


def test_issue30_equal_requests_are_consumed_in_committed_order():
    slots = [slot("orchestrate/for#0.body/#0", 1, {"n": 1}, {"take": 2}, at=2),
             slot("orchestrate/for#0.body/#0", 0, {"n": 1}, {"take": 1}, at=1)]
    m = Matcher(slots, vanished={"orchestrate/for#0.body/#0"})
    first = m.match(ident("orchestrate/for#1.body/#0"), "echo", H1)
    second = m.match(ident("orchestrate/for#1.body/#0", 1), "echo", H1)
    assert (first.slot.result, second.slot.result) == ({"take": 1}, {"take": 2})
    assert m.verdict().admitted  # sequential: program order pins them


def test_issue30_equal_requests_with_different_results_in_concurrent_branches_are_ambiguous():
    slots = [slot("orchestrate.g/#0", 0, {"n": 1}, {"take": 1}, path=(0,), at=1),
             slot("orchestrate.g/#0", 0, {"n": 1}, {"take": 2}, path=(1,), at=2)]
    m = Matcher(slots, vanished={"orchestrate.g/#0"})
    m.match(ident("orchestrate.h/#0", 0, (1,)), "echo", H1)
    m.match(ident("orchestrate.h/#0", 0, (0,)), "echo", H1)
    v = m.verdict()
    assert not v.admitted and [c.kind for c in v.counterexamples] == ["ambiguous"]
    # equal results: whichever branch takes which slot, each gets the same answer
    same = [slot("orchestrate.g/#0", 0, {"n": 1}, {"x": 1}, path=(0,)),
            slot("orchestrate.g/#0", 0, {"n": 1}, {"x": 1}, path=(1,))]
    m = Matcher(same, vanished={"orchestrate.g/#0"})
    m.match(ident("orchestrate.h/#0", 0, (1,)), "echo", H1)
    m.match(ident("orchestrate.h/#0", 0, (0,)), "echo", H1)
    assert m.verdict().admitted


def test_issue30_a_race_decided_while_pool_slots_are_left_is_ambiguous():
    m = Matcher([slot("orchestrate/#0", 0, {"n": 1})], vanished={"orchestrate/#0"})
    m.race_decided()
    m.match(ident("orchestrate.g/#0"), "echo", H1)
    assert [c.kind for c in m.verdict().counterexamples] == ["ambiguous"]
    m = Matcher([slot("orchestrate/#0", 0, {"n": 1})], vanished={"orchestrate/#0"})
    m.match(ident("orchestrate.g/#0"), "echo", H1)
    m.race_decided()  # the pool is empty: the race decides new work only
    assert m.verdict().admitted


def test_issue30_only_moved_call_counterexamples_are_settled_by_the_trace_check():
    def c(kind: CounterexampleKind, site: str) -> Counterexample:
        return Counterexample(kind, site, "echo", 1, "echo()")

    assert vanished_sites([c("removed", "a"), c("call_changed", "b")]) == {"a", "b"}
    assert vanished_sites([c("removed", "a"), c("capability_changed", "b")]) is None
