"""What frostline adds to an MCP tool call: a brokered call against a direct SDK call.

Both sides call the same stdio server program (`mcp-server-time`, `get_current_time`), in one
run, with rounds interleaved so the machine's drift hits both alike:

- **direct**: the official `mcp` ClientSession's `call_tool`, nothing else;
- **frostline**: a `call` frame submitted to the broker (admission, grants, schema, digest,
  runtime rule, budget, the durable attempt record on SQLite with ``synchronous=FULL``, the
  tool call, the commit and its audit event), the latency measured from `submit` to the
  reply. The ledger is off so every call is a new one. Twice: with the registry opened by
  plain code (`open_registry`: the MCP session lives on a loop of its own thread, and each
  call hops there and back), and with the registry opened on the broker's own loop
  (`open_registry_async`: no hop).

For context, the same run measures the broker alone on a zero-latency local `echo` (what the
durable contract costs without any MCP hop) and the fsync floor (one durable SQLite commit on
this disk): the attempt record a durable call waits for costs about one floor. The machine's
load average is printed too: on a loaded machine every thread hop and every fsync grows, so
compare figures from one run only. Two columns hold up under load and say where the time goes:
the CPU time this process spends per call (all its threads; the server's own process is not
counted, on either side) and the durable store commits (transactions, each one fsync) per call.

Usage::

    python bench/mcp_overhead.py [--calls 200] [--rounds 5]

Target: at most 1 ms added per call on SQLite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import sqlite_floor  # noqa: E402
from bench.frostline_calls import broker_round  # noqa: E402
from frostline.capabilities.envelope import Budget, Envelope, LedgerPolicy  # noqa: E402
from frostline.config import Config, MCPProvider  # noqa: E402
from frostline.contract.prefix import load_prefix  # noqa: E402
from frostline.providers.registry import (  # noqa: E402
    CapabilityRegistry,
    open_registry,
    open_registry_async,
)
from frostline.runtime.broker import Broker  # noqa: E402
from frostline.store import open_store  # noqa: E402
from frostline.store.base import Store  # noqa: E402

SERVER = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
TOOL, CAPABILITY, SITE = "get_current_time", "time.get_current_time", "orchestrate/#0"
ARGS = {"timezone": "Europe/Paris"}


def _broker(store: Store, registry: CapabilityRegistry, calls: int) -> Broker:
    run_id = "bench-mcp-" + uuid.uuid4().hex[:12]
    env = Envelope(budget=Budget(usd=1.0, calls=calls), ledger_policy=LedgerPolicy.OFF)
    store.create_run(run_id, env.to_dict())
    attempt = store.start_attempt(run_id, source="# benchmark", annotated="# benchmark",
                                  report={"valid": True})
    return Broker(store, run_id, attempt.number, envelope=env, providers=registry,
                  allowlist={SITE: CAPABILITY}, prefix=load_prefix(store, run_id),
                  catalog=registry.catalog)


@dataclass
class Samples:
    """What one path measured: each call's latency, CPU seconds and store commits."""

    latencies: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    commits: int = 0
    calls: int = 0


async def _timed(store: Store, path: Samples, calls: int,
                 body: Awaitable[list[float]]) -> None:
    commits, cpu = _commits(store), time.process_time()
    path.latencies += await body
    path.cpu_s += time.process_time() - cpu
    path.commits += _commits(store) - commits
    path.calls += calls


def _commits(store: Store) -> int:
    stats = getattr(store, "group_commit_stats", (0, 0))
    return int(stats[0])


async def brokered(store: Store, registry: CapabilityRegistry, calls: int) -> list[float]:
    broker = _broker(store, registry, calls)
    out = []
    for _ in range(calls):
        frame = {"type": "call", "nonce": broker.nonce, "site": SITE, "path": [],
                 "capability": CAPABILITY, "payload": dict(ARGS)}
        t0 = time.perf_counter()
        reply = await broker.submit(frame)
        out.append((time.perf_counter() - t0) * 1000)
        if not reply.get("ok"):
            raise RuntimeError(f"brokered call failed: {reply.get('error')}")
    await broker.drain()
    if broker.stats.executed != calls:
        raise RuntimeError(f"expected {calls} executed calls, got {broker.stats.executed}")
    return out


async def direct(session: Any, calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        result = await session.call_tool(TOOL, dict(ARGS))
        out.append((time.perf_counter() - t0) * 1000)
        if result.is_error:
            raise RuntimeError(f"direct call failed: {result.content}")
    return out


DIRECT = "direct ClientSession.call_tool"
DURABLE = "frostline, session on its own thread"
HOSTED = "frostline, session on the broker's loop"
ECHO = "frostline broker, local echo (no MCP)"
ADDED = {DURABLE: "added, session on its thread", HOSTED: "added, session on the loop"}


async def measure(store: Store, registry: CapabilityRegistry, calls: int,
                  rounds: int) -> dict[str, Samples]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=list(SERVER[1:]))
    paths = {DIRECT: Samples(), DURABLE: Samples(), HOSTED: Samples(), ECHO: Samples()}
    async with stdio_client(params) as streams, \
            ClientSession(streams[0], streams[1]) as session, \
            await open_registry_async(_config()) as hosted:
        await session.initialize()
        await session.list_tools()  # the SDK validates results against the listed schema
        await direct(session, 20)  # warm every path
        await brokered(store, registry, 20)
        await brokered(store, hosted, 20)
        for _ in range(rounds):
            await _timed(store, paths[DIRECT], calls, direct(session, calls))
            await _timed(store, paths[DURABLE], calls, brokered(store, registry, calls))
            await _timed(store, paths[HOSTED], calls, brokered(store, hosted, calls))
            await _timed(store, paths[ECHO], calls, _latencies(broker_round(store, calls, 1)))
    return paths


def _config() -> Config:
    return Config(providers={"time": MCPProvider("time", command=SERVER)})


async def _latencies(round_: Awaitable[tuple[float, list[float]]]) -> list[float]:
    return (await round_)[1]


def run(calls: int, rounds: int, folder: Path) -> dict[str, Any]:
    with open_registry(_config()) as registry, \
            open_store(f"sqlite:///{folder}/bench.db") as store:
        paths = asyncio.run(measure(store, registry, calls, rounds))
    floor = statistics.median(sqlite_floor(folder, 200))
    med = {k: statistics.median(p.latencies) for k, p in paths.items()}
    cpu = {k: p.cpu_s * 1000 / p.calls for k, p in paths.items()}
    commits = {k: p.commits / p.calls for k, p in paths.items()}
    base = med[DIRECT]
    return {"calls": calls * rounds, "median_ms": med, "cpu_ms": cpu, "commits": commits,
            "fsync_floor_ms": floor,
            "added_ms": {k: med[k] - base for k in ADDED},
            "ratio": {k: med[k] / base for k in ADDED},
            "added_cpu_ms": {k: cpu[k] - cpu[DIRECT] for k in ADDED}}


def table(report: dict[str, Any]) -> str:
    head = f"{'path':<40}{'median ms/call':>15}{'CPU ms/call':>13}{'commits/call':>14}"
    lines = [head, "-" * len(head)]
    for label, value in report["median_ms"].items():
        lines.append(f"{label:<40}{value:>15.3f}{report['cpu_ms'][label]:>13.3f}"
                     f"{report['commits'][label]:>14.2f}")
    lines.append("-" * len(head))
    for key, label in ADDED.items():
        lines.append(f"{label:<40}{report['added_ms'][key]:>15.3f}"
                     f"{report['added_cpu_ms'][key]:>13.3f}"
                     f"{report['ratio'][key]:>13.2f}x")
    lines.append(f"{'SQLite fsync floor (context)':<40}{report['fsync_floor_ms']:>15.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per round and path")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="frostline-bench-mcp-") as tmp:
        report = run(opts.calls, opts.rounds, Path(tmp))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{report['calls']} calls per path against {' '.join(SERVER[1:])}, SQLite store; "
          f"load average {load} on {os.cpu_count()} CPUs")
    print(table(report))
    for key, label in ADDED.items():
        verdict = "met" if report["added_ms"][key] <= 1.0 else "NOT met"
        print(f"target <= 1 ms added per call ({label[7:]}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
