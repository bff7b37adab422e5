"""The runtime rule on its own, over a real store's frozen prefix: what it decides for one
call, what it records in the call's row, the budget it claims and the events it queues."""

from __future__ import annotations

import asyncio

from frostline.contract.identity import digest
from frostline.store import Store
from tests.runtime.attempt_parts import Parts, commit, envelope, ident


def test_a_new_call_is_let_through_with_its_digest_price_and_claim(store: Store) -> None:
    parts = Parts(store, "r")
    call = parts.call(0, {"n": 1})
    assert parts.rule.decide(call, parts.env) is None
    assert call.digest == digest({"n": 1}) and (call.price, call.key) == (0.0, None)
    assert call.fails_closed  # echo has effects and LocalProviders keeps no keys here
    assert call.row == {"identity": "orchestrate/#0@:0", "capability": "echo",
                        "digest": call.digest}  # no outcome: dispatch decides it
    assert parts.spend.calls == 1 and parts.stop.error is None


def test_a_committed_identity_with_the_same_request_replays_without_a_claim(
        store: Store) -> None:
    store.create_run("r", envelope().to_dict())
    commit(store, "r", ident(0), {"n": 1}, {"n": 1, "stored": True})
    parts = Parts(store, "r")
    call = parts.call(0, {"n": 1})
    assert parts.rule.decide(call, parts.env) == {"ok": True,
                                                  "result": {"n": 1, "stored": True}}
    assert call.outcome == "replayed" and parts.stats.replayed == 1
    assert parts.spend.calls == 0 and parts.trail.buffered()  # the event waits for company
    asyncio.run(parts.settle_all())
    assert [kind for kind, _ in parts.events()] == ["replay"]


def test_a_committed_identity_with_another_payload_diverges_and_stops(store: Store) -> None:
    store.create_run("r", envelope().to_dict())
    commit(store, "r", ident(0), {"n": 1}, {"n": 1})
    parts = Parts(store, "r")
    call = parts.call(0, {"n": 2})
    reply = parts.rule.decide(call, parts.env)
    assert reply is not None and reply["error"]["kind"] == "stop"
    assert reply["error"]["type"] == "Divergence" and call.outcome == "diverged"
    assert parts.stop.error is not None and parts.stop.error.code == "divergence"
    assert len(parts.stats.divergences) == 1 and parts.spend.calls == 0
    asyncio.run(parts.settle_all())
    assert [kind for kind, _ in parts.events()] == ["divergence"]


def test_an_ungranted_capability_is_denied_and_stops_the_run(store: Store) -> None:
    parts = Parts(store, "r")
    call = parts.call(0, {"n": 1})
    reply = parts.rule.decide(call, parts.env.with_grants(("text.generate",)))
    assert reply is not None and reply["error"]["type"] == "GrantDenied"
    assert call.outcome == "denied" and call.row["error"]["capability"] == "echo"
    assert parts.stop.error is not None and len(parts.stats.denials) == 1
    assert parts.spend.calls == 0


def test_an_invalid_payload_is_a_catchable_denial_that_spends_nothing(store: Store) -> None:
    parts = Parts(store, "r")
    call = parts.call(0, {"size": "huge"}, capability="image.generate")
    reply = parts.rule.decide(call, parts.env)
    assert reply is not None and reply["error"]["kind"] == "raise"
    assert reply["error"]["type"] == "PayloadInvalid" and call.outcome == "invalid"
    assert parts.stop.error is None and parts.spend.calls == 0


def test_the_call_over_the_budget_is_denied_and_claims_nothing(store: Store) -> None:
    parts = Parts(store, "r", env=envelope(calls=1))
    first, second = parts.call(0, {"n": 1}), parts.call(1, {"n": 2})
    assert parts.rule.decide(first, parts.env) is None
    reply = parts.rule.decide(second, parts.env)
    assert reply is not None and reply["error"]["type"] == "BudgetExceeded"
    assert second.outcome == "denied" and parts.spend.calls == 1
    assert parts.stop.error is not None
