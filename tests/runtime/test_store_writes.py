"""How the broker writes: queued without a thread hand-off, and settled before anything depends on them.

The broker waits for an attempt record before its dispatch, but hands a result back while its
commit is still becoming durable. What must hold instead (see frostline.runtime.broker):
- a dispatch never happens while a write queued before its attempt record is unsettled, so a
  result the script saw is committed before any call that could depend on it runs;
- a commit that fails after the reply stops the run, and the next call is not dispatched (its
  attempt record is marked failed, so nobody has to reconcile a call that never ran);
- a commit that finds the identity committed with another result stops the run too;
- a 32-way fanout puts 32 attempt records in the store's queue at once (they can share one
  transaction), without one thread per waiting write.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.capabilities.envelope import Budget, Envelope
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.identity import Identity
from frostline.contract.prefix import load_prefix
from frostline.contract.records import CallStatus
from frostline.errors import FrostlineError, StoreUnavailable
from frostline.providers.local import LocalProviders
from frostline.runtime.broker import Broker
from frostline.store import Store
from frostline.store.writes import BeginCall, CommitCall, Write
from tests.runtime.helpers import echo_ns

SITE = "orchestrate/#0"


def _env(calls: int, concurrency: int = 8) -> Envelope:
    return Envelope(budget=Budget(usd=10.0, calls=calls), concurrency=concurrency, max_fanout=64)


def _broker(store: Any, real: Store, run_id: str, providers: Provider, *, calls: int = 100,
            concurrency: int = 8) -> Broker:
    real.create_run(run_id, _env(calls, concurrency).to_dict())
    number = real.start_attempt(run_id, source="#", annotated="#", report={}).number
    return Broker(store, run_id, number, envelope=_env(calls, concurrency), providers=providers,
                  allowlist={SITE: "echo"}, prefix=load_prefix(real, run_id))


def _frame(broker: Broker, payload: dict[str, Any], path: list[int]) -> dict[str, Any]:
    return {"type": "call", "nonce": broker.nonce, "site": SITE, "path": path,
            "capability": "echo", "payload": payload}


class CommittedBeforeDispatch:
    """A provider that checks, at every dispatch, that every result the script had received
    when it sent the frame is committed (read through the store's own read connection)."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.inner = LocalProviders()
        self.store = store
        self.run_id = run_id
        self.replied: list[str] = []  # identities whose reply reached the script, in order
        self.seen_at_submit: dict[str, list[str]] = {}
        self.violations: list[tuple[str, list[str]]] = []
        self.dispatches = 0

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        self.dispatches += 1
        committed = {str(s.identity) for s in self.store.list_slots(self.run_id)}
        missing = [i for i in self.seen_at_submit.get(ctx.identity, []) if i not in committed]
        if missing:
            self.violations.append((ctx.identity, missing))
        return await self.inner.invoke(capability, payload, ctx)


async def _call(broker: Broker, checker: CommittedBeforeDispatch, path: list[int], n: int
                ) -> dict[str, Any]:
    known = list(checker.replied)
    occurrence = n  # one path per branch, calls numbered from 0 on it
    ident = f"{SITE}@{','.join(map(str, path))}:{occurrence}"
    checker.seen_at_submit[ident] = known
    reply = await broker.submit(_frame(broker, {"p": path, "n": n}, path))
    assert reply["ok"], reply
    checker.replied.append(ident)
    return reply


@pytest.mark.parametrize("width,per_branch", [(1, 40), (8, 6)])
def test_no_dispatch_before_the_results_the_script_saw_are_committed(
        store: Store, width: int, per_branch: int) -> None:
    run_id = f"settle-{width}"
    checker = CommittedBeforeDispatch(store, run_id)
    broker = _broker(store, store, run_id, checker, calls=width * per_branch)
    paths = [[]] if width == 1 else [[b] for b in range(width)]

    async def branch(path: list[int]) -> None:
        for n in range(per_branch):
            await _call(broker, checker, path, n)

    async def go() -> None:
        await asyncio.gather(*(branch(p) for p in paths))
        await broker.drain()

    asyncio.run(go())
    assert broker.stop_error is None
    assert checker.dispatches == width * per_branch
    assert checker.violations == []
    # The check is not vacuous: most dispatches came after earlier replies.
    assert sum(bool(v) for v in checker.seen_at_submit.values()) >= width * (per_branch - 1)
    assert len(store.list_slots(run_id)) == width * per_branch


class HeldCommits:
    """A store proxy that holds the first commit's future until the test settles it."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.held: Future[Any] | None = None
        self.held_write: CommitCall | None = None
        self.begins = 0

    def submit(self, write: Write[Any]) -> Future[Any]:
        if isinstance(write, CommitCall) and self.held is None:
            self.held = Future()
            self.held_write = write
            return self.held
        if isinstance(write, BeginCall):
            self.begins += 1
        return self._inner.submit(write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def _until(predicate: Any) -> None:
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached in 10 s")


def test_a_commit_that_fails_after_the_reply_stops_the_next_dispatch(
        store: Store, tmp_path: Path) -> None:
    proxy = HeldCommits(store)
    broker = _broker(proxy, store, "settle-fail", LocalProviders(log_path=tmp_path / "p.jsonl"))

    async def go() -> dict[str, Any]:
        first = await broker.submit(_frame(broker, {"n": 1}, []))
        assert first["ok"] and first["result"] == {"n": 1}  # replied before its commit settled
        second = asyncio.ensure_future(broker.submit(_frame(broker, {"n": 2}, [])))
        await _until(lambda: proxy.begins == 2)  # the second attempt record is queued
        await asyncio.sleep(0.05)  # ... and durable; the dispatch still waits for the commit
        assert echo_ns(tmp_path / "p.jsonl") == [1]
        assert proxy.held is not None
        proxy.held.set_exception(StoreUnavailable("injected: the commit did not become durable"))
        reply = await second
        await broker.drain()
        return reply

    reply = asyncio.run(go())
    assert not reply["ok"] and reply["error"]["kind"] == "stop"
    assert isinstance(broker.stop_error, StoreUnavailable)
    assert echo_ns(tmp_path / "p.jsonl") == [1]  # the second call never reached the provider
    assert [r["outcome"] for r in broker.stats.calls] == ["store_unavailable", "stopped"]
    assert broker.stats.executed == 0
    calls = {str(c.identity): c for c in store.list_calls("settle-fail")}
    # The first call ran and is not committed: the next attempt must fail closed on it.
    assert calls[f"{SITE}@:0"].status is CallStatus.PENDING
    # The second never ran: its attempt record says so, and nobody has to reconcile it.
    assert calls[f"{SITE}@:1"].status is CallStatus.FAILED
    assert calls[f"{SITE}@:1"].error["code"] == "not_dispatched"
    assert [c.identity for c in store.unresolved_calls("settle-fail")] == [
        Identity(SITE, (), 0)]


def test_a_commit_that_finds_another_result_stops_the_run(store: Store, tmp_path: Path) -> None:
    proxy = HeldCommits(store)
    broker = _broker(proxy, store, "settle-other", LocalProviders(log_path=tmp_path / "p.jsonl"))

    async def go() -> dict[str, Any]:
        assert (await broker.submit(_frame(broker, {"n": 1}, [])))["ok"]
        # The store answers with a slot someone else committed for this identity.
        assert proxy.held is not None and proxy.held_write is not None
        proxy.held.set_result(replace(proxy.held_write.slot, result={"n": "someone else's"}))
        reply = await broker.submit(_frame(broker, {"n": 2}, []))
        await broker.drain()
        return reply

    reply = asyncio.run(go())
    assert not reply["ok"]
    assert isinstance(broker.stop_error, FrostlineError)
    assert "another writer" in broker.stop_error.message
    assert echo_ns(tmp_path / "p.jsonl") == [1]


class QueueCounter:
    """A store proxy that holds begin_call writes until `width` of them are queued together."""

    def __init__(self, inner: Store, width: int) -> None:
        self._inner = inner
        self.width = width
        self.held: list[tuple[Future[Any], BeginCall]] = []
        self.most_at_once = 0

    def submit(self, write: Write[Any]) -> Future[Any]:
        if not isinstance(write, BeginCall):
            return self._inner.submit(write)
        outer: Future[Any] = Future()
        self.held.append((outer, write))
        self.most_at_once = max(self.most_at_once, len(self.held))
        if len(self.held) == self.width:
            held, self.held = self.held, []
            for fut, begin in held:
                inner = self._inner.submit(begin)
                inner.add_done_callback(lambda f, fut=fut: fut.set_result(f.result()))
        return outer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_32_way_fanout_queues_32_attempt_records_at_once(store: Store) -> None:
    width = 32
    proxy = QueueCounter(store, width)
    broker = _broker(proxy, store, "queue-32", LocalProviders(), calls=width,
                     concurrency=width)

    async def fanout() -> list[dict[str, Any]]:
        tasks = [broker.submit(_frame(broker, {"b": b}, [b])) for b in range(width)]
        replies = await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await broker.drain()
        return replies

    replies = asyncio.run(fanout())
    assert all(r["ok"] for r in replies)
    assert proxy.most_at_once == width  # no write waited for another to be queued
    assert len(store.list_slots("queue-32")) == width


class Fixed:
    """A provider whose result has keys out of order and numbers a database might respell."""

    RESULT: ClassVar[dict[str, Any]] = {"zeta": 1, "a": [1e100, 1.5e-7, -0.5, 10**15], "mid": {"y": "é", "b": None}}

    def capabilities(self) -> frozenset[str]:
        return frozenset({"echo"})

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        return ProviderResult(self.RESULT)


def _shape(value: Any) -> Any:
    """The value with its key order and number types made visible."""
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return (type(value).__name__, value)


def test_the_first_reply_is_what_a_replay_returns(store: Store) -> None:
    first = _broker(store, store, "same-1", Fixed())

    async def once(broker: Broker) -> dict[str, Any]:
        reply = await broker.submit(_frame(broker, {"n": 1}, []))
        await broker.drain()
        return reply

    executed = asyncio.run(once(first))
    assert executed["ok"] and first.stats.executed == 1
    number = store.start_attempt("same-1", source="#", annotated="#", report={}).number
    second = Broker(store, "same-1", number, envelope=_env(10), providers=Fixed(),
                    allowlist={SITE: "echo"}, prefix=load_prefix(store, "same-1"))
    replayed = asyncio.run(once(second))
    assert second.stats.replayed == 1
    assert _shape(executed["result"]) == _shape(replayed["result"])
    assert _shape(executed["result"]) == _shape(Fixed.RESULT)


class FailsNthCommit:
    """A store proxy that fails the n-th commit write (0-based), now or a moment later."""

    def __init__(self, inner: Store, n: int | None, delay_s: float) -> None:
        self._inner = inner
        self.n = n
        self.delay_s = delay_s
        self.commits = 0
        self.failed_identity: str | None = None

    def submit(self, write: Write[Any]) -> Future[Any]:
        if isinstance(write, CommitCall):
            index, self.commits = self.commits, self.commits + 1
            if index == self.n:
                self.failed_identity = str(write.slot.identity)
                failed: Future[Any] = Future()
                err = StoreUnavailable("injected: this commit did not become durable")
                if self.delay_s:
                    threading.Timer(self.delay_s, failed.set_exception, (err,)).start()
                else:
                    failed.set_exception(err)
                return failed
        return self._inner.submit(write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


_RUNS = itertools.count()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(1, 5), per_branch=st.integers(1, 5),
       fail=st.one_of(st.none(), st.integers(0, 24)),
       delay_s=st.sampled_from([0.0, 0.001, 0.004]))
def test_nothing_acts_on_a_result_whose_commit_failed(
        sqlite_store: Store, width: int, per_branch: int, fail: int | None,
        delay_s: float) -> None:
    store = sqlite_store
    run_id = f"prop-{next(_RUNS)}"
    proxy = FailsNthCommit(store, fail, delay_s)
    checker = CommittedBeforeDispatch(store, run_id)
    broker = _broker(proxy, store, run_id, checker, calls=width * per_branch)
    paths = [[]] if width == 1 else [[b] for b in range(width)]
    submitted_after: dict[str, list[str]] = {}

    async def branch(path: list[int]) -> None:
        for n in range(per_branch):
            ident = f"{SITE}@{','.join(map(str, path))}:{n}"
            checker.seen_at_submit[ident] = known = list(checker.replied)
            submitted_after[ident] = known
            reply = await broker.submit(_frame(broker, {"p": path, "n": n}, path))
            if not reply["ok"]:
                return
            checker.replied.append(ident)

    async def go() -> None:
        await asyncio.gather(*(branch(p) for p in paths))
        await broker.drain()

    asyncio.run(go())
    committed = {str(s.identity) for s in store.list_slots(run_id)}
    dispatched = [c for c in store.list_calls(run_id) if c.status is not CallStatus.FAILED]
    # No dispatch saw a result the store had not committed.
    assert checker.violations == []
    # Every dispatched call is committed, except the one whose commit was lost (pending).
    lost = proxy.failed_identity
    assert {str(c.identity) for c in dispatched} - committed == ({lost} if lost else set())
    assert checker.dispatches == len(dispatched)
    if lost is None:
        assert broker.stop_error is None and len(committed) == width * per_branch
    else:
        assert isinstance(broker.stop_error, StoreUnavailable)
        # A frame sent after the lost result reached the script never reached the provider.
        dispatched_ids = {str(c.identity) for c in dispatched}
        assert not [i for i, seen in submitted_after.items()
                    if lost in seen and i in dispatched_ids]
        assert [str(c.identity) for c in store.unresolved_calls(run_id)] == [lost]


def test_a_replay_follows_grants_changed_during_the_attempt(store: Store) -> None:
    # The graph runtime narrows the grants to each state's allowlist between calls.
    first = _broker(store, store, "grants-1", LocalProviders())

    async def calls(broker: Broker, n: int) -> list[dict[str, Any]]:
        replies = [await broker.submit(_frame(broker, {"n": i}, [])) for i in range(n)]
        await broker.drain()
        return replies

    assert all(r["ok"] for r in asyncio.run(calls(first, 2)))
    number = store.start_attempt("grants-1", source="#", annotated="#", report={}).number
    second = Broker(store, "grants-1", number, envelope=_env(10), providers=LocalProviders(),
                    allowlist={SITE: "echo"}, prefix=load_prefix(store, "grants-1"))

    async def narrowed() -> list[dict[str, Any]]:
        ok = await second.submit(_frame(second, {"n": 0}, []))
        second.envelope = _env(10).with_grants(("image.generate",))  # echo no longer granted
        denied = await second.submit(_frame(second, {"n": 1}, []))
        await second.drain()
        return [ok, denied]

    ok, denied = asyncio.run(narrowed())
    assert ok["ok"] and second.stats.replayed == 1
    assert not denied["ok"] and denied["error"]["code"] == "grant_denied"
