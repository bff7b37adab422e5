"""A worker process for the tests: `frostline worker`'s host with test providers.

    python -m tests.worker.host_process URL --name w1 --latency 0.2 --log calls.jsonl \
        --journal locks.jsonl --heartbeat 0.5 --stalled-after 4

The command line's own `frostline worker` takes its providers from the configuration; the
tests need a simulated latency, a provider log per host and the in-process runner's speed.
"""

from __future__ import annotations

import argparse
import sys

from frostline.embedded.bodies import host_body
from frostline.providers.local import LocalProviders
from frostline.runtime.runners import ChildProcessRunner, InProcessRunner
from frostline.worker import WorkerHost, WorkerSettings, open_worker_store


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
    p.add_argument("--resume-limit", type=int, default=None)
    a = p.parse_args(argv)
    providers = LocalProviders(latency_s=a.latency, log_path=a.log, idempotent=bool(a.keys),
                               idempotency_path=a.keys)
    runner = InProcessRunner() if a.runner == "inprocess" else ChildProcessRunner()
    store = open_worker_store(a.url)
    settings = WorkerSettings(concurrency=a.concurrency, name=a.name, heartbeat_s=a.heartbeat,
                              stalled_after_s=a.stalled_after, grace_s=a.grace,
                              lock_journal=a.journal, resume_limit=a.resume_limit)
    host = WorkerHost(store, lambda stops: host_body(providers, runner, interrupts=stops),
                      sandbox=f"{a.runner} (test)", settings=settings,
                      say=lambda line: print(line, flush=True))
    try:
        return host.run()
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
