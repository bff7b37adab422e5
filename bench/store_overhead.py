"""Durable overhead of the run store, against the fsync floor of this disk.

    python -m bench.store_overhead [--pg postgresql://…] [--calls 300] [--rounds 5]

Measures, on SQLite and PostgreSQL (PostgreSQL when --pg or FROSTLINE_TEST_POSTGRES is set):
- the floor: one tiny committed insert (SQLite: WAL + synchronous=FULL; PostgreSQL: one
  synchronous commit), i.e. what one fsync costs here;
- a sequential durable call: begin_call (the attempt record, durable before dispatch) plus
  commit_call (slot + status), one after the other;
- a 32-way fanout: 32 threads each doing begin_call + commit_call; wall time / calls, which
  group commit amortizes over shared transactions;
- replay reads: list_slots of a 10,000-slot prefix, as identities per second.

Prints medians over rounds and their ratios to the floor, and the targets.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import pg_scratch
from frostline.contract.identity import Identity, digest
from frostline.store import SlotRecord, Store, open_store

FANOUT = 32
PREFIX = 10_000
CAP = "image.generate"
TARGETS = {"sequential": 1.5, "fanout": 0.3, "replay": 20_000.0}


def durable_call(store: Store, run_id: str, identity: Identity) -> None:
    h = digest({"i": str(identity)})
    call_id = store.begin_call(run_id, 1, identity, CAP, h)
    store.commit_call(call_id, SlotRecord(run_id, identity.site, identity.path,
                                          identity.occurrence, CAP, h, {"url": "x"},
                                          {"usd": 0.02}, 1))


def sequential_ms(store: Store, calls: int) -> float:
    run_id = "seq-" + uuid.uuid4().hex[:8]
    store.create_run(run_id, {})
    samples = []
    for i in range(calls):
        t0 = time.perf_counter()
        durable_call(store, run_id, Identity("orchestrate/#0", (), i))
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def fanout_ms(store: Store, per_thread: int) -> tuple[float, float]:
    """Wall time of a 32-way fanout per durable call, and its writes per transaction."""
    run_id = "fan-" + uuid.uuid4().hex[:8]
    store.create_run(run_id, {})
    barrier = threading.Barrier(FANOUT + 1)

    def branch(b: int) -> None:
        barrier.wait()
        for k in range(per_thread):
            durable_call(store, run_id, Identity("orchestrate/#0", (b,), k))

    threads = [threading.Thread(target=branch, args=(b,)) for b in range(FANOUT)]
    for t in threads:
        t.start()
    before = store.group_commit_stats  # type: ignore[attr-defined]
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    after = store.group_commit_stats  # type: ignore[attr-defined]
    per_txn = (after[1] - before[1]) / max(1, after[0] - before[0])
    return elapsed * 1000 / (FANOUT * per_thread), per_txn


def replay_rate(store: Store) -> float:
    """Identities per second that list_slots returns from a 10,000-slot prefix."""
    run_id = "prefix-" + uuid.uuid4().hex[:8]
    store.create_run(run_id, {})
    sql = store._sql  # type: ignore[attr-defined]  # seed through the store's own writer
    j = store._j  # type: ignore[attr-defined]
    rows = [(run_id, f"orchestrate/for#0.body/#{i % 7}", f"{i % 32}", i // 224, CAP,
             digest({"i": i}), j({"url": f"https://example.invalid/{i}.png", "n": i}, "r"),
             j({"usd": 0.02}, "u"), 1, time.time()) for i in range(PREFIX)]

    def seed(conn: Any) -> None:
        cur = conn.cursor()
        cur.executemany(sql("INSERT INTO slots (run_id, site, path, occurrence, capability, "
                            "digest, result, usage, attempt, committed_at) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"), rows)

    store._write("seed", seed)  # type: ignore[attr-defined]
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        n = len(store.list_slots(run_id))
        samples.append(time.perf_counter() - t0)
    assert n == PREFIX
    return PREFIX / statistics.median(samples)


def sqlite_floor_ms(folder: Path, calls: int) -> float:
    conn = sqlite3.connect(folder / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    samples = []
    for i in range(calls):
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?)", (i,))
        conn.execute("COMMIT")
        samples.append(time.perf_counter() - t0)
    conn.close()
    return statistics.median(samples) * 1000


def pg_floor_ms(url: str, calls: int) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS floor_t (x INTEGER)")
        conn.commit()
        samples = []
        for i in range(calls):
            t0 = time.perf_counter()
            conn.execute("INSERT INTO floor_t VALUES (%s)", (i,))
            conn.commit()
            samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def measure(url: str, floor: Callable[[], float], calls: int, rounds: int) -> dict[str, float]:
    # Rounds interleave the floor and the store's figures, so load from elsewhere on the
    # machine weighs on both alike.
    samples: dict[str, list[float]] = {"floor": [], "sequential": [], "fanout": [],
                                       "writes_per_txn": []}
    with open_store(url) as store:
        sequential_ms(store, 20)  # warm up connections, prepared statements, page cache
        for _ in range(rounds):
            samples["floor"].append(floor())
            samples["sequential"].append(sequential_ms(store, calls))
            ms, per_txn = fanout_ms(store, max(1, calls * 2 // FANOUT))
            samples["fanout"].append(ms)
            samples["writes_per_txn"].append(per_txn)
        out = {k: statistics.median(v) for k, v in samples.items()}
        out["replay"] = replay_rate(store)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("FROSTLINE_TEST_POSTGRES", ""),
                        help="PostgreSQL URL (a scratch schema is created and dropped)")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results["sqlite"] = measure(f"sqlite:///{folder}/bench.db",
                                    lambda: sqlite_floor_ms(folder, args.calls // 3),
                                    args.calls, args.rounds)
    if args.pg:
        with pg_scratch(args.pg) as url:
            results["postgres"] = measure(url, lambda: pg_floor_ms(url, args.calls // 3),
                                          args.calls, args.rounds)
    report(results)
    return 0


def report(results: dict[str, dict[str, float]]) -> None:
    backends = list(results)
    rows = [
        ("fsync floor: one tiny commit (ms)", "floor", "{:.3f}", None),
        ("sequential durable call: begin+commit (ms)", "sequential", "{:.3f}", "<= 1.5 (sqlite)"),
        ("  ratio to floor", "sequential/floor", "{:.2f}x", None),
        ("32-way fanout, amortized per call (ms)", "fanout", "{:.3f}", "<= 0.3 (sqlite)"),
        ("  ratio to floor", "fanout/floor", "{:.2f}x", None),
        ("  speed-up over sequential", "sequential/fanout", "{:.1f}x", None),
        ("  writes per transaction in the fanout", "writes_per_txn", "{:.1f}", None),
        ("replay: list_slots of 10,000 slots (ids/s)", "replay", "{:,.0f}", ">= 20,000"),
    ]
    width = max(len(r[0]) for r in rows)
    head = f"{'metric (medians)':<{width}}  " + "  ".join(f"{b:>12}" for b in backends)
    print(head + "  target")
    print("-" * (len(head) + 18))
    for label, key, fmt, target in rows:
        cells = []
        for b in backends:
            r = results[b]
            if "/" in key:
                num, den = key.split("/")
                value = r[num] / r[den]
            else:
                value = r[key]
            cells.append(f"{fmt.format(value):>12}")
        print(f"{label:<{width}}  " + "  ".join(cells) + (f"  {target}" if target else ""))
    sq = results["sqlite"]
    verdicts = [
        ("sequential", sq["sequential"] <= TARGETS["sequential"]),
        ("fanout", sq["fanout"] <= TARGETS["fanout"]),
        ("replay", all(r["replay"] >= TARGETS["replay"] for r in results.values())),
    ]
    print("targets: " + ", ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in verdicts))


if __name__ == "__main__":
    sys.exit(main())
