"""Effect classes at the broker: a retry-safe capability retries an unresolved call on its own,
and a call whose outcome the provider cannot know stops the run as unresolved when, and only
when, the capability fails closed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from frostline.capabilities.catalog import Capability, Catalog
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.contract.identity import Identity, digest
from frostline.errors import ProviderError
from tests.runtime.helpers import run

OBJ = {"type": "object"}


def catalog(effect: str) -> Catalog:
    return Catalog([Capability("tool.act", True, OBJ, 0.0).with_effect(effect)])


class Flaky:
    """Loses the connection on the calls listed in `lose` (1-based), else echoes."""

    def __init__(self, lose: tuple[int, ...] = ()) -> None:
        self.lose = lose
        self.calls: list[dict[str, Any]] = []

    def capabilities(self) -> frozenset[str]:
        return frozenset({"tool.act"})

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        self.calls.append(dict(payload))
        if len(self.calls) in self.lose:
            raise ProviderError("tool.act: the server died in the middle of the call",
                                error_code="ServerDied", outcome_unknown=True)
        return ProviderResult({"done": payload.get("n")})


ONE = """
async def orchestrate(ctx, args):
    return await ctx.run("tool.act", {"n": 1})
"""


def test_an_unknown_outcome_of_a_side_effecting_call_stops_the_run_unresolved(store):
    provider = Flaky(lose=(1,))
    out = run(store, "r", ONE, provider, catalog=catalog("side_effecting"))
    assert out.status == "unresolved" and out.exit_code == 5
    assert out.error["code"] == "unresolved" and out.error["cause"]["error_code"] == "ServerDied"
    (pending,) = store.unresolved_calls("r")  # the attempt record stays pending
    assert [e.kind for e in store.list_events("r")].count("unresolved") == 1
    again = run(store, "r", ONE, provider, catalog=catalog("side_effecting"))
    assert again.status == "unresolved" and len(provider.calls) == 1  # nothing re-sent
    store.reconcile_call("r", pending.identity, abandon=False, result={"done": 1})
    last = run(store, "r", ONE, provider, catalog=catalog("side_effecting"))
    assert (last.status, last.replayed, last.executed) == ("succeeded", 1, 0)
    assert len(provider.calls) == 1


@pytest.mark.parametrize("effect", ["read_only", "idempotent"])
def test_an_unknown_outcome_of_a_repeatable_call_is_an_ordinary_failure(store, effect):
    provider = Flaky(lose=(1,))
    out = run(store, "r", ONE, provider, catalog=catalog(effect))
    assert out.status == "failed" and store.unresolved_calls("r") == []
    again = run(store, "r", ONE, provider, catalog=catalog(effect))
    assert (again.status, again.executed) == ("succeeded", 1)


def _crashed_call(store: Any) -> None:
    """What a host killed after the attempt record and before the commit leaves behind."""
    store.create_run("r", {})
    store.start_attempt("r", source=ONE, annotated="", report={})
    store.finish_attempt("r", 1, status="failed")
    store.begin_call("r", 1, Identity("orchestrate/#0", (), 0), "tool.act", digest({"n": 1}))


def test_a_retry_safe_capability_retries_an_unresolved_call_automatically(store):
    _crashed_call(store)
    provider = Flaky()
    out = run(store, "r", ONE, provider, catalog=catalog("idempotent"))
    assert (out.status, out.executed) == ("succeeded", 1)
    retry = [e.data for e in store.list_events("r") if e.kind == "unresolved_retry"]
    assert retry and retry[0]["reason"] == "idempotent"
    assert store.unresolved_calls("r") == []


def test_a_side_effecting_capability_does_not(store):
    _crashed_call(store)
    provider = Flaky()
    out = run(store, "r", ONE, provider, catalog=catalog("side_effecting"))
    assert out.status == "unresolved" and provider.calls == []
