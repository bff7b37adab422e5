"""Table VII on 20 committed corpus prefixes: the gate's split by edit kind is exact."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.gate_edits import EDITS, EXPECTED, apply_edits, choose, study, summary
from frostline.contract.gate import FrozenSite


@pytest.fixture(scope="module")
def verdicts():  # type: ignore[no-untyped-def]
    with Lab() as lab:
        yield study(choose(20), lab)


def test_twenty_scripts_every_edit_applies(verdicts) -> None:  # type: ignore[no-untyped-def]
    assert len({v.script for v in verdicts}) == 20
    assert len(verdicts) == 140
    assert [v for v in verdicts if v.verdict is None] == []


def test_payload_edits_stop_with_call_changed(verdicts) -> None:  # type: ignore[no-untyped-def]
    by_edit = summary(verdicts)
    assert by_edit["literal in payload"] == {"call_changed": 20}
    assert by_edit["computed payload"] == {"call_changed": 20}


def test_edits_around_the_call_are_accepted(verdicts) -> None:  # type: ignore[no-untyped-def]
    by_edit = summary(verdicts)
    for edit in ("statement outside", "insert a non-call statement", "append a new call"):
        assert by_edit[edit] == {"accepted": 20}, edit
    assert sum(1 for v in verdicts if v.verdict == "accepted") == 60


def test_wrap_and_delete_stop_as_removed(verdicts) -> None:  # type: ignore[no-untyped-def]
    by_edit = summary(verdicts)
    for edit in ("wrap in a new block", "delete a call"):
        counts = by_edit[edit]
        assert counts["accepted"] == 0 and sum(counts.values()) == 20
        # one script's untaken image.edit branch slides onto the vacated ordinal
        assert counts == {"removed": 19, "capability_changed": 1}, counts
    shifted = {v.script for v in verdicts if v.verdict == "capability_changed"}
    assert shifted == {"edit_after_review"}


def test_the_edits_are_seen_by_the_gate_not_assumed() -> None:
    # an unchanged frozen map accepts nothing but the intended edits; a frozen map whose
    # fingerprint is wrong stops even the harmless ones (the verdict really comes from the gate)
    source = ('async def orchestrate(ctx, args):\n'
              '    a = await ctx.run("echo", {"n": 1})\n'
              '    b = await ctx.run("echo", {"n": 2})\n'
              '    return [a, b]\n')
    from frostline.script import sites
    frozen = {s.site: FrozenSite(s.site, "echo", s.fingerprint, s.line, "")
              for s in sites(source)}
    got = {v.edit: v.verdict for v in apply_edits("tiny", source, frozen)}
    assert got == EXPECTED
    wrong = {k: FrozenSite(f.site, f.capability, "0" * 64, f.line, "") for k, f in frozen.items()}
    assert {v.verdict for v in apply_edits("tiny", source, wrong)} == {"call_changed", "removed"}
    assert set(EDITS) == set(got)


def test_table_states_the_split(verdicts) -> None:  # type: ignore[no-untyped-def]
    from bench.paper.gate_edits import render

    assert "(140 pairs, 140 apply, 60 accepted, 80 stopped)" in render(verdicts, 20)
