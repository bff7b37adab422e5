"""The spend an attempt can add beyond the replays of its frozen prefix (`Facts.new_spend`),
and R11 against what is left of the budget when the checker is told what the run did."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.script import Prior, check, sites

IMG = 'await ctx.run("image.generate", {"prompt": "p", "size": "512x512"})'


def _src(body: str) -> str:
    return "async def orchestrate(ctx, args):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _site(src: str, j: int = 0) -> str:
    return sites(src)[j].site


def test_no_prior_no_new_spend():
    assert check(_src(f"{IMG}\nreturn 1\n")).facts.new_spend is None


def test_frozen_sites_are_replays_and_new_sites_count():
    src = _src(f"a = {IMG}\nb = {IMG}\nc = {IMG}\nreturn 1\n")
    prior = Prior(committed={_site(src, 0): 1, _site(src, 1): 1}, usd=0.04, calls=2)
    facts = check(src, prior=prior).facts
    assert facts.spend_bound.calls == {"image.generate": 3}
    assert facts.new_spend is not None and facts.new_spend.calls == {"image.generate": 1}
    assert facts.new_spend.usd == pytest.approx(0.02)
    assert check(src, prior=prior).to_dict()["facts"]["new_spend"]["total_calls"] == 1


def test_a_widened_loop_at_a_frozen_site_counts_its_new_iterations():
    src = _src(f"for i in range(6):\n    {IMG}\nreturn 1\n")
    prior = Prior(committed={_site(src): 3}, usd=0.06, calls=3)
    assert check(src, prior=prior).facts.new_spend.calls == {"image.generate": 3}


def test_branches_keep_the_maximum():
    # the frozen call is in one branch, two new calls in the other: at most 2 new calls
    src = _src(f"if args['a']:\n    {IMG}\nelse:\n    {IMG}\n    {IMG}\nreturn 1\n")
    prior = Prior(committed={_site(src, 0): 1}, usd=0.02, calls=1)
    assert check(src, prior=prior).facts.new_spend.calls == {"image.generate": 2}


def test_r11_bounds_new_spend_against_what_is_left():
    src = _src(f"a = {IMG}\nb = {IMG}\nc = {IMG}\nd = {IMG}\nreturn 1\n")
    frozen = {_site(src, j): 1 for j in range(3)}
    env = {"budget": {"usd": 0.07, "calls": 10}}
    # three calls committed for $0.06 leave $0.01 of $0.07: the one new call ($0.02) does not fit
    left_too_little = check(src, env, prior=Prior(frozen, usd=0.06, calls=3))
    assert [v.rule for v in left_too_little.errors] == ["R11"]
    assert "$0.0100 left of the budget's $0.0700 ($0.0600 already spent)" in \
        left_too_little.errors[0].message
    # the same prefix committed for less than catalog price: the new call fits
    assert check(src, env, prior=Prior(frozen, usd=0.03, calls=3)).valid
    # and without a prior the replays count at catalog price: over the budget
    assert [v.rule for v in check(src, env).errors] == ["R11"]


def test_r11_counts_calls_already_made():
    src = _src(f"a = {IMG}\nb = {IMG}\nreturn 1\n")
    env = {"budget": {"usd": 1.0, "calls": 4}}
    frozen = {_site(src, 0): 1}
    assert check(src, env, prior=Prior(frozen, usd=0.02, calls=3)).valid  # 1 new, 1 left
    refused = check(src, env, prior=Prior(frozen, usd=0.02, calls=4))     # 1 new, 0 left
    assert "1 new capability calls, above the 0 left of the budget's 4 (4 already made)" in \
        refused.errors[0].message


@given(st.integers(0, 8), st.integers(0, 8), st.integers(0, 3))
def test_new_spend_never_exceeds_the_whole_bound(loop, committed, extra):
    src = _src(f"for i in range({loop}):\n    {IMG}\n" + f"{IMG}\n" * extra + "return 1\n")
    report = check(src, prior=Prior({_site(src): committed}, usd=0.0, calls=committed))
    whole, new = report.facts.spend_bound, report.facts.new_spend
    assert new is not None and new.total_calls <= whole.total_calls
    assert new.total_calls == max(0, loop - committed) + extra
