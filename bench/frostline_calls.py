"""frostline's side of the durable-overhead benchmark: new durable calls through the broker.

Two levels, both through the real store:
- **broker**: the host side alone. Frames go straight to `Broker.submit` (admission, ω,
  grants, schema, digest, runtime rule, ledger, budget, durable attempt record, the
  zero-latency ``echo`` provider, commit, audit event). No script, no sandbox, no child.
- **execute**: `execute()` end to end with the in-process runner — checker, gate, annotation,
  attempt bookkeeping, the ctx transport and the certificate included — for context. Its
  per-call figure is the attempt's wall time divided by its calls, so the fixed cost of an
  attempt is spread over them.

Sequential means one call after the other (each waits for its commit); the 32-way fanout runs
32 branches at once (paths ``[b]``), so the store's group commit can share transactions.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from frostline.capabilities.envelope import Budget, Envelope
from frostline.contract.prefix import Prefix, load_prefix
from frostline.providers.local import LocalProviders
from frostline.runtime.broker import Broker
from frostline.runtime.execute import execute
from frostline.store.base import Store
from frostline.testing import InProcessRunner

SITE = "orchestrate/#0"
FANOUT = 32


def envelope(calls: int) -> Envelope:
    """Every capability granted, room for `calls` calls, 32 concurrent dispatches."""
    return Envelope(budget=Budget(usd=1.0, calls=max(calls, 1)), concurrency=FANOUT,
                    max_fanout=64)


def new_broker(store: Store, calls: int, *, run_id: str | None = None,
               prefix: Prefix | None = None) -> Broker:
    """A broker for a fresh attempt of a (new, unless `run_id` is given) run.

    `prefix` is the run's loaded prefix (loaded here when not given).
    """
    run_id = run_id or "bench-" + uuid.uuid4().hex[:12]
    env = envelope(calls)
    if store.get_run(run_id) is None:
        store.create_run(run_id, env.to_dict())
    attempt = store.start_attempt(run_id, source="# benchmark", annotated="# benchmark",
                                  report={"valid": True})
    return Broker(store, run_id, attempt.number, envelope=env, providers=LocalProviders(),
                  allowlist={SITE: "echo"},
                  prefix=prefix if prefix is not None else load_prefix(store, run_id))


def frame(broker: Broker, path: list[int], n: int) -> dict[str, Any]:
    return {"type": "call", "nonce": broker.nonce, "site": SITE, "path": path,
            "capability": "echo", "payload": {"n": n}}


async def _one(broker: Broker, path: list[int], n: int, latencies: list[float]) -> None:
    t0 = time.perf_counter()
    reply = await broker.submit(frame(broker, path, n))
    latencies.append((time.perf_counter() - t0) * 1000)
    if not reply.get("ok"):
        raise RuntimeError(f"benchmark call failed: {reply.get('error')}")


async def _branch(broker: Broker, path: list[int], first: int, count: int,
                  latencies: list[float]) -> None:
    for k in range(count):
        await _one(broker, path, first + k, latencies)


async def broker_round(store: Store, calls: int, width: int) -> tuple[float, list[float]]:
    """One repetition: `calls` new durable calls in `width` concurrent branches.

    Returns (wall ms per call, each call's latency in ms). width=1 is sequential.
    """
    per_branch = max(1, calls // width)
    total = per_branch * width
    broker = new_broker(store, total)
    latencies: list[float] = []
    paths = [[]] if width == 1 else [[b] for b in range(width)]
    t0 = time.perf_counter()
    await asyncio.gather(*(_branch(broker, p, 0, per_branch, latencies) for p in paths))
    await broker.drain()
    wall = (time.perf_counter() - t0) * 1000
    if broker.stats.executed != total:
        raise RuntimeError(f"expected {total} executed calls, the broker reports "
                           f"{broker.stats.executed}")
    return wall / total, latencies


SEQUENTIAL_SCRIPT = """
async def orchestrate(ctx, args):
    out = []
    for i in range({n}):
        r = await ctx.run("echo", {{"n": i}})
        out.append(r["n"])
    return len(out)
"""

FANOUT_SCRIPT = """
async def branch(ctx, b):
    got = 0
    for k in range({per}):
        r = await ctx.run("echo", {{"b": b, "k": k}})
        got += 1
    return got


async def orchestrate(ctx, args):
    counts = await ctx.parallel([branch(ctx, b) for b in range({width})])
    return sum(counts)
"""


def execute_round(store: Store, calls: int, width: int) -> float:
    """One attempt through `execute()` with the in-process runner; wall ms per call."""
    if width == 1:
        source, total = SEQUENTIAL_SCRIPT.format(n=calls), calls
    else:
        per = max(1, calls // width)
        source, total = FANOUT_SCRIPT.format(per=per, width=width), per * width
    run_id = "bench-x-" + uuid.uuid4().hex[:12]
    t0 = time.perf_counter()
    outcome = execute(store, run_id, source, envelope=envelope(total),
                      providers=LocalProviders(), runner=InProcessRunner())
    wall = (time.perf_counter() - t0) * 1000
    if outcome.status != "succeeded" or outcome.executed != total:
        raise RuntimeError(f"benchmark attempt {outcome.status}: executed {outcome.executed} "
                           f"of {total}; error {outcome.error}")
    return wall / total
