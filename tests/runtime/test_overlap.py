"""A free read-only call is sent while its attempt record becomes durable (dispatch's overlap
rule), and nothing else is: a paid or side-effecting call still waits for its record. Whatever
the store does meanwhile, the script sees the result only once the record is durable and every
earlier write succeeded; a SIGKILL in the window leaves nothing to reconcile."""

from __future__ import annotations

import threading
from dataclasses import replace

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.errors import StoreUnavailable
from frostline.store import open_store
from frostline.testing import FaultyStore
from tests.runtime.helpers import local, logged, run
from tests.runtime.test_crash import ONE_REVIEW, executions, host, killed

# text.generate is read-only; at price 0 it is free, so it may overlap its record
FREE = Catalog([replace(c, price_usd=0.0) if c.name == "text.generate" else c
                for c in DEFAULT_CATALOG])
ECHO = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1})
"""


class Ordered(FaultyStore):
    """Records when each attempt record became durable against when the provider ran. With
    `hold`, an attempt record waits (up to 30 s) until the provider has been called."""

    def __init__(self, inner, order, invoked, *, hold=False, lose=False):
        super().__init__(inner, fail_reads=False, fail_writes=False)
        self.order, self.invoked, self.hold, self.lose = order, invoked, hold, lose

    def begin_call(self, *args, **kwargs):
        if self.hold:
            self.invoked.wait(30)
        if self.lose:
            self.faults += 1
            raise StoreUnavailable("injected: attempt record not written")
        call_id = self.inner.begin_call(*args, **kwargs)
        self.order.append("durable")
        return call_id


class Watched:
    def __init__(self, inner, order, invoked):
        self.inner, self.order, self.invoked = inner, order, invoked

    def capabilities(self):
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability):
        return self.inner.honours_idempotency_keys(capability)

    async def invoke(self, capability, payload, ctx):
        self.order.append("invoked")
        self.invoked.set()
        return await self.inner.invoke(capability, payload, ctx)


def _setup(store, tmp_path, catalog, **kw):
    order, invoked = [], threading.Event()
    return (Ordered(store, order, invoked, **kw),
            Watched(local(tmp_path, catalog), order, invoked), order)


def test_a_free_read_only_call_is_sent_before_its_record_is_durable(store, tmp_path):
    faulty, provider, order = _setup(store, tmp_path, FREE, hold=True)
    out = run(faulty, "r", ONE_REVIEW, provider, catalog=FREE)
    assert out.status == "succeeded", out.error
    assert order == ["invoked", "durable"]  # the record was held until the call was sent
    assert [s.capability for s in store.list_slots("r")] == ["text.generate"]


def test_paid_and_side_effecting_calls_wait_for_their_record(store, tmp_path):
    for run_id, source in (("paid", ONE_REVIEW), ("effect", ECHO)):
        faulty, provider, order = _setup(store, tmp_path, DEFAULT_CATALOG)
        out = run(faulty, run_id, source, provider, catalog=DEFAULT_CATALOG)
        assert out.status == "succeeded", out.error
        assert order == ["durable", "invoked"]


def test_a_lost_record_discards_the_overlapped_result(store, tmp_path):
    faulty, provider, order = _setup(store, tmp_path, FREE, hold=True, lose=True)
    out = run(faulty, "r", ONE_REVIEW, provider, catalog=FREE)
    assert out.status == "failed" and out.error["type"] == "StoreUnavailable"
    assert order == ["invoked"] and out.provider_calls == 1  # sent, never delivered
    assert store.list_slots("r") == [] and store.list_calls("r") == []
    again = run(store, "r", ONE_REVIEW, local(tmp_path, FREE), catalog=FREE)
    assert (again.status, again.executed) == ("succeeded", 1)  # read-only: simply runs


def test_a_sigkill_while_the_record_is_in_flight_leaves_nothing_to_reconcile(store_url,
                                                                            tmp_path):
    killed(host(store_url, "k", ONE_REVIEW, "read_only_in_flight", tmp_path))
    assert executions(tmp_path, "text.generate") == 0  # killed inside the provider
    with open_store(store_url) as store:
        assert store.list_calls("k") == []  # the record never became durable
        out = run(store, "k", ONE_REVIEW, local(tmp_path, FREE), catalog=FREE)
        assert (out.status, out.executed) == ("succeeded", 1)
        assert [e["capability"] for e in logged(tmp_path / "provider.jsonl")] == [
            "text.generate"]
        assert store.unresolved_calls("k") == []
