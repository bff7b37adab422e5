"""Workers under database faults (issue 31): the same workload without faults and with them,
side by side, on worker processes over one PostgreSQL database of the benchmark's own.

    python -m bench.soak [--pg URL] [--runs 60] [--workers 3] [--latency 0.05] [--sweeps 3]
                         [--kills 1] [--quick] [--json]

- Workload: `runs` runs of three sequential `echo` calls (`latency` seconds each, a provider
  that honours idempotency keys, so a call cut by a crash is retried with its key rather than
  left for an operator). Half are queued at once, the rest in one batch per fault, 0.4 s
  apart, on the same schedule in both phases.
  Every submission carries an idempotency key and is retried while the store does not answer.
- Workers: `workers` processes (concurrency 2, heartbeat 0.5 s, stalled after 3 s).
- Faults: `sweeps` times, every backend of the database is ended
  (`pg_terminate_backend(pid) … WHERE datname = current_database()`), and `kills` times a
  worker is SIGKILLed (and started again a moment later), spread over the phase.
- runs/s: runs / (last `job.finished` - first `job.queued`); enqueue -> finish: per run, its
  `job.queued` to its `job.finished` (one host, one clock).
- stuck: runs without an end 120 s after the last one ended, plus jobs still `todo`/`doing`
  in Procrastinate 30 s after every run ended (ten times the workers' stalled_after). phantom: a job started again after it finished, a
  second `job.finished` of one job, a run that ended other than succeeded, and a submission
  that reported an error while its job was queued. Both must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = '''
async def orchestrate(ctx, args):
    out = []
    for i in range(3):
        out.append((await ctx.run("echo", {"i": i, "run": args["run"]}))["i"])
    return out
'''
SWEEP = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
         "current_database() AND pid <> pg_backend_pid()")
SETTLE_S = 120.0
STATUS_GRACE_S = 30.0  # ten times the workers' stalled_after


# the worker process -------------------------------------------------------------------------
def soak_worker(url: str, name: str, latency: float, keys: str) -> int:
    from frostline.embedded.bodies import host_body
    from frostline.providers.local import LocalProviders
    from frostline.testing import InProcessRunner
    from frostline.worker import WorkerHost, WorkerSettings, open_worker_store

    store = open_worker_store(url)
    providers = LocalProviders(latency_s=latency, idempotent=True, idempotency_path=keys)
    runner = InProcessRunner()
    host = WorkerHost(store, lambda stops: host_body(providers, runner, interrupts=stops),
                      sandbox="in-process (benchmark)", say=lambda line: print(line, flush=True),
                      settings=WorkerSettings(concurrency=2, name=name, heartbeat_s=0.5,
                                              stalled_after_s=3.0, grace_s=5.0))
    try:
        return host.run()
    finally:
        store.close()


class Fleet:
    """The worker processes of one phase (SIGKILL restarts one under the same name)."""

    def __init__(self, url: str, latency: float, folder: Path) -> None:
        self.url, self.latency, self.folder = url, latency, folder
        self.keys = folder / f"keys-{uuid.uuid4().hex[:6]}.db"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str) -> None:
        log = self.folder / f"{name}.out"
        seen = log.stat().st_size if log.exists() else 0
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "bench.soak", "--soak-worker", self.url, "--name", name,
             "--latency", str(self.latency), "--keys", str(self.keys)], cwd=ROOT,
            stdout=log.open("ab"), stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 60
        while f"frostline worker {name}: store" not in log.read_bytes()[seen:].decode(
                errors="replace"):
            if time.monotonic() > deadline or self.procs[name].poll() is not None:
                raise RuntimeError(f"worker {name} did not start: {log.read_text()[-400:]}")
            time.sleep(0.05)

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


# the database of the benchmark's own ---------------------------------------------------------
@contextmanager
def own_database(base: str) -> Iterator[str]:
    """A database only this benchmark uses (a sweep ends every backend of its database)."""
    import psycopg

    name = "bench_soak_" + uuid.uuid4().hex[:10]
    url = urlunsplit(urlsplit(base)._replace(path=f"/{name}"))
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def schema_url(db_url: str, schema: str) -> str:
    import psycopg

    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{db_url}?options=-csearch_path%3D{schema}"


def sweep(db_url: str) -> int:
    import psycopg

    with psycopg.connect(db_url, autocommit=True) as conn:
        row = conn.execute(SWEEP).fetchone()
    return int(row[0]) if row else 0


# one phase ----------------------------------------------------------------------------------
def submit(store: Any, queue: Any, run_id: str, phantom: list[str]) -> Any:
    """Queue `run_id` with an idempotency key, again while the store does not answer; a
    submission that failed though its job was queued is a phantom failure."""
    from frostline.embedded.jobs import JobSpec, queued_submission
    from frostline.embedded.tickets import ticket_for
    from frostline.errors import StoreUnavailable

    spec = JobSpec("attempt", run_id, {"source": SCRIPT, "args": {"run": run_id}},
                   ticket_for(run_id, "soak"))
    for _ in range(200):
        try:
            return queue.submit(store, spec)
        except StoreUnavailable as exc:
            try:
                if queued_submission(store, run_id, spec.ticket) is not None and \
                        "cannot tell" not in exc.message:
                    phantom.append(f"{run_id}: submit said {exc.message!r} but it was queued")
            except StoreUnavailable:
                pass
            time.sleep(0.05)
    raise RuntimeError(f"{run_id}: the store never took the submission")


def phase(db_url: str, name: str, runs: int, workers: int, latency: float, sweeps: int,
          kills: int, folder: Path, schedule: int) -> dict[str, Any]:
    from frostline.store import open_store
    from frostline.worker import ProcrastinateQueue

    url = schema_url(db_url, name)
    fleet = Fleet(url, latency, folder)
    faults: list[str] = []
    phantom: list[str] = []
    ids = [f"{name}-{i}" for i in range(runs)]
    first, rest = ids[: runs // 2], ids[runs // 2:]
    store = open_store(url)
    queue = ProcrastinateQueue(store)
    try:
        for k in range(workers):
            fleet.start(f"{name}-w{k}")
        for run_id in first:
            submit(store, queue, run_id, phantom)
        # Both phases queue on the same schedule; only the faults differ.
        events = ["sweep"] * sweeps + ["kill"] * kills
        random.Random(31).shuffle(events)
        slots = max(1, schedule)
        batches = [rest[k::slots] for k in range(slots)]
        for k, batch in enumerate(batches):
            time.sleep(0.4)
            if k < len(events):
                if events[k] == "sweep":
                    faults.append(f"sweep ({sweep(db_url)} backends)")
                else:
                    victim = f"{name}-w{k % workers}"
                    fleet.kill(victim)
                    faults.append(f"SIGKILL {victim}")
                    threading.Timer(0.5, fleet.start, (victim,)).start()
            for run_id in batch:
                submit(store, queue, run_id, phantom)
        return settle(store, queue, ids, faults, phantom, name)
    finally:
        queue.close()
        store.close()
        time.sleep(0.6)  # a restart timer may still be starting a worker
        fleet.stop()


def settle(store: Any, queue: Any, ids: list[str], faults: list[str], phantom: list[str],
           name: str) -> dict[str, Any]:
    from frostline.errors import StoreUnavailable
    from frostline.worker import schema

    ended: dict[str, dict[str, Any]] = {}
    last_end = time.monotonic()
    while len(ended) < len(ids) and time.monotonic() - last_end < SETTLE_S:
        for run_id in ids:
            if run_id in ended:
                continue
            try:
                story = _story(store, run_id)
            except StoreUnavailable:
                continue
            if story["finished"]:
                ended[run_id] = story
                last_end = time.monotonic()
        time.sleep(0.05)
    stuck = len(ids) - len(ended)
    # A job's status is saved just after its `job.finished` (and a worker killed in between
    # leaves it to the stall detector): open jobs count as stuck only if they stay open.
    deadline = time.monotonic() + STATUS_GRACE_S
    while True:
        with schema.connect(queue.conninfo) as conn:
            row = conn.execute("SELECT count(*) FROM procrastinate_jobs WHERE status IN "
                               "('todo', 'doing')").fetchone()
        still_open = int(row[0]) if row else 0
        if not still_open or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    stuck += still_open
    for run_id, story in ended.items():
        if story["restarted_after_finish"] or len(story["finished"]) > 1:
            phantom.append(f"{run_id}: ran again after it finished")
        if story["finished"][-1][1] != "succeeded":
            phantom.append(f"{run_id}: ended {story['finished'][-1][1]}")
    queued = [s["queued"] for s in ended.values()]
    done = [s["finished"][0][0] for s in ended.values()]
    latencies = sorted((s["finished"][0][0] - s["queued"]) * 1000 for s in ended.values())
    window = (max(done) - min(queued)) if done else float("nan")
    return {"phase": name, "runs": len(ids), "faults": faults,
            "runs_per_s": len(ended) / window if done else 0.0,
            "p50_ms": statistics.median(latencies) if latencies else float("nan"),
            "p95_ms": latencies[int(0.95 * (len(latencies) - 1))] if latencies else float("nan"),
            "requeued": sum(s["requeued"] for s in ended.values()),
            "stuck": stuck, "phantom": len(phantom), "phantom_detail": phantom[:10]}


def _story(store: Any, run_id: str) -> dict[str, Any]:
    queued: float | None = None
    finished: list[tuple[float, Any]] = []
    requeued, restarted = 0, False
    for e in store.list_events(run_id):
        if e.kind == "job.queued" and queued is None:
            queued = e.ts
        elif e.kind == "job.requeued":
            requeued += 1
        elif e.kind == "job.started" and finished:
            restarted = True
        elif e.kind == "job.finished":
            finished.append((e.ts, (e.data.get("outcome") or {}).get("status")))
    return {"queued": queued, "finished": finished, "requeued": requeued,
            "restarted_after_finish": restarted}


# the report ---------------------------------------------------------------------------------
def measure(base: str, runs: int, workers: int, latency: float, sweeps: int, kills: int,
            folder: Path) -> dict[str, Any]:
    with own_database(base) as db_url:
        calm = phase(db_url, "calm", runs, workers, latency, 0, 0, folder, sweeps + kills)
        storm = phase(db_url, "storm", runs, workers, latency, sweeps, kills, folder,
                      sweeps + kills)
    return {"runs": runs, "workers": workers, "latency_s": latency, "sweeps": sweeps,
            "kills": kills, "phases": [calm, storm]}


def table(report: dict[str, Any]) -> str:
    calm, storm = report["phases"]
    head = (f"{report['runs']} runs per phase of 3 sequential echo calls at "
            f"{report['latency_s'] * 1000:.0f} ms, {report['workers']} workers (concurrency 2)")
    faults = f"{report['sweeps']} sweeps, {report['kills']} SIGKILL"
    rows = [("runs/s", "runs_per_s", ".2f"), ("enqueue -> finish p50 (ms)", "p50_ms", ".0f"),
            ("enqueue -> finish p95 (ms)", "p95_ms", ".0f"), ("jobs requeued", "requeued", "d"),
            ("stuck", "stuck", "d"), ("phantom", "phantom", "d")]
    width = max(len(r[0]) for r in rows)
    lines = [head, f"{'':{width}}  {'no faults':>12}  {('faults: ' + faults):>24}"]
    for label, key, spec in rows:
        lines.append(f"{label:{width}}  {format(calm[key], spec):>12}  "
                     f"{format(storm[key], spec):>24}")
    lines.append(f"runs/s with faults / without: {storm['runs_per_s'] / calm['runs_per_s']:.2f}"
                 if calm["runs_per_s"] else "runs/s with faults / without: –")
    for p in report["phases"]:
        for detail in p["phantom_detail"]:
            lines.append(f"phantom ({p['phase']}): {detail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--soak-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--name", default="", help=argparse.SUPPRESS)
    p.add_argument("--keys", default="", help=argparse.SUPPRESS)
    p.add_argument("--pg", default=None, help="PostgreSQL URL (default: $FROSTLINE_TEST_POSTGRES)")
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--sweeps", type=int, default=3)
    p.add_argument("--kills", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="8 runs, 1 sweep, 1 kill: a smoke run")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.soak_worker:
        return soak_worker(a.soak_worker, a.name, a.latency, a.keys)
    from bench.common import pg_base_url, pg_reachable

    base = pg_base_url(a.pg)
    if (why := pg_reachable(base)) is not None:
        print(f"PostgreSQL is not reachable at {base}: {why}", file=sys.stderr)
        return 2
    runs, sweeps, kills = (8, 1, 1) if a.quick else (a.runs, a.sweeps, a.kills)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-soak-") as folder:
        report = measure(base, runs, a.workers, a.latency, sweeps, kills, Path(folder))
    print(json.dumps(report) if a.json else table(report))
    return 0 if all(ph["stuck"] == 0 and ph["phantom"] == 0 for ph in report["phases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
