"""One spend figure: a call costs what its provider reports in its usage, a rejected call 0
unless the provider says otherwise, an unsettled call its catalog price. The attempt's
figure, the run's figure (`show`, the API), and the budget's running total agree."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability
from frostline.capabilities.costs import call_cost, rejected_cost, reported_cost
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.identity import Identity
from frostline.errors import ProviderError
from frostline.runtime.describe import describe_run
from frostline.runtime.spent import run_spent_usd
from tests.runtime.helpers import local, run

PRICED = DEFAULT_CATALOG.extended(Capability("echo", True, {"type": "object"}, 0.01))


class Reporting:
    """Wraps a provider. A payload's `cost` is the cost it reports in its usage (`"none"`:
    it reports no cost); `fail` rejects the call, reporting `fail_cost` if given."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return self.inner.honours_idempotency_keys(capability)

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        if payload.get("fail"):
            extra = {"cost_usd": payload["fail_cost"]} if "fail_cost" in payload else {}
            raise ProviderError(f"{capability}: rejected (HTTP 400 InvalidParameter)",
                                status=400, error_code="InvalidParameter", **extra)
        done = await self.inner.invoke(capability, payload, ctx)
        usage = {k: v for k, v in done.usage.items() if k != "cost_usd"}
        if payload.get("cost") != "none":
            usage["cost_usd"] = payload.get("cost", done.usage.get("cost_usd"))
        return ProviderResult(done.result, usage)


MIXED = """
async def orchestrate(ctx, args):
    for p in [{"fail": True}, {"fail": True, "fail_cost": 0.003}]:
        try:
            await ctx.run("echo", p)
        except Exception:
            pass
    await ctx.run("echo", {"cost": 0.005})
    await ctx.run("echo", {"cost": "none"})
    return "done"
"""


def test_the_rule():
    assert call_cost({"cost_usd": 0.005, "tokens": 3}, 0.01) == 0.005
    assert call_cost({"tokens": 3}, 0.01) == 0.01          # reported nothing: catalog price
    assert call_cost({"cost_usd": True}, 0.01) == 0.01     # not a cost
    assert rejected_cost({"code": "provider", "status": 400}) == 0.0
    assert rejected_cost({"code": "provider", "cost_usd": 0.003}) == 0.003
    assert rejected_cost({"usage": {"cost_usd": 0.004}}) == 0.004
    for bad in (-1, math.nan, math.inf, "0.01", None, [0.01]):
        assert reported_cost({"cost_usd": bad}) is None


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5) | st.none()
       | st.text(max_size=3) | st.booleans(), st.floats(0, 10))
def test_a_cost_is_never_negative_nor_infinite(value, price):
    for cost in (call_cost({"cost_usd": value}, price), rejected_cost({"cost_usd": value})):
        assert cost >= 0 and math.isfinite(cost)


def test_attempt_run_and_show_agree_on_what_the_provider_reported(store, tmp_path):
    out = run(store, "r", MIXED, Reporting(local(tmp_path, catalog=PRICED)),
              catalog=PRICED, skip_checker=True)
    assert out.status == "succeeded" and out.provider_calls == 4
    # rejected: 0 and 0.003 (reported); committed: 0.005 (reported) and 0.01 (catalog price)
    assert out.spend_usd == pytest.approx(0.018)
    assert run_spent_usd(store, "r") == pytest.approx(0.018)
    shown = describe_run(store, "r")
    assert shown["spend_usd"] == pytest.approx(0.018)
    assert sum(a["spend_usd"] for a in shown["attempts"]) == pytest.approx(0.018)


def test_a_rejected_call_does_not_use_up_the_budget(store, tmp_path):
    # $0.025 at $0.01 a call: two rejected calls and two accepted ones fit (at catalog price
    # for every dispatch they would not: the fourth call would be refused).
    src = """
    async def orchestrate(ctx, args):
        for p in [{"fail": True}, {"fail": True}]:
            try:
                await ctx.run("echo", p)
            except Exception:
                pass
        await ctx.run("echo", {"n": 1})
        await ctx.run("echo", {"n": 2})
        return "done"
    """
    out = run(store, "r", src, Reporting(local(tmp_path, catalog=PRICED)), catalog=PRICED,
              envelope={"budget": {"usd": 0.025, "calls": 10}}, skip_checker=True)
    assert out.status == "succeeded" and out.provider_calls == 4
    assert out.spend_usd == pytest.approx(0.02)


def test_the_next_attempt_starts_from_what_was_spent(store, tmp_path):
    provider = Reporting(local(tmp_path, catalog=PRICED))
    env = {"budget": {"usd": 0.025, "calls": 10}}
    v1 = """
    async def orchestrate(ctx, args):
        for p in [{"fail": True}, {"fail": True}]:
            try:
                await ctx.run("echo", p)
            except Exception:
                pass
        await ctx.run("echo", {"n": 1})
        raise ValueError("stop")
    """
    assert run(store, "r", v1, provider, catalog=PRICED, envelope=env,
               skip_checker=True).status == "failed"
    v2 = v1.replace('raise ValueError("stop")', 'await ctx.run("echo", {"n": 2})\n'
                    '        return "done"')
    second = run(store, "r", v2, provider, catalog=PRICED, skip_checker=True)
    # spent so far $0.01 (the rejected calls cost nothing), so one more $0.01 call fits
    assert second.status == "succeeded" and second.executed == 1, second.error
    assert run_spent_usd(store, "r") == pytest.approx(0.02)


def test_a_call_left_pending_counts_at_its_catalog_price(store, tmp_path):
    run(store, "r", 'async def orchestrate(ctx, args):\n    return 1\n',
        local(tmp_path, catalog=PRICED), catalog=PRICED)
    store.begin_call("r", 1, Identity("orchestrate/#0", (), 0), "echo", "d" * 64)
    assert run_spent_usd(store, "r") == pytest.approx(0.01)
