"""Peer durable-execution frameworks measured beside frostline: DBOS and LangGraph.

Each peer runs in its own interpreter (``python -m bench.peers SYSTEM STORE ...``), because
DBOS is a process-wide singleton and both install logging and thread pools that would skew
frostline's figures if they shared a process. The child prints one JSON object on stdout:
``{"system", "store", "mode", "per_call_ms": [one per repetition], "latencies_ms": [...]}``
or ``{"missing": "...", "install": "pip install ..."}`` when the peer is not installed.

What is measured, like with like:
- DBOS: one workflow of N sequential ``@DBOS.step`` calls (each step is checkpointed in the
  system database before the workflow continues); SQLite or PostgreSQL system database.
- LangGraph: a functional-API ``@entrypoint`` with a ``SqliteSaver`` checkpointer (WAL,
  ``synchronous=FULL`` set explicitly, as frostline's store does) calling N ``@task``s in
  sequence, each awaited before the next. ``durability="sync"`` persists each task's result
  before the next starts, like frostline and DBOS; LangGraph's default, ``"async"``, writes
  in the background while the next task runs (a crash can lose the latest results), and is
  measured as a separate row for reference.
The step/task body returns its payload, like frostline's zero-latency ``echo`` provider.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

INSTALL = {
    "dbos": "pip install dbos",
    "langgraph": "pip install langgraph langgraph-checkpoint-sqlite",
}


def missing_peer(system: str) -> str | None:
    """The module a peer needs that is not importable, or None when it can run."""
    import importlib.util

    modules = {"dbos": ["dbos"], "langgraph": ["langgraph", "langgraph.checkpoint.sqlite"]}
    for mod in modules[system]:
        try:
            if importlib.util.find_spec(mod) is None:
                return mod
        except ModuleNotFoundError:
            return mod
    return None


# DBOS ---------------------------------------------------------------------------------------------
def run_dbos(store: str, calls: int, reps: int, pg_url: str, folder: Path) -> dict[str, Any]:
    from dbos import DBOS, DBOSConfig

    schema = "bench_dbos_" + uuid.uuid4().hex[:10]
    config: DBOSConfig = {"name": "frostline-bench", "log_level": "WARNING"}
    if store == "sqlite":
        config["system_database_url"] = f"sqlite:///{folder}/dbos.sqlite"
    else:
        config["system_database_url"] = pg_url
        config["dbos_system_schema"] = schema  # a scratch schema, dropped below
    DBOS(config=config)

    @DBOS.step()
    def echo(payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    @DBOS.workflow()
    def workflow(n: int) -> list[float]:
        latencies: list[float] = []
        for i in range(n):
            t0 = time.perf_counter()
            echo({"i": i})
            latencies.append(time.perf_counter() - t0)
        return latencies

    DBOS.launch()
    try:
        workflow(min(calls, 20))  # warm up connections and caches
        per_call: list[float] = []
        latencies: list[float] = []
        for _ in range(reps):
            t0 = time.perf_counter()
            lat = workflow(calls)
            per_call.append((time.perf_counter() - t0) * 1000 / calls)
            latencies.extend(x * 1000 for x in lat)
    finally:
        DBOS.destroy(destroy_registry=True)
        if store == "postgresql":
            _drop_pg_schema(pg_url, schema)
    return {"system": "DBOS", "store": store, "mode": "sequential steps",
            "per_call_ms": per_call, "latencies_ms": latencies}


def _drop_pg_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# LangGraph ------------------------------------------------------------------------------------------
def run_langgraph(store: str, calls: int, reps: int, folder: Path,
                  durability: str = "sync") -> dict[str, Any]:
    if store != "sqlite":
        raise SystemExit("LangGraph is measured on SQLite only (langgraph-checkpoint-sqlite)")
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.func import entrypoint, task

    conn = sqlite3.connect(folder / "langgraph.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()  # creates the tables and switches to WAL
    conn.execute("PRAGMA synchronous = FULL")  # like frostline's store: durable on COMMIT

    @task
    def echo(payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    latencies: list[float] = []
    mode: Any = durability  # "sync" or "async" (langgraph.types.Durability)

    @entrypoint(checkpointer=saver)
    def workflow(n: int) -> int:
        for i in range(n):
            t0 = time.perf_counter()
            echo({"i": i}).result()
            latencies.append(time.perf_counter() - t0)
        return n

    try:
        workflow.invoke(min(calls, 20), {"configurable": {"thread_id": "warmup"}},
                        durability=mode)
        per_call: list[float] = []
        pooled: list[float] = []
        for _ in range(reps):
            latencies.clear()
            t0 = time.perf_counter()
            workflow.invoke(calls, {"configurable": {"thread_id": uuid.uuid4().hex}},
                            durability=mode)
            per_call.append((time.perf_counter() - t0) * 1000 / calls)
            pooled.extend(x * 1000 for x in latencies)
    finally:
        conn.close()
    return {"system": "LangGraph", "store": store, "mode": f"sequential tasks, {durability}",
            "per_call_ms": per_call, "latencies_ms": pooled}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure one peer framework (child process).")
    parser.add_argument("system", choices=sorted(INSTALL))
    parser.add_argument("store", choices=["sqlite", "postgresql"])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--durability", choices=["sync", "async"], default="sync",
                        help="LangGraph only: persist each step before the next (sync, like "
                        "frostline and DBOS) or in the background (async, its default)")
    args = parser.parse_args(argv)
    missing = missing_peer(args.system)
    if missing is not None:
        print(json.dumps({"missing": missing, "install": INSTALL[args.system]}))
        return 0
    logging.disable(logging.WARNING)  # peers log every launch; keep stdout for the JSON line
    with tempfile.TemporaryDirectory() as tmp:
        if args.system == "dbos":
            out = run_dbos(args.store, args.calls, args.reps, args.pg, Path(tmp))
        else:
            out = run_langgraph(args.store, args.calls, args.reps, Path(tmp), args.durability)
    out["median_ms"] = statistics.median(out["per_call_ms"])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
