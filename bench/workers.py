"""Workers on one PostgreSQL: throughput with 1, 2 and 4 workers, and the queue's own overhead,
with DBOS queues beside them on the same server.

    python -m bench.workers [--pg URL] [--runs N] [--latency 0.2] [--counts 1,2,4] [--quick]

- Throughput: N runs of a 4-way fanout (four `echo` calls in `ctx.parallel`, each with a
  simulated provider latency of 200 ms) are queued at once; `k` worker processes (concurrency 1
  each, the in-process runner: the sandbox's start is measured by `bench.sandbox_start`) drain
  the queue. runs/s = N / (last finish - first start). Scaling = runs/s(k) / (k · runs/s(1)).
- Queue overhead: at zero latency, one idle worker; each job is queued after the previous
  finished; enqueue → start runs from the moment the submission returned (its transaction
  committed: the job is visible) to the worker's `job.started` (one host, one clock).
- DBOS: the same workflow (four async steps under `asyncio.gather`, each sleeping the same
  latency) on `dbos.Queue` with the same number of worker processes (worker concurrency 1),
  enqueued with `DBOSClient`; enqueue → start from DBOS's `created_at` → `started_at_epoch_ms`.
  DBOS polls its queue (default every 1 s; measured at 0.05 s here, the fastest it suggests).

Each worker is its own interpreter (`--frostline-worker` / `--dbos-worker`), as on real hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FANOUT = '''
async def orchestrate(ctx, args):
    async def call(i):
        return await ctx.run("echo", {"i": i, "run": args["run"]})

    got = await ctx.parallel([call(i) for i in range(4)])
    return len(got)
'''
DBOS_POLL_S = 0.05


# worker processes ---------------------------------------------------------------------------
def frostline_worker(url: str, latency: float, name: str) -> int:
    from frostline.embedded.bodies import host_body
    from frostline.providers.local import LocalProviders
    from frostline.testing import InProcessRunner
    from frostline.worker import WorkerHost, WorkerSettings, open_worker_store

    store = open_worker_store(url)
    providers, runner = LocalProviders(latency_s=latency), InProcessRunner()
    host = WorkerHost(store, lambda stops: host_body(providers, runner, interrupts=stops),
                      sandbox="in-process (benchmark)", say=lambda line: print(line, flush=True),
                      settings=WorkerSettings(concurrency=1, name=name))
    return host.run()


def dbos_worker(url: str, schema: str, latency: float) -> int:
    import asyncio

    from dbos import DBOS

    DBOS(config={"name": "bench-workers", "system_database_url": url,
                 "dbos_system_schema": schema, "log_level": "WARNING",
                 "application_version": "bench"})

    @DBOS.step()
    async def echo(i: int) -> int:
        await asyncio.sleep(latency)
        return i

    @DBOS.workflow(name="fanout")
    async def fanout(run: str) -> int:
        return len(await asyncio.gather(*(echo(i) for i in range(4))))

    DBOS.launch()
    DBOS.register_queue("bench", worker_concurrency=1, polling_interval_sec=DBOS_POLL_S)
    print("dbos worker ready", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    DBOS.destroy()
    return 0


@contextmanager
def processes(argvs: list[list[str]], ready: str, folder: Path) -> Iterator[None]:
    procs, outs = [], []
    for k, argv in enumerate(argvs):
        out = folder / f"worker-{k}-{uuid.uuid4().hex[:6]}.out"
        outs.append(out)
        procs.append(subprocess.Popen([sys.executable, "-m", "bench.workers", *argv], cwd=ROOT,
                                      stdout=out.open("wb"), stderr=subprocess.STDOUT,
                                      env={**os.environ, "PYTHONPATH": str(ROOT)}))
    try:
        deadline = time.monotonic() + 60
        while not all(ready in o.read_text(errors="replace") for o in outs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("a worker did not start: " + " | ".join(
                    o.read_text(errors="replace")[-400:] for o in outs))
            time.sleep(0.05)
        yield
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


# frostline ----------------------------------------------------------------------------------
def frostline_throughput(url: str, workers: int, runs: int, latency: float,
                         folder: Path) -> dict[str, Any]:
    from frostline.embedded.jobs import JobSpec, wait_job
    from frostline.store import open_store
    from frostline.worker import ProcrastinateQueue

    argvs = [["--frostline-worker", url, "--latency", str(latency), "--name", f"b{k}"]
             for k in range(workers)]
    with open_store(url) as store, processes(argvs, "frostline worker", folder):
        queue = ProcrastinateQueue(store)
        subs = [queue.submit(store, JobSpec("attempt", f"t{workers}-{i}", {
            "source": FANOUT, "args": {"run": i}})) for i in range(runs)]
        states = [wait_job(store, s.run_id, s.ticket, 600) for s in subs]
        assert all(s is not None and s.outcome.get("status") == "succeeded" for s in states)
        first, last = _job_window(queue)
        queue.close()
    return {"workers": workers, "runs": runs, "seconds": last - first,
            "runs_per_s": runs / (last - first)}


def _job_window(queue: Any) -> tuple[float, float]:
    from frostline.worker import schema

    with schema.connect(queue.conninfo) as conn:
        row = conn.execute("SELECT extract(epoch FROM min(at) FILTER (WHERE type = 'started')), "
                           "extract(epoch FROM max(at) FILTER (WHERE type = 'succeeded')) "
                           "FROM procrastinate_events").fetchone()
    assert row is not None
    return float(row[0]), float(row[1])


def frostline_overhead(url: str, jobs: int, folder: Path) -> list[float]:
    from frostline.embedded.jobs import JobSpec, wait_job
    from frostline.store import open_store
    from frostline.worker import ProcrastinateQueue

    with open_store(url) as store, processes([["--frostline-worker", url, "--latency", "0",
                                               "--name", "idle"]], "frostline worker", folder):
        queue = ProcrastinateQueue(store)
        waits = []
        for i in range(jobs):
            sub = queue.submit(store, JobSpec("attempt", f"o-{i}", {"source": FANOUT,
                                                                    "args": {"run": i}}))
            committed = time.time()  # the job is visible to workers from here on
            wait_job(store, sub.run_id, sub.ticket, 60)
            started = next(e.ts for e in store.list_events(sub.run_id)
                           if e.kind == "job.started")
            waits.append((started - committed) * 1000)  # one host, one clock
        queue.close()
    return waits


# DBOS ---------------------------------------------------------------------------------------
def dbos_throughput(base: str, workers: int, runs: int, latency: float,
                    folder: Path) -> dict[str, Any]:
    from dbos import DBOSClient

    schema = "bench_dbos_" + uuid.uuid4().hex[:10]
    argvs = [["--dbos-worker", base, "--schema", schema, "--latency", str(latency)]
             for _ in range(workers)]
    try:
        with processes(argvs, "dbos worker ready", folder):
            client = DBOSClient(system_database_url=base, dbos_system_schema=schema)
            handles = [client.enqueue({"queue_name": "bench", "workflow_name": "fanout",
                                       "app_version": "bench"}, f"r{i}") for i in range(runs)]
            assert all(h.get_result(polling_interval_sec=0.05) == 4 for h in handles)
            window = _dbos_window(base, schema)
            client.destroy()
    finally:
        _drop(base, schema)
    return {"workers": workers, "runs": runs, "seconds": window[1] - window[0],
            "runs_per_s": runs / (window[1] - window[0]), "start_ms": window[2]}


def _dbos_window(base: str, schema: str) -> tuple[float, float, list[float]]:
    import psycopg

    with psycopg.connect(base) as conn:
        rows = conn.execute(f'SELECT created_at, started_at_epoch_ms, updated_at FROM '
                            f'"{schema}".workflow_status').fetchall()
    starts = [r[1] / 1000 for r in rows]
    ends = [r[2] / 1000 for r in rows]
    return min(starts), max(ends), [float(r[1] - r[0]) for r in rows]


def dbos_overhead(base: str, jobs: int, folder: Path) -> list[float]:
    from dbos import DBOSClient

    schema = "bench_dbos_" + uuid.uuid4().hex[:10]
    try:
        with processes([["--dbos-worker", base, "--schema", schema, "--latency", "0"]],
                       "dbos worker ready", folder):
            client = DBOSClient(system_database_url=base, dbos_system_schema=schema)
            for i in range(jobs):
                client.enqueue({"queue_name": "bench", "workflow_name": "fanout",
                                "app_version": "bench"}, f"o{i}").get_result(
                                    polling_interval_sec=0.01)
            starts = _dbos_window(base, schema)[2]
            client.destroy()
    finally:
        _drop(base, schema)
    return starts


def _drop(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# the report ---------------------------------------------------------------------------------
def measure(base: str, runs: int, latency: float, counts: list[int], jobs: int,
            dbos: bool, folder: Path) -> dict[str, Any]:
    from bench.common import pg_scratch

    report: dict[str, Any] = {"latency_s": latency, "runs": runs, "frostline": [], "dbos": []}
    for k in counts:
        with pg_scratch(base) as url:
            report["frostline"].append(frostline_throughput(url, k, runs, latency, folder))
            _drop(base, url.rsplit("%3D", 1)[1] + "_jobs")
        if dbos:
            report["dbos"].append(dbos_throughput(base, k, runs, latency, folder))
    with pg_scratch(base) as url:
        report["frostline_start_ms"] = frostline_overhead(url, jobs, folder)
        _drop(base, url.rsplit("%3D", 1)[1] + "_jobs")
    if dbos:
        report["dbos_start_ms"] = dbos_overhead(base, jobs, folder)
    return report


def table(report: dict[str, Any]) -> str:
    lines = [f"4-way fanouts at {report['latency_s'] * 1000:.0f} ms per call, "
             f"{report['runs']} runs per row",
             f"{'system':10} {'workers':>7} {'runs/s':>8} {'scaling':>8}"]
    for system in ("frostline", "dbos"):
        rows = report[system]
        if not rows:
            continue
        one = rows[0]["runs_per_s"] / rows[0]["workers"]
        for r in rows:
            lines.append(f"{system:10} {r['workers']:>7} {r['runs_per_s']:>8.2f} "
                         f"{r['runs_per_s'] / (one * r['workers']):>8.2f}")
    for key, name in (("frostline_start_ms", "frostline"), ("dbos_start_ms", "dbos")):
        if report.get(key):
            v = report[key]
            lines.append(f"enqueue -> start, {name}: median {statistics.median(v):.1f} ms, "
                         f"p95 {sorted(v)[int(0.95 * (len(v) - 1))]:.1f} ms ({len(v)} jobs)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frostline-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--dbos-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--schema", default="dbos", help=argparse.SUPPRESS)
    p.add_argument("--name", default="", help=argparse.SUPPRESS)
    p.add_argument("--pg", default=None, help="PostgreSQL URL (default: $FROSTLINE_TEST_POSTGRES)")
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--jobs", type=int, default=50, help="jobs for enqueue -> start")
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--counts", default="1,2,4")
    p.add_argument("--quick", action="store_true", help="12 runs, 10 jobs: a smoke run")
    p.add_argument("--no-dbos", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.frostline_worker:
        return frostline_worker(a.frostline_worker, a.latency, a.name)
    if a.dbos_worker:
        return dbos_worker(a.dbos_worker, a.schema, a.latency)
    from bench.common import pg_base_url, pg_reachable

    base = pg_base_url(a.pg)
    if (why := pg_reachable(base)) is not None:
        print(f"PostgreSQL is not reachable at {base}: {why}", file=sys.stderr)
        return 2
    runs, jobs = (12, 10) if a.quick else (a.runs, a.jobs)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-workers-") as folder:
        report = measure(base, runs, a.latency, [int(c) for c in a.counts.split(",")], jobs,
                         not a.no_dbos, Path(folder))
    print(json.dumps(report) if a.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
