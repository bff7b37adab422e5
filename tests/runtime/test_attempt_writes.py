"""An attempt's own records: queued together, not each waited for, and never lost silently.

`attempt_started` rides with the attempt's next write; the certificate, the attempt's record,
the run's status and `attempt_finished` are queued together as the attempt ends, so the store
commits them in one transaction rather than four. Order and outcomes do not change: the events
keep their order, and a write that fails is raised as it was when each was waited for.
"""

from __future__ import annotations

from typing import Any

import pytest

from frostline.errors import FrostlineError
from frostline.providers.local import LocalProviders
from frostline.runtime import certificates
from frostline.store import Store
from tests.runtime.helpers import run

NO_CALLS = """
async def orchestrate(ctx, args):
    return 1
"""

TWO_CALLS = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    b = await ctx.run("echo", {"n": 2})
    return a["n"] + b["n"]
"""


def transactions(store: Any) -> int:
    return int(store.group_commit_stats[0])


def test_an_attempt_without_calls_costs_two_transactions_not_six(store: Store) -> None:
    store.create_run("r1", {})
    run(store, "r1", NO_CALLS, LocalProviders())  # the catalog is stored once per run
    before = transactions(store)
    outcome = run(store, "r1", NO_CALLS, LocalProviders())
    assert outcome.status == "succeeded"
    # start_attempt is waited for (its number is needed); everything after it is queued
    # behind it and committed together. Waited for one by one, they took six.
    assert transactions(store) - before <= 3
    kinds = [e.kind for e in store.list_events("r1")]
    assert kinds == ["attempt_started", "attempt_finished"] * 2
    attempt = store.list_attempts("r1")[-1]
    assert (attempt.status, attempt.result) == ("succeeded", 1)
    assert store.get_run("r1").status == "succeeded"  # type: ignore[union-attr]
    cert = certificates.latest(store, "r1")
    assert cert is not None and cert["attempt"] == 2


def test_events_keep_their_order_around_the_calls(store: Store) -> None:
    store.create_run("r1", {})
    assert run(store, "r1", TWO_CALLS, LocalProviders()).status == "succeeded"
    kinds = [e.kind for e in store.list_events("r1")]
    assert kinds == ["attempt_started", "executed", "executed", "attempt_finished"]
    assert certificates.verify(store, "r1")["consistent"]


def test_a_certificate_the_store_refuses_is_raised(store: Store,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_run("r1", {})
    real = certificates.current

    def unstorable(s: Store, run_id: str, attempt: int) -> dict[str, Any]:
        return {**real(s, run_id, attempt), "bad": float("nan")}  # JSON cannot carry NaN

    monkeypatch.setattr(certificates, "current", unstorable)
    with pytest.raises(FrostlineError, match="cannot be stored"):
        run(store, "r1", TWO_CALLS, LocalProviders())
    # The calls were committed before the end; the failed write kept nothing of itself.
    assert len(store.list_slots("r1")) == 2
    assert certificates.latest(store, "r1") is None
