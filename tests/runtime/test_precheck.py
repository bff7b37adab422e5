"""The spend pre-check of an attempt: the static bound of the calls it can add beyond the
replays of its frozen prefix, against what is left of the budget after what the run spent.
The dispatch-time check is unchanged (tests/runtime/test_rule.py)."""

from __future__ import annotations

import pytest

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability
from tests.runtime.helpers import local, logged, run

SHOTS_V1 = """
FORMATS = ["1024x1024", "1536x1024", "1024x1536", "2048x2048"]


async def orchestrate(ctx, args):
    async def render(i):
        return await ctx.run("image.generate", {"prompt": f"shot {i}", "size": FORMATS[i]})

    images = await ctx.parallel([render(i) for i in range(4)])
    return [img["artifact"] for img in images]
"""
SHOTS_V2 = SHOTS_V1.replace('"2048x2048"', '"1024x1024"')


def _images(path) -> int:
    return sum(1 for e in logged(path) if e["capability"] == "image.generate")


def test_a_repair_is_not_refused_for_the_replays_it_would_pay_if_they_were_counted(store, tmp_path):
    """Three shots committed at $0.02, one rejected; image.generate now costs $0.04. The
    repair's whole bound at today's price, 4 x $0.04 = $0.16, is over the $0.15 budget; what it
    can add, one $0.04 call, fits the $0.09 left. It runs and pays for one image."""
    env = {"budget": {"usd": 0.15, "calls": 10}}
    first = run(store, "r", SHOTS_V1, local(tmp_path), envelope=env)
    assert first.status == "failed" and first.executed == 3 and first.spend_usd == pytest.approx(0.06)
    dearer = DEFAULT_CATALOG.extended(Capability(
        "image.generate", True, dict(DEFAULT_CATALOG.get("image.generate").input_schema), 0.04))
    second = run(store, "r", SHOTS_V2, local(tmp_path, catalog=dearer), catalog=dearer)
    assert second.status == "succeeded", second.error
    assert (second.replayed, second.executed) == (3, 1)
    assert second.spend_usd == pytest.approx(0.04)
    report = store.list_attempts("r")[-1].report
    assert report["facts"]["spend_bound"]["usd"] == pytest.approx(0.16)
    assert report["facts"]["new_spend"]["calls"] == {"image.generate": 1}
    assert _images(tmp_path / "provider.jsonl") == 5  # 4 in attempt 1, 1 in attempt 2


def test_an_attempt_is_refused_when_what_the_run_spent_leaves_too_little(store, tmp_path):
    """Four calls at one site ($0.08 of $0.10), then the repair runs that loop once (three
    identities orphaned) and adds two new calls. Its whole bound, 3 x $0.02, fits the budget;
    what it adds, $0.04, does not fit the $0.02 left: refused before anything runs, where
    without the pre-check it would pay one more image and then be stopped by the broker."""
    env = {"budget": {"usd": 0.10, "calls": 20}}
    v1 = """
    async def orchestrate(ctx, args):
        for i in range(4):
            await ctx.run("image.generate", {"prompt": f"take {i}", "size": "512x512"})
        raise ValueError("the editor wants two more angles")
    """
    v2 = """
    async def orchestrate(ctx, args):
        for i in range(1):
            await ctx.run("image.generate", {"prompt": f"take {i}", "size": "512x512"})
        a = await ctx.run("image.generate", {"prompt": "angle a", "size": "512x512"})
        b = await ctx.run("image.generate", {"prompt": "angle b", "size": "512x512"})
        return [a["artifact"], b["artifact"]]
    """
    p = local(tmp_path)
    assert run(store, "r", v1, p, envelope=env).spend_usd == pytest.approx(0.08)
    second = run(store, "r", v2, p)
    assert second.status == "rejected" and second.provider_calls == 0
    assert "$0.0200 left of the budget's $0.1000 ($0.0800 already spent)" in second.error["message"]
    assert _images(tmp_path / "provider.jsonl") == 4  # nothing more was paid for
    report = store.list_attempts("r")[-1].report
    assert report["facts"]["spend_bound"]["usd"] == pytest.approx(0.06)
    assert report["facts"]["new_spend"]["usd"] == pytest.approx(0.04)
