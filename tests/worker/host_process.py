"""A worker process for the tests: `frostline worker`'s host with test providers.

    python -m tests.worker.host_process URL --name w1 --latency 0.2 --log calls.jsonl \
        --journal locks.jsonl --heartbeat 0.5 --stalled-after 4 [--fault sweep:RUN_PREFIX]

The command line's own `frostline worker` takes its providers from the configuration; the
tests need a simulated latency, a provider log per host and the in-process runner's speed.

`--fault ACTION:PREFIX` acts the moment a job of a run whose id starts with PREFIX has stored
its `job.finished`, before Procrastinate saves the job's status (issue 31): `sweep` ends every
other backend of the database (`pg_terminate_backend`), so the save meets dead connections;
`die` SIGKILLs this worker, so the status is never saved; `cut` closes the database to new
connections (`ALLOW_CONNECTIONS false`) and then sweeps it, so the watchdog finds it gone
until the test opens it again (`reopen`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from frostline.config import read_config
from frostline.embedded.bodies import host_body
from frostline.providers.local import LocalProviders
from frostline.runtime.runners import ChildProcessRunner
from frostline.testing import InProcessRunner
from frostline.worker import WorkerHost, WorkerSettings, open_worker_store

SWEEP = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
         "current_database() AND pid <> pg_backend_pid()")


def sweep(url: str, *, close: bool = False) -> int:
    """End every other backend of the database at `url` (first closing it to new connections
    when `close`, from the server's `postgres` database); returns how many."""
    base = url.partition("?")[0]
    if not close:
        with psycopg.connect(base, autocommit=True) as conn:
            row = conn.execute(SWEEP).fetchone()
        return int(row[0]) if row else 0
    name = urlsplit(base).path.lstrip("/")
    with psycopg.connect(urlunsplit(urlsplit(base)._replace(path="/postgres")),
                         autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        row = conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                           "WHERE datname = %s", (name,)).fetchone()
    return int(row[0]) if row else 0


def reopen(url: str, maintenance: str) -> None:
    """Let the database at `url` take connections again (from the `maintenance` database)."""
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


class FaultAfterFinish:
    """A store that acts once per run after the run's `job.finished` is stored."""

    def __init__(self, inner: Any, url: str, fault: str) -> None:
        self._inner, self._url = inner, url
        self._action, _, self._prefix = fault.partition(":")
        self._done: set[str] = set()

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        seq = int(self._inner.append_event(run_id, kind, data))
        if kind == "job.finished" and run_id.startswith(self._prefix) and run_id not in self._done:
            self._done.add(run_id)
            if self._action == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            ended = sweep(self._url, close=self._action == "cut")
            print(f"fault: swept {ended} backend(s) after {run_id} finished", flush=True)
        return seq

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--name", default="")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--log", default=None)
    p.add_argument("--keys", default=None, help="idempotency-key memory (SQLite file)")
    p.add_argument("--journal", default=None)
    p.add_argument("--heartbeat", type=float, default=0.5)
    p.add_argument("--stalled-after", type=float, default=4.0)
    p.add_argument("--grace", type=float, default=30.0)
    p.add_argument("--runner", choices=["inprocess", "process"], default="inprocess")
    p.add_argument("--forget-after", type=float, default=300.0)
    p.add_argument("--fault", default=None, help="sweep:PREFIX or die:PREFIX (see above)")
    p.add_argument("--resume-limit", type=int, default=None)
    p.add_argument("--config", default=None, help="a frostline.toml: its [models] author")
    a = p.parse_args(argv)
    providers = LocalProviders(latency_s=a.latency, log_path=a.log, idempotent=bool(a.keys),
                               idempotency_path=a.keys)
    runner = InProcessRunner() if a.runner == "inprocess" else ChildProcessRunner()
    store = open_worker_store(a.url)
    settings = WorkerSettings(concurrency=a.concurrency, name=a.name, heartbeat_s=a.heartbeat,
                              stalled_after_s=a.stalled_after, grace_s=a.grace,
                              lock_journal=a.journal, forget_after_s=a.forget_after,
                              resume_limit=a.resume_limit)
    served = store if a.fault is None else FaultAfterFinish(store, a.url, a.fault)
    config = read_config(a.config) if a.config else None
    host = WorkerHost(served, lambda stops: host_body(providers, runner, interrupts=stops,
                                                      config=config),
                      sandbox=f"{a.runner} (test)", settings=settings,
                      say=lambda line: print(line, flush=True))
    try:
        return host.run()
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
