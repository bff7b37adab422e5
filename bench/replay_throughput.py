"""Replay throughput: how fast a committed prefix is served back to a new attempt.

    python -m bench.replay_throughput [--prefix 10000] [--reps 3] [--pg URL | --no-pg]

A run is seeded with a prefix of N committed identities through the store's public API
(attempt record + commit, from 64 threads so group commit makes seeding quick). A new attempt
then reaches every one of them again with the same capability and payload, and the broker
answers each from the prefix without calling the provider. Measured per repetition, from a
cold broker: loading the prefix from the store (`load_prefix`) plus serving all N replays,
excluding any sandbox or child-process start. Two shapes:

- sequential: one path, occurrences 0..N-1, each replay awaited before the next (program
  order of a sequential script, the slowest case);
- 32-way: 32 branches replaying at once, as a fanout script does.

The figure is identities per second (median over repetitions); the target is ≥ 20,000/s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import fmt, pg_base_url, pg_reachable, pg_scratch, render_table
from bench.frostline_calls import FANOUT, SITE, envelope, new_broker
from frostline.contract.identity import Identity, digest
from frostline.contract.prefix import load_prefix
from frostline.runtime.broker import Broker
from frostline.store import SlotRecord, Store, open_store

TARGET_IDS_PER_S = 20_000.0
SEED_THREADS = 64


@dataclass
class ReplayResult:
    """Replay figures of one store and shape; rates are identities per second."""

    store: str
    shape: str
    prefix: int
    rates: list[float] = field(default_factory=list)
    load_rates: list[float] = field(default_factory=list)  # load_prefix alone

    @property
    def median(self) -> float:
        return statistics.median(self.rates) if self.rates else float("nan")

    @property
    def load_median(self) -> float:
        return statistics.median(self.load_rates) if self.load_rates else float("nan")


def payload_of(n: int) -> dict[str, int]:
    return {"n": n}


def identities(prefix: int, width: int) -> list[Identity]:
    """The identities a script of `width` branches makes for `prefix` calls."""
    if width == 1:
        return [Identity(SITE, (), k) for k in range(prefix)]
    per = prefix // width
    return [Identity(SITE, (b,), k) for b in range(width) for k in range(per)]


def seed(store: Store, run_id: str, idents: list[Identity]) -> None:
    """Commit one echo slot per identity through begin_call + commit_call (attempt 1)."""
    store.create_run(run_id, envelope(len(idents)).to_dict())
    attempt = store.start_attempt(run_id, source="# seed", annotated="# seed",
                                  report={"valid": True}).number

    def commit(ident: Identity) -> None:
        payload = payload_of(ident.occurrence)
        h = digest(payload)
        call_id = store.begin_call(run_id, attempt, ident, "echo", h)
        store.commit_call(call_id, SlotRecord(run_id, ident.site, ident.path, ident.occurrence,
                                              "echo", h, dict(payload), {}, attempt))

    with ThreadPoolExecutor(SEED_THREADS) as pool:
        list(pool.map(commit, idents))


async def _replay_branch(broker: Broker, path: list[int], count: int) -> None:
    for k in range(count):
        reply = await broker.submit({"type": "call", "nonce": broker.nonce, "site": SITE,
                                     "path": path, "capability": "echo",
                                     "payload": payload_of(k)})
        if not reply.get("ok") or reply["result"] != payload_of(k):
            raise RuntimeError(f"replay of {path}#{k} failed: {reply}")


async def replay_once(store: Store, run_id: str, prefix: int, width: int) -> tuple[float, float]:
    """Serve the whole prefix back once; returns (identities/s overall, identities/s of load)."""
    t0 = time.perf_counter()
    loaded = load_prefix(store, run_id)
    t_load = time.perf_counter() - t0
    if len(loaded) != prefix:
        raise RuntimeError(f"expected a prefix of {prefix}, loaded {len(loaded)}")
    broker = new_broker(store, prefix, run_id=run_id, prefix=loaded)
    paths = [[]] if width == 1 else [[b] for b in range(width)]
    per = prefix // len(paths)
    await asyncio.gather(*(_replay_branch(broker, p, per) for p in paths))
    await broker.drain()
    total = time.perf_counter() - t0
    if broker.stats.replayed != prefix or broker.stats.provider_calls:
        raise RuntimeError(f"replay served {broker.stats.replayed} of {prefix} and called the "
                           f"provider {broker.stats.provider_calls} times")
    return prefix / total, prefix / t_load


def measure_replay(url: str, store_name: str, prefix: int, reps: int) -> list[ReplayResult]:
    """Seed one run per shape in the store at `url`, then replay each `reps` times."""
    out = []
    with open_store(url) as store:
        for shape, width in (("sequential", 1), (f"{FANOUT}-way", FANOUT)):
            size = prefix if width == 1 else (prefix // width) * width
            run_id = f"replay-{width}-" + uuid.uuid4().hex[:8]
            seed(store, run_id, identities(size, width))
            result = ReplayResult(store_name, shape, size)
            for _ in range(reps):
                rate, load_rate = asyncio.run(replay_once(store, run_id, size, width))
                result.rates.append(rate)
                result.load_rates.append(load_rate)
            out.append(result)
    return out


def replay_table(results: list[ReplayResult]) -> str:
    rows = [["frostline broker", r.store, f"replay {r.shape}", f"{r.prefix:,}",
             fmt(r.median, ",.0f"), fmt(1000 / r.median, ".4f"), fmt(r.load_median, ",.0f"),
             fmt(r.median / TARGET_IDS_PER_S, ".2f") + "x"] for r in results]
    return render_table(["system", "store", "mode", "prefix", "ids/s (median)", "ms/id",
                         "load_prefix ids/s", "vs target 20k/s"], rows)


def run_all(prefix: int, reps: int, pg: str | None, folder: Path) -> list[ReplayResult]:
    results = measure_replay(f"sqlite:///{folder}/replay.db", "sqlite", prefix, reps)
    if pg is not None:
        with pg_scratch(pg) as url:
            results += measure_replay(url, "postgresql", prefix, reps)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prefix", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pg", default=None, help="PostgreSQL URL (default: "
                        "$FROSTLINE_TEST_POSTGRES or postgresql://postgres@127.0.0.1:5432/test)")
    parser.add_argument("--no-pg", action="store_true", help="measure SQLite only")
    args = parser.parse_args(argv)
    pg = None if args.no_pg else pg_base_url(args.pg)
    if pg is not None and (why := pg_reachable(pg)) is not None:
        print(f"PostgreSQL skipped ({why})")
        pg = None
    with tempfile.TemporaryDirectory() as tmp:
        results = run_all(args.prefix, args.reps, pg, Path(tmp))
    print(replay_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
