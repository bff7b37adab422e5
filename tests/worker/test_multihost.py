"""Three worker hosts (network namespaces) on one PostgreSQL of the test's own, with faults.

Runs — fanouts of 4 to 16, loops and pipelines, a fifth of them with an injected provider
rejection — are submitted while a worker is SIGKILLed 10 times (and restarted) and a worker's
link is cut twice (`ip link set … down`, then up). The operator's part is played by the test:
a run rejected by the provider gets a repair (the corrected script), a run left unresolved by a
crash is reconciled from the providers' logs and submitted again.

Pass: no paid call executed twice (the providers' logs, keyed by identity), no lost commit
(every execution the logs show is in the run's prefix, every run returns its expected value),
every run ends succeeded, failed-then-repaired or unresolved-then-reconciled, and no run was
held by two workers at once (the workers' lock journals).

CI runs 60 runs; FROSTLINE_MULTIHOST_RUNS=300 runs the full campaign (marked slow).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from frostline.embedded.jobs import wait_job
from frostline.store import open_store
from frostline.store.base import Store
from frostline.worker.submit import submit_attempt
from tests.worker.conftest import ROOT, eventually
from tests.worker.crash_rules import duplicates, executions, overlaps, reconcile_from_logs
from tests.worker.netlab import NetLab, unavailable

HOSTS = 3
KILLS = 10
CUTS = 2
RUNS = int(os.environ.get("FROSTLINE_MULTIHOST_RUNS", "60"))
LATENCY = 0.15
STALLED_AFTER = 10.0

pytestmark = [pytest.mark.timeout(900)] + ([pytest.mark.slow] if RUNS > 60 else [])


@dataclass
class Work:
    run_id: str
    source: str
    expected: object
    rejects: bool = False
    history: list[str] = field(default_factory=list)


def _fanout(width: int, tag: str) -> tuple[str, object]:
    return textwrap.dedent(f'''
        async def orchestrate(ctx, args):
            async def shot(i):
                return await ctx.run("echo", {{"shot": i, "tag": "{tag}"}})

            got = await ctx.parallel([shot(i) for i in range({width})])
            return sum(g["shot"] for g in got[:16])
    '''), sum(range(width))


def _loop(n: int, tag: str) -> tuple[str, object]:
    return textwrap.dedent(f'''
        async def orchestrate(ctx, args):
            out = []
            for i in range({n}):
                r = await ctx.run("echo", {{"step": i, "tag": "{tag}"}})
                out.append(r["step"])
            return out
    '''), list(range(n))


def _pipeline(tag: str) -> tuple[str, object]:
    return textwrap.dedent(f'''
        async def orchestrate(ctx, args):
            async def draft(x):
                return await ctx.run("echo", {{"n": x, "tag": "{tag}"}})

            async def polish(r):
                return await ctx.run("echo", {{"n": r["n"] * 10, "tag": "{tag}"}})

            got = await ctx.pipeline([1, 2, 3, 4], draft, polish)
            return [g["n"] for g in got[:4]]
    '''), [10, 20, 30, 40]


REJECTED = '''    ok = await ctx.run("image.generate", {"prompt": "frame", "size": "7x7"})
'''


def workload(n: int, seed: int = 14) -> list[Work]:
    rng = random.Random(seed)
    works = []
    for i in range(n):
        tag = f"t{i}"
        shape = i % 3
        source, expected = (_fanout(rng.randint(4, 16), tag) if shape == 0 else
                            _loop(rng.randint(3, 6), tag) if shape == 1 else _pipeline(tag))
        rejects = i % 5 == 4
        if rejects:  # the provider refuses the last call; the run fails until repaired
            body, ret = source.rsplit("    return", 1)
            source = body + REJECTED + "    return" + ret
        works.append(Work(f"mh-{i}", source, expected, rejects))
    return works


class Hosts:
    """One worker process per namespace, restarted after each SIGKILL."""

    def __init__(self, lab: NetLab, tmp: Path) -> None:
        self.lab, self.tmp = lab, tmp
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.killed: dict[int, float] = {}  # pid → when it died

    def start(self, i: int) -> None:
        out = open(self.tmp / f"w{i}.out", "ab")  # noqa: SIM115 — the process owns it
        argv = [sys.executable, "-m", "tests.worker.host_process", self.lab.url(i), "--name",
                f"w{i}", "--latency", str(LATENCY), "--concurrency", "2",
                "--log", str(self.tmp / f"w{i}.calls.jsonl"),
                "--journal", str(self.tmp / f"w{i}.locks.jsonl"),
                "--heartbeat", "0.5", "--stalled-after", str(STALLED_AFTER)]
        self.procs[i] = subprocess.Popen(self.lab.exec_argv(i, argv), cwd=ROOT, stdout=out,
                                         stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONPATH": str(ROOT)})

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        self.killed[proc.pid] = time.time()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(10)


def chaos(lab: NetLab, hosts: Hosts, rng: random.Random, feed: Callable[[], None],
          log: list[str]) -> None:
    """10 SIGKILLs and 2 link cuts, ~1.5 s apart; fresh runs are submitted just before each
    fault, so runs are in flight at every one."""
    events = ["kill"] * KILLS + ["cut"] * CUTS
    rng.shuffle(events)
    for what in events:
        time.sleep(1.0)
        feed()
        time.sleep(0.5)
        i = rng.randrange(HOSTS)
        if what == "kill":
            hosts.kill(i)
            log.append(f"kill w{i}")
            time.sleep(0.5)
            hosts.start(i)
        else:
            lab.cut(i)
            log.append(f"cut w{i}")
            time.sleep(4.0)
            lab.mend(i)


def settle(store: Store, work: Work, logs: list[Path], deadline: float) -> None:
    """Play the operator until the run succeeds: repair a rejection, reconcile a crash."""
    source = work.source
    while time.monotonic() < deadline:
        state = None
        for attempt in store.list_attempts(work.run_id)[-1:]:
            state = attempt.status
        tickets = [e.data["job"] for e in store.list_events(work.run_id)
                   if e.kind == "job.queued"]
        job = wait_job(store, work.run_id, tickets[-1], deadline - time.monotonic())
        assert job is not None and job.state == "finished", (work.run_id, job)
        assert job.error is None, (work.run_id, job.error)
        state = job.outcome["status"]
        work.history.append(state)
        if state == "succeeded":
            return
        if state == "failed" and work.rejects and "7x7" in source:
            assert job.outcome["error"]["code"] in ("provider", "InvalidParameter"), job.outcome
            source = source.replace('"7x7"', '"512x512"')  # the repair
        elif state == "unresolved":
            assert reconcile_from_logs(store, work.run_id, logs) >= 1
        else:
            raise AssertionError(f"{work.run_id} ended {state}: {job.outcome.get('error')}")
        submit_attempt(store, work.run_id, source)
    raise AssertionError(f"{work.run_id} did not settle in time: {work.history}")


@pytest.fixture
def lab():
    why = unavailable()
    if why is not None:
        pytest.skip(f"multi-host test: {why}")
    built = NetLab(HOSTS).open()
    try:
        yield built
    finally:
        built.close()
        assert built.leftovers() == []


def test_runs_survive_kills_and_link_cuts_across_three_hosts(lab, tmp_path):
    hosts = Hosts(lab, tmp_path)
    works = workload(RUNS)
    store = open_store(lab.url())
    try:
        for i in range(HOSTS):
            hosts.start(i)
        for i in range(HOSTS):
            eventually(lambda i=i: "frostline worker" in (tmp_path / f"w{i}.out").read_text(),
                       timeout=60, what=f"worker w{i}")
        log: list[str] = []
        first, rest = works[: RUNS // 3], works[RUNS // 3:]
        for work in first:
            submit_attempt(store, work.run_id, work.source)
        batches = iter([rest[k::KILLS + CUTS] for k in range(KILLS + CUTS)])

        def feed() -> None:
            for work in next(batches, []):
                submit_attempt(store, work.run_id, work.source)

        storm = threading.Thread(target=chaos, args=(lab, hosts, random.Random(7), feed, log))
        storm.start()
        storm.join()
        logs = [tmp_path / f"w{i}.calls.jsonl" for i in range(HOSTS)]
        deadline = time.monotonic() + 600
        for work in works:
            settle(store, work, logs, deadline)
        assert log.count("cut w0") + log.count("cut w1") + log.count("cut w2") == CUTS, log
        assert sum(1 for e in log if e.startswith("kill")) == KILLS, log
        _check(store, works, logs, hosts, tmp_path)
    finally:
        hosts.stop()
        store.close()


def _check(store: Store, works: list[Work], logs: list[Path], hosts: Hosts,
           tmp_path: Path) -> None:
    assert duplicates(logs) == {}
    for work in works:
        assert store.list_attempts(work.run_id)[-1].result == work.expected, work.run_id
        assert work.history[-1] == "succeeded"
        assert all(h in ("unresolved", "failed") for h in work.history[:-1]), work.history
        assert ("failed" in work.history) == work.rejects, (work.run_id, work.history)
    committed = {(s.run_id, str(s.identity)): s.result
                 for work in works for s in store.list_slots(work.run_id)}
    for e in executions(logs):
        if e["capability"] == "echo":  # no lost commit: what was paid for is in the prefix
            assert committed.get((e["run_id"], e["identity"])) == e["payload"], e
    journals = [tmp_path / f"w{i}.locks.jsonl" for i in range(HOSTS)]
    assert overlaps(journals, hosts.killed) == []
    unresolved = sum(w.history.count("unresolved") for w in works)
    print(f"\nmulti-host: {len(works)} runs, {len(hosts.killed)} kills, "
          f"{unresolved} unresolved-then-reconciled, "
          f"{sum(1 for w in works if w.rejects)} failed-then-repaired")
