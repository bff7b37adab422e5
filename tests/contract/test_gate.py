"""The gate on hand-built site lists: counterexample kinds, nearest site, frozen map, soundness."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.gate import (
    FrozenSite,
    GateResult,
    frozen_map,
    gate,
    levenshtein,
    nearest_site,
)
from frostline.errors import GateStopped, PrefixConflict
from frostline.store.records import AttemptRecord, SlotRecord


@dataclass(frozen=True)
class Site:
    site: str
    capability: str | None
    fingerprint: str
    line: int


def fs(site: str, cap: str = "image.generate", fp: str = "f1", line: int = 3) -> FrozenSite:
    return FrozenSite(site, cap, fp, line, f"    x = await ctx.run({cap!r}, p)  # {site}")


FROZEN = {
    "orchestrate/#0": fs("orchestrate/#0", "storyboard.plan", "fa", 2),
    "orchestrate/#1": fs("orchestrate/#1", "image.generate", "fb", 4),
}


def test_accepts_identical_and_appended_sites():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "fb", 4),
            Site("orchestrate/#2", "review.visual", "fc", 9)]
    result = gate(FROZEN, cand)
    assert result == GateResult(True, ())
    assert result.to_dict() == {"accepted": True, "counterexamples": []}
    result.raise_if_stopped()  # no error


def test_accepts_everything_when_nothing_is_frozen():
    assert gate({}, []).accepted
    assert gate({}, [Site("orchestrate/#0", "echo", "x", 1)]).accepted


def test_removed_with_relocated_nearest():
    # the a425 shape: the image call moved into a helper; same capability and fingerprint
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 5),
            Site("orchestrate.gen_one/#0", "image.generate", "fb", 2)]
    result = gate(FROZEN, cand)
    assert not result.accepted
    (ce,) = result.counterexamples
    assert ce.kind == "removed" and ce.site == "orchestrate/#1"
    assert ce.capability == "image.generate" and ce.line == 4
    assert "orchestrate/#1" in ce.source_line
    assert ce.nearest is not None
    assert (ce.nearest.site, ce.nearest.match, ce.nearest.line) == (
        "orchestrate.gen_one/#0", "relocated", 2)
    d = result.to_dict()["counterexamples"][0]
    assert {k: d[k] for k in ("kind", "site", "capability", "line")} == {
        "kind": "removed", "site": "orchestrate/#1", "capability": "image.generate", "line": 4}
    assert d["nearest"]["site"] == "orchestrate.gen_one/#0"
    assert "new callsite" in d["message"]


def test_capability_changed_names_the_new_capability():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.edit", "fz", 4)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "capability_changed"
    assert ce.found_capability == "image.edit"
    assert "image.edit" in ce.message
    # nothing else calls image.generate: the nearest falls back to the closest σ, which is σ itself
    assert ce.nearest is not None and ce.nearest.site == "orchestrate/#1"
    assert ce.nearest.match == "closest"


def test_call_changed_nearest_is_the_same_site():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "CHANGED", 4)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "call_changed"
    assert ce.nearest is not None
    assert (ce.nearest.site, ce.nearest.match) == ("orchestrate/#1", "same_capability")


def test_call_changed_by_a_shift_points_at_the_relocation():
    # a new image call inserted before the committed one shifts it from #1 to #2
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "NEW", 3),
            Site("orchestrate/#2", "image.generate", "fb", 5)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "call_changed"
    assert ce.nearest is not None and ce.nearest.site == "orchestrate/#2"
    assert ce.nearest.match == "relocated"


def test_all_three_kinds_at_once_sorted_by_line():
    frozen = {
        "orchestrate/#0": fs("orchestrate/#0", "storyboard.plan", "fa", 2),
        "orchestrate/#1": fs("orchestrate/#1", "image.generate", "fb", 4),
        "orchestrate/#2": fs("orchestrate/#2", "review.visual", "fc", 6),
    }
    cand = [Site("orchestrate/#0", "storyboard.plan", "XX", 2),
            Site("orchestrate/#1", "text.generate", "fb", 4)]
    result = gate(frozen, cand)
    assert [c.kind for c in result.counterexamples] == [
        "call_changed", "capability_changed", "removed"]
    with pytest.raises(GateStopped) as info:
        result.raise_if_stopped("run-1")
    err = info.value.to_dict()
    assert err["run_id"] == "run-1" and len(err["counterexamples"]) == 3
    assert "nothing was executed" in err["message"]


def test_removed_with_no_candidate_sites_has_no_nearest():
    (ce,) = gate({"orchestrate/#0": fs("orchestrate/#0")}, []).counterexamples
    assert ce.kind == "removed" and ce.nearest is None


def test_nearest_prefers_same_capability_then_shared_prefix_then_edit_distance():
    frozen = fs("orchestrate/for#0.body/#1", "image.generate", "fb")
    cand = [
        Site("orchestrate/#0", "text.generate", "t", 1),
        Site("orchestrate/if#0.body/#0", "image.generate", "other", 2),
        Site("orchestrate/for#0.body/#0", "image.generate", "other2", 3),
        Site("orchestrate/for#0.body/#7", "text.generate", "t2", 4),
    ]
    near = nearest_site(frozen, cand)
    assert near is not None
    assert (near.site, near.match) == ("orchestrate/for#0.body/#0", "same_capability")
    # no same-capability site: the closest σ by shared segments wins over a shorter string
    near = nearest_site(fs("orchestrate/for#0.body/#1", "video.edit"), [cand[0], cand[3], cand[1]])
    assert near is not None and near.site == "orchestrate/for#0.body/#7"
    assert near.match == "closest"
    # equal shared prefix: the smaller edit distance wins
    near = nearest_site(fs("orchestrate/if#1.body/#1", "video.edit"),
                        [Site("orchestrate/for#5.orelse/#3", "echo", "x", 1),
                         Site("orchestrate/if#0.body/#1", "echo", "y", 2)])
    assert near is not None and near.site == "orchestrate/if#0.body/#1"


def test_levenshtein():
    assert levenshtein("", "") == 0
    assert levenshtein("abc", "") == 3
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("orchestrate/#1", "orchestrate/#2") == 1


# ------------------------------------------------------------------------------ frozen_map


def _attempt(n: int, source: str, sites: list[dict[str, object]]) -> AttemptRecord:
    return AttemptRecord(run_id="r", number=n, source=source, source_digest="d", annotated=source,
                         report={"valid": True, "violations": [], "facts": {"sites": sites}},
                         status="failed")


def _slot(site: str, cap: str, attempt: int, occ: int = 0) -> SlotRecord:
    return SlotRecord("r", site, (), occ, cap, "h", {"ok": True}, {}, attempt)


SRC1 = "async def orchestrate(ctx, args):\n    a = await ctx.run('storyboard.plan', {})\n    b = await ctx.run('image.generate', {})\n"
SRC2 = "async def orchestrate(ctx, args):\n    # moved\n    a = await ctx.run('storyboard.plan', {})\n    b = await ctx.run('image.generate', {})\n    c = await ctx.run('echo', {})\n"


def test_frozen_map_uses_the_first_committing_attempt():
    a1 = _attempt(1, SRC1, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 2},
        {"site": "orchestrate/#1", "capability": "image.generate", "fingerprint": "fb", "line": 3}])
    a2 = _attempt(2, SRC2, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 3},
        {"site": "orchestrate/#1", "capability": "image.generate", "fingerprint": "fb", "line": 4},
        {"site": "orchestrate/#2", "capability": "echo", "fingerprint": "fc", "line": 5}])
    slots = [_slot("orchestrate/#1", "image.generate", 2, 1), _slot("orchestrate/#0", "storyboard.plan", 1),
             _slot("orchestrate/#1", "image.generate", 1), _slot("orchestrate/#2", "echo", 2)]
    fm = frozen_map(slots, [a2, a1])
    assert list(fm) == ["orchestrate/#0", "orchestrate/#1", "orchestrate/#2"]
    assert fm["orchestrate/#1"] == FrozenSite(
        "orchestrate/#1", "image.generate", "fb", 3, "    b = await ctx.run('image.generate', {})")
    assert fm["orchestrate/#2"].line == 5 and "echo" in fm["orchestrate/#2"].source_line
    assert frozen_map([], [a1]) == {}


def test_frozen_map_fails_closed():
    a1 = _attempt(1, SRC1, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 2}])
    with pytest.raises(PrefixConflict, match="does not describe"):
        frozen_map([_slot("orchestrate/#1", "image.generate", 1)], [a1])
    with pytest.raises(PrefixConflict, match="does not have"):
        frozen_map([_slot("orchestrate/#0", "storyboard.plan", 7)], [a1])
    with pytest.raises(PrefixConflict, match="report has"):
        frozen_map([_slot("orchestrate/#0", "echo", 1)], [a1])
    broken = AttemptRecord("r", 1, SRC1, "d", SRC1, {"valid": False}, "rejected")
    with pytest.raises(PrefixConflict, match="no site list"):
        frozen_map([_slot("orchestrate/#0", "storyboard.plan", 1)], [broken])


# ------------------------------------------------------------------------------ properties

CAPS = st.sampled_from(["image.generate", "storyboard.plan", "echo", None])
SITE_NAMES = st.builds(
    lambda fn, block, j: f"{fn}{block}/#{j}",
    st.sampled_from(["orchestrate", "orchestrate.g0", "orchestrate.g1"]),
    st.sampled_from(["", "/for#0.body", "/for#1.body", "/if#0.body", "/if#0.orelse"]),
    st.integers(0, 5))
CANDIDATE = st.lists(st.builds(Site, SITE_NAMES, CAPS, st.sampled_from(["f1", "f2", "f3"]),
                               st.integers(1, 50)),
                     max_size=12, unique_by=lambda s: s.site)


@st.composite
def frozen_and_candidate(draw: st.DrawFn) -> tuple[dict[str, FrozenSite], list[Site]]:
    frozen_sites = draw(CANDIDATE)
    frozen = {s.site: FrozenSite(s.site, s.capability or "echo", s.fingerprint, s.line, "x")
              for s in frozen_sites}
    # the candidate: a random mixture of kept, edited and dropped frozen sites plus new sites
    cand: dict[str, Site] = {}
    for f in frozen.values():
        action = draw(st.sampled_from(["keep", "keep", "drop", "cap", "fp"]))
        if action == "keep":
            cand[f.site] = Site(f.site, f.capability, f.fingerprint, draw(st.integers(1, 99)))
        elif action == "cap":
            cand[f.site] = Site(f.site, draw(CAPS), f.fingerprint, f.line)
        elif action == "fp":
            cand[f.site] = Site(f.site, f.capability, draw(st.sampled_from(["f1", "f9"])), f.line)
    for extra in draw(CANDIDATE):
        cand.setdefault(extra.site, extra)
    return frozen, draw(st.permutations(list(cand.values())))


@given(frozen_and_candidate())
def test_gate_soundness(case):
    """Accepted ⇒ every frozen site is present with equal capability and fingerprint, and
    stopped ⇒ each counterexample names a frozen site that really differs."""
    frozen, cand = case
    result = gate(frozen, cand)
    by_site = {c.site: c for c in cand}
    intact = all(s in by_site and by_site[s].capability == f.capability
                 and by_site[s].fingerprint == f.fingerprint for s, f in frozen.items())
    assert result.accepted == intact
    assert result.accepted == (not result.counterexamples)
    for ce in result.counterexamples:
        f = frozen[ce.site]
        c = by_site.get(ce.site)
        if ce.kind == "removed":
            assert c is None
        elif ce.kind == "capability_changed":
            assert c is not None and c.capability != f.capability
        else:
            assert c is not None and c.capability == f.capability and c.fingerprint != f.fingerprint
        assert ce.nearest is None or ce.nearest.site in by_site
        if ce.nearest is not None and ce.nearest.match == "relocated":
            n = by_site[ce.nearest.site]
            assert (n.capability, n.fingerprint) == (f.capability, f.fingerprint)
            assert n.site != f.site
    assert len({c.site for c in result.counterexamples}) == len(result.counterexamples)


@given(CANDIDATE, CANDIDATE, st.randoms())
def test_preserving_edits_are_always_accepted(frozen_sites, extra, rnd):
    """Keeping every frozen site (any line, any order) and adding new sites is always accepted."""
    frozen = {s.site: FrozenSite(s.site, s.capability or "echo", s.fingerprint, s.line, "x")
              for s in frozen_sites}
    cand = [Site(f.site, f.capability, f.fingerprint, rnd.randint(1, 500)) for f in frozen.values()]
    cand += [e for e in extra if e.site not in frozen]
    rnd.shuffle(cand)
    assert gate(frozen, cand).accepted
