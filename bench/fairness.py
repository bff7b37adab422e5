"""Fair scheduling under a hostile backlog (issue 26): how long one principal's job waits to
start while another principal has a backlog, with and without fairness, side by side.

Principal A queues 16 slow jobs (each an attempt of `--calls` echo calls at `--latency` s),
then principal B queues one trivial job, on 2 slots: the embedded pool of `frostline serve`
(SQLite) and, with PostgreSQL reachable, one `frostline worker --concurrency 2`. The table
gives B's start latency (queued → started, from the store's job events) and how many of A's
jobs started before B's, as medians over `--reps` rounds. Without fairness (first come, first
served) B waits for A's whole backlog; with it, for one of A's jobs to end.

    python -m bench.fairness [--reps 3] [--calls 6] [--latency 0.1] [--pg URL | --no-pg]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import pg_base_url, pg_reachable, pg_scratch

BACKLOG = 16
SLOTS = 2


def slow_script(calls: int) -> str:
    return ("async def orchestrate(ctx, args):\n"
            "    total = 0\n"
            f"    for i in range({calls}):\n"
            "        r = await ctx.run(\"echo\", {\"n\": i})\n"
            "        total = total + r[\"n\"]\n"
            "    return total\n")


QUICK = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a["n"]\n'


@dataclass
class Round:
    start_latency_s: float
    started_before: int  # A's jobs that started before B's


@dataclass
class Row:
    queue: str
    fair: bool
    rounds: list[Round]

    @property
    def median_s(self) -> float:
        return statistics.median(r.start_latency_s for r in self.rounds)

    @property
    def before(self) -> float:
        return statistics.median(r.started_before for r in self.rounds)


def _round(store: Any, submit: Callable[[str, str], Any], cancel: Callable[[str], None],
           calls: int) -> Round:
    """A's backlog, then B's job; B's start latency and A's jobs started before it."""
    from frostline.embedded.jobs import EVENT_PREFIX

    a_runs = [store.create_run(f"a{i}", {}, owner="alice").run_id for i in range(BACKLOG)]
    for key in a_runs:
        submit(key, slow_script(calls))
    b_run = store.create_run("b", {}, owner="bob").run_id
    queued_at = time.time()
    submit(b_run, QUICK)
    deadline = time.monotonic() + 600
    while True:
        started = [e for e in store.list_events(b_run) if e.kind == EVENT_PREFIX + "started"]
        if started:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("B's job never started")
        time.sleep(0.01)
    began = started[0]
    before = sum(1 for key in a_runs for e in store.list_events(key)
                 if e.kind == EVENT_PREFIX + "started" and e.seq < began.seq)
    for key in a_runs:  # the rest of A's backlog is not needed
        cancel(key)
    return Round(began.ts - queued_at, before)


def pool_rows(reps: int, calls: int, latency: float, folder: Path) -> list[Row]:
    from frostline.embedded.bodies import Interrupts, host_body
    from frostline.embedded.cancel import cancel_run
    from frostline.embedded.jobs import JobSpec
    from frostline.embedded.pool import LocalPool
    from frostline.errors import NothingToCancel
    from frostline.providers.local import LocalProviders
    from frostline.runtime.runners import ChildProcessRunner
    from frostline.store import open_store

    rows = []
    for fair in (False, True):
        rounds = []
        for rep in range(reps):
            with open_store(f"sqlite:///{folder}/pool-{fair}-{rep}.db") as store:
                stops = Interrupts()
                body = host_body(LocalProviders(latency_s=latency), ChildProcessRunner(),
                                 interrupts=stops)
                pool = LocalPool(store, body, workers=SLOTS, interrupts=stops, fair=fair)

                def cancel(key: str, store: Any = store, pool: Any = pool) -> None:
                    with suppress(NothingToCancel):
                        cancel_run(store, key, by="alice", queue=pool)

                def submit(key: str, src: str, store: Any = store, pool: Any = pool) -> Any:
                    return pool.submit(store, JobSpec("attempt", key, {"source": src}))

                try:
                    rounds.append(_round(store, submit, cancel, calls))
                finally:
                    pool.close()
        rows.append(Row("embedded pool (SQLite)", fair, rounds))
    return rows


def worker_rows(reps: int, calls: int, latency: float, base: str, folder: Path) -> list[Row]:
    from frostline.embedded.cancel import cancel_run
    from frostline.embedded.jobs import JobSpec
    from frostline.errors import NothingToCancel
    from frostline.store import open_store
    from frostline.worker.queue import ProcrastinateQueue

    config = folder / "slow.toml"
    config.write_text(f'[providers.local]\nkind = "local"\nlatency_s = {latency}\n')
    root = Path(__file__).resolve().parents[1]
    rows = []
    for fair in (False, True):
        rounds = []
        for _ in range(reps):
            with pg_scratch(base) as url, open_store(url) as store:
                queue = ProcrastinateQueue(store, fair=fair)
                worker = None
                try:
                    def submit(key: str, src: str, queue: Any = queue, store: Any = store) -> Any:
                        return queue.submit(store, JobSpec("attempt", key, {"source": src}))

                    def cancel(key: str, queue: Any = queue, store: Any = store) -> None:
                        with suppress(NothingToCancel):
                            cancel_run(store, key, by="alice", queue=queue)

                    # The worker starts after the backlog is queued: it finds A's 16 and B's
                    # one waiting, as a worker does after a burst.
                    def start_worker() -> subprocess.Popen[bytes]:
                        return subprocess.Popen(
                            [sys.executable, "-m", "frostline", "worker", "--store", url,
                             "--concurrency", str(SLOTS), "--config", str(config),
                             "--runner", "process", "--heartbeat", "0.5"],
                            cwd=folder, env={**os.environ, "PYTHONPATH": str(root)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

                    a_runs = [store.create_run(f"a{i}", {}, owner="alice").run_id
                              for i in range(BACKLOG)]
                    for key in a_runs:
                        submit(key, slow_script(calls))
                    b_run = store.create_run("b", {}, owner="bob").run_id
                    queued_at = time.time()
                    submit(b_run, QUICK)
                    worker = start_worker()
                    rounds.append(_wait_b(store, a_runs, b_run, queued_at, cancel))
                finally:
                    if worker is not None:
                        worker.terminate()
                        with suppress(subprocess.TimeoutExpired):
                            worker.wait(30)
                        if worker.poll() is None:
                            worker.kill()
                    queue.close()
        rows.append(Row("PostgreSQL worker", fair, rounds))
    return rows


def _wait_b(store: Any, a_runs: list[str], b_run: str, queued_at: float,
            cancel: Callable[[str], None]) -> Round:
    from frostline.embedded.jobs import EVENT_PREFIX

    deadline = time.monotonic() + 600
    while not (started := [e for e in store.list_events(b_run)
                           if e.kind == EVENT_PREFIX + "started"]):
        if time.monotonic() > deadline:
            raise RuntimeError("B's job never started")
        time.sleep(0.01)
    before = sum(1 for key in a_runs for e in store.list_events(key)
                 if e.kind == EVENT_PREFIX + "started" and e.seq < started[0].seq)
    for key in a_runs:
        cancel(key)
    return Round(started[0].ts - queued_at, before)


def table(rows: list[Row]) -> str:
    """Without and with fairness side by side, one line per queue."""
    lines = ["| queue | B's start latency, FIFO (s) | with fairness (s) | ratio | A's jobs "
             "started before B, FIFO | with fairness |", "|---|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(r.queue for r in rows):
        fifo = next(r for r in rows if r.queue == name and not r.fair)
        fair = next(r for r in rows if r.queue == name and r.fair)
        ratio = fifo.median_s / fair.median_s if fair.median_s > 0 else float("inf")
        lines.append(f"| {name} | {fifo.median_s:.2f} | {fair.median_s:.2f} | {ratio:.1f} x | "
                     f"{fifo.before:g} | {fair.before:g} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--calls", type=int, default=6, help="echo calls per slow job")
    p.add_argument("--latency", type=float, default=0.1, help="seconds per echo call")
    p.add_argument("--pg", default=None, help="PostgreSQL URL (default: $FROSTLINE_TEST_POSTGRES)")
    p.add_argument("--no-pg", action="store_true")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="frostline-fairness-") as tmp:
        folder = Path(tmp)
        rows = pool_rows(a.reps, a.calls, a.latency, folder)
        base = pg_base_url(a.pg)
        why = "--no-pg" if a.no_pg else pg_reachable(base)
        if why is None:
            rows += worker_rows(a.reps, a.calls, a.latency, base, folder)
        print(f"A: {BACKLOG} jobs of {a.calls} calls x {a.latency} s; B: one trivial job; "
              f"{SLOTS} slots; medians of {a.reps} rounds")
        print(table(rows))
        if why is not None:
            print(f"(PostgreSQL workers skipped: {why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
