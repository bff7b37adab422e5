"""The broker's store calls wait together, so a fanout's writes can share group commits.

A 32-way fanout issues 32 attempt records at once. If the broker ran its blocking store calls
on the event loop's default executor (min(32, cores + 4) threads), only a few of them could be
inside the store at a time, and the group committer could share an fsync among only those few.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from frostline.capabilities.envelope import Budget, Envelope
from frostline.capabilities.local import LocalProviders
from frostline.contract.prefix import load_prefix
from frostline.runtime.broker import Broker
from frostline.store import Store

WIDTH = 32


class Rendezvous:
    """A store proxy whose begin_call returns only once WIDTH callers are inside it together."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.barrier = threading.Barrier(WIDTH, timeout=30)

    def begin_call(self, *args: Any, **kwargs: Any) -> int:
        self.barrier.wait()  # BrokenBarrierError (→ StoreUnavailable) if they cannot meet
        return self._inner.begin_call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_32_way_fanout_has_32_store_calls_in_flight_at_once(store: Store) -> None:
    env = Envelope(budget=Budget(usd=1.0, calls=WIDTH), concurrency=WIDTH, max_fanout=64)
    store.create_run("pool-1", env.to_dict())
    number = store.start_attempt("pool-1", source="#", annotated="#", report={}).number
    proxy = Rendezvous(store)
    broker = Broker(proxy, "pool-1", number, envelope=env,  # type: ignore[arg-type]
                    providers=LocalProviders(), whitelist={"orchestrate/#0": "echo"},
                    prefix=load_prefix(store, "pool-1"))

    async def fanout() -> list[dict[str, Any]]:
        # A default executor far smaller than the fanout: the broker must not depend on it.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        tasks = [broker.submit({"type": "call", "nonce": broker.nonce, "site": "orchestrate/#0",
                                "path": [b], "capability": "echo", "payload": {"b": b}})
                 for b in range(WIDTH)]
        replies = await asyncio.gather(*tasks)
        await broker.drain()
        return replies

    replies = asyncio.run(fanout())
    assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:1]
    assert broker.stats.executed == WIDTH
    assert not proxy.barrier.broken
    assert len(store.list_slots("pool-1")) == WIDTH
