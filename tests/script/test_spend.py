"""The static spend bound: loop bounds × fanout widths × helper expansion, at catalog prices."""

from __future__ import annotations

import textwrap

import pytest

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability
from frostline.script import check

IMG = 'await ctx.run("image.generate", {"prompt": "p", "size": "512x512"})'
REV = 'await ctx.run("review.visual", {"image": "sha256:" + "0" * 64})'


def _bound(src: str):  # type: ignore[no-untyped-def]
    return check(textwrap.dedent(src).lstrip("\n")).facts.spend_bound


def test_sequential_and_loops() -> None:
    b = _bound(f"""
    async def orchestrate(ctx, args):
        await ctx.run("storyboard.plan", {{"brief": "b", "shots": 4}})
        for i in range(3):
            {IMG}
            for s in args["x"][:2]:
                {REV}
    """)
    assert b.calls == {"image.generate": 3, "review.visual": 6, "storyboard.plan": 1}
    assert b.usd == pytest.approx(0.002 + 3 * 0.02 + 6 * 0.001)
    assert b.bounded and b.total_calls == 10


def test_if_else_takes_the_max_per_capability() -> None:
    b = _bound(f"""
    async def orchestrate(ctx, args):
        if args["a"]:
            {IMG}
            {IMG}
        elif args["b"]:
            {REV}
        else:
            {IMG}
    """)
    assert b.calls == {"image.generate": 2, "review.visual": 1}


def test_try_counts_body_plus_costliest_handler() -> None:
    b = _bound(f"""
    async def orchestrate(ctx, args):
        try:
            {IMG}
        except ValueError:
            {IMG}
            {IMG}
        except Exception:
            {IMG}
        finally:
            {REV}
    """)
    assert b.calls == {"image.generate": 3, "review.visual": 1}


def test_helper_expansion_and_fanout() -> None:
    b = _bound(f"""
    async def gen(ctx, p):
        x = {IMG}
        y = {REV}
        return [x, y]

    async def orchestrate(ctx, args):
        first = await gen(ctx, "a")
        rest = await ctx.parallel([gen(ctx, s) for s in args["shots"][:4]])
        jobs = []
        for s in args["shots"][:3]:
            jobs.append(gen(ctx, s))
        more = await ctx.parallel(jobs)
        return [first, rest, more]
    """)
    assert b.calls == {"image.generate": 8, "review.visual": 8}


def test_pipeline_and_dag_expand_their_stages() -> None:
    b = _bound(f"""
    async def make(x):
        return {IMG}

    async def review(x):
        return {REV}

    async def orchestrate(ctx, args):
        out = await ctx.pipeline(args["items"][:5], make, review)
        d = await ctx.dag({{"a": (make, []), "b": (review, ["a"]), "c": (review, ["a"])}})
        return [out, d]
    """)
    assert b.calls == {"image.generate": 6, "review.visual": 7}


def test_comprehension_with_awaited_calls() -> None:
    b = _bound(f"""
    async def orchestrate(ctx, args):
        return [{IMG} for a in range(2) for b in ["x", "y", "z"]]
    """)
    assert b.calls == {"image.generate": 6}


def test_uncalled_helpers_do_not_spend() -> None:
    b = _bound(f"""
    async def unused(ctx):
        return {IMG}

    async def orchestrate(ctx, args):
        return 1
    """)
    assert b.calls == {} and b.usd == 0.0


def test_unbounded_loop_makes_the_bound_unbounded() -> None:
    b = _bound(f"""
    async def orchestrate(ctx, args):
        for s in args["x"]:
            {IMG}
    """)
    assert not b.bounded


def test_prices_come_from_the_given_catalog() -> None:
    catalog = DEFAULT_CATALOG.extended(Capability("image.generate", True, {"type": "object"}, 1.5))
    src = f"async def orchestrate(ctx, args):\n    for i in range(2):\n        {IMG}\n"
    assert check(src, catalog=catalog).facts.spend_bound.usd == pytest.approx(3.0)


def test_capability_multiset_counts_call_expressions() -> None:
    report = check(textwrap.dedent(f"""
    async def orchestrate(ctx, args):
        for i in range(4):
            {IMG}
        {IMG}
        {REV}
    """).lstrip("\n"))
    assert report.facts.capabilities == {"image.generate": 2, "review.visual": 1}
    assert report.facts.call_expressions == 3
    assert report.facts.spend_bound.calls == {"image.generate": 5, "review.visual": 1}
