"""Issue 30: the runtime side of a rebinding — the digest checked at dispatch, the guard that
never pays for a rebound request before its replay, the ledger, the certificate (both stores)."""

from __future__ import annotations

import asyncio

import pytest

from frostline.capabilities.envelope import Envelope
from frostline.contract.certificate import CertificateCorrupted, check_chain_of
from frostline.contract.identity import Identity
from frostline.contract.prefix import load_prefix
from frostline.runtime import certificates
from frostline.runtime.broker import Broker
from tests.runtime.helpers import echo_ns, local, run

V1 = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    b = await ctx.run("echo", {"n": 2})
    raise ValueError("v1 stops after two calls")
"""
MOVED = """
async def go(ctx, n):
    return await ctx.run("echo", {"n": n})


async def orchestrate(ctx, args):
    a = await go(ctx, 1)
    b = await go(ctx, 2)
    c = await go(ctx, 3)
    return [a["n"], b["n"], c["n"]]
"""
REBIND = {"relocation": "rebind"}
OLD0, OLD1 = Identity("orchestrate/#0", (), 0), Identity("orchestrate/#1", (), 0)
NEW0 = Identity("orchestrate.go/#0", (), 0)


def broker(store, tmp_path, rebinding) -> Broker:
    return Broker(store, "r", 9, envelope=Envelope(), providers=local(tmp_path),
                  allowlist={"orchestrate.go/#0": "echo", "orchestrate.h/#0": "echo"},
                  prefix=load_prefix(store, "r"), rebinding=rebinding)


def frame(b: Broker, site: str, n: int) -> dict:
    return {"type": "call", "nonce": b.nonce, "site": site, "path": [],
            "capability": "echo", "payload": {"n": n}}


async def submit(b: Broker, *frames: dict) -> list[dict]:
    replies = [await b.submit(f) for f in frames]
    await b.drain()
    return replies


def test_issue30_a_rebound_identity_with_another_digest_diverges_and_dispatches_nothing(
        store, tmp_path):
    run(store, "r", V1, local(tmp_path))
    b = broker(store, tmp_path, {NEW0: OLD0})
    (reply,) = asyncio.run(submit(b, frame(b, "orchestrate.go/#0", 7)))
    assert reply["error"]["code"] == "divergence"
    assert reply["error"]["bound_to"] == str(OLD0)
    assert b.stats.provider_calls == 0 and echo_ns(tmp_path / "provider.jsonl") == [1, 2]


def test_issue30_a_rebound_request_is_never_paid_before_its_replay(store, tmp_path):
    run(store, "r", V1, local(tmp_path))
    b = broker(store, tmp_path, {NEW0: OLD0})
    # an unbound identity sends the rebound request first: refused before any dispatch
    first, = asyncio.run(submit(b, frame(b, "orchestrate.h/#0", 1)))
    assert first["error"]["code"] == "divergence" and "rebound" in first["error"]["message"]
    assert b.stats.provider_calls == 0 and echo_ns(tmp_path / "provider.jsonl") == [1, 2]
    # in order, the replay comes first and a later equal request is new work
    b = broker(store, tmp_path, {NEW0: OLD0})
    replay, again = asyncio.run(submit(b, frame(b, "orchestrate.go/#0", 1),
                                       frame(b, "orchestrate.h/#0", 1)))
    assert replay == {"ok": True, "result": {"n": 1}} and again["ok"]
    assert b.stats.calls[0]["moved_from"] == str(OLD0)


def test_issue30_the_ledger_counts_a_rebound_slot_at_its_new_site(store, tmp_path):
    run(store, "r", V1, local(tmp_path), envelope=REBIND)
    twice = MOVED.replace("c = await go(ctx, 3)", "c = await go(ctx, 2)")
    out = run(store, "r", twice, local(tmp_path))
    # the third call repeats n=2 at the helper's site, where the rebinding placed the slot
    assert out.gate is not None and out.gate.accepted_by == "trace"
    assert [r["committed_occurrences"] for r in out.semantic_repeats] == [[1]]
    assert out.status == "failed" and out.executed == 0  # auto: deny for side-effecting echo
    assert echo_ns(tmp_path / "provider.jsonl") == [1, 2]


def test_issue30_the_certificate_covers_the_rebinding(store, tmp_path):
    run(store, "r", V1, local(tmp_path), envelope=REBIND)
    out = run(store, "r", MOVED, local(tmp_path))
    assert (out.status, out.replayed, out.executed) == ("succeeded", 2, 1), out.error
    assert echo_ns(tmp_path / "provider.jsonl") == [1, 2, 3]
    cert = certificates.latest(store, "r")
    assert [r["bound_to"] for r in cert["rebinding"]] == [str(OLD0), str(OLD1)]
    assert certificates.verify(store, "r")["consistent"]
    # a rebinding the store holds but the certificate does not is a difference
    store.put_rebinding("r", out.attempt, [{"identity": "orchestrate.go/#0@:9",
                                            "bound_to": str(OLD1)}])
    found = certificates.verify(store, "r")
    assert not found["consistent"]
    assert [d["kind"] for d in found["differences"]] == ["rebinding_changed"]
    # a certificate whose rebinding was edited is corrupted
    forged = {**cert, "rebinding": [{**cert["rebinding"][0], "bound_to": str(OLD1)},
                                    cert["rebinding"][1]]}
    with pytest.raises(CertificateCorrupted, match="rebinding digest"):
        check_chain_of(forged, "r")
