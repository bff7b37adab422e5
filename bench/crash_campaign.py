"""Crash campaign: SIGKILL a host at four points of a call and count what the contract loses.

Each trial runs one script (sequential, loop or fanout) in a fresh host process that kills
itself at one instrumented point of the k-th call:

    before_write      before the durable attempt record (begin_call) is queued
    after_write       once the attempt record is durable, before the provider runs
    after_provider    after the provider returned, before the commit is queued
    commit_in_flight  right after the commit is queued, while the store makes it durable
                      (the reply does not wait for that; see frostline.runtime.broker)
    after_commit      once the commit is durable

The points are instrumented by wrapping the store's writes (`submit` of BeginCall /
CommitCall), so the broker under test is the production one. Recovery then runs the same script on the same run id with
an honest operator: an unresolved call whose execution the provider's own log shows is
reconciled with its result, any other is abandoned. Counted per trial:

    silent duplicates   provider executions of one identity beyond the first (must be 0)
    lost commits        commits that returned before the kill but have no slot after (must be 0)
    final ok            the recovered run's result equals an uncrashed reference run

Usage::

    python bench/crash_campaign.py --trials 24 [--store postgresql://...] [--seed 1]

It prints a table per script × point and exits 1 if any duplicate or lost commit is found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections import defaultdict
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from frostline.contract.records import SlotRecord  # noqa: E402
from frostline.providers.local import LocalProviders  # noqa: E402
from frostline.providers.provider_log import ProviderLog  # noqa: E402
from frostline.runtime.execute import execute  # noqa: E402
from frostline.store import open_store  # noqa: E402
from frostline.store.base import Store  # noqa: E402
from frostline.store.writes import BeginCall, CommitCall, Write  # noqa: E402
from frostline.testing import FaultyStore, InProcessRunner  # noqa: E402

T = TypeVar("T")

POINTS = ("before_write", "after_write", "after_provider", "commit_in_flight", "after_commit")
SCRIPTS: dict[str, tuple[str, int]] = {
    "sequential": (textwrap.dedent("""
        async def orchestrate(ctx, args):
            out = []
            out.append(await ctx.run("echo", {"step": "plan"}))
            out.append(await ctx.run("echo", {"step": "draft"}))
            out.append(await ctx.run("echo", {"step": "polish"}))
            out.append(await ctx.run("echo", {"step": "ship"}))
            return out
        """), 4),
    "loop": (textwrap.dedent("""
        async def orchestrate(ctx, args):
            out = []
            for i in range(3):
                shot = await ctx.run("echo", {"shot": i})
                out.append(await ctx.run("echo", {"review": shot["shot"]}))
            return out
        """), 6),
    "fanout": (textwrap.dedent("""
        async def orchestrate(ctx, args):
            async def shot(i):
                return await ctx.run("echo", {"shot": i})

            return await ctx.parallel([shot(i) for i in range(4)])
        """), 4),
}


class KillingStore(FaultyStore):
    """Delegates to the real store and SIGKILLs this process at one point of the k-th call."""

    def __init__(self, inner: Store, point: str, k: int, journal: Path) -> None:
        super().__init__(inner, fail_reads=False, fail_writes=False)
        self.point, self.k, self.journal = point, k, journal
        self.begins = 0
        self.commits = 0

    def _die(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def submit(self, write: Write[T]) -> Future[T]:
        # The inner store's queue (its writer may hold a settled commit briefly).
        if isinstance(write, BeginCall):
            index, self.begins = self.begins, self.begins + 1
            if self.point == "before_write" and index == self.k:
                self._die()
            future = self.inner.submit(write)
            if self.point == "after_write" and index == self.k:
                # Runs in the store's thread as the record becomes durable, before the broker
                # hears of it (its callback is added after this one).
                future.add_done_callback(lambda f: self._die())
            return future
        if isinstance(write, CommitCall):
            index, self.commits = self.commits, self.commits + 1
            if self.point == "after_provider" and index == self.k:
                self._die()
            slot: SlotRecord = write.slot
            future = self.inner.submit(write)
            future.add_done_callback(lambda f: self._committed(f, slot, index))
            if self.point == "commit_in_flight" and index == self.k:
                self._die()
            return future
        return self.inner.submit(write)

    def _committed(self, future: Future[Any], slot: SlotRecord, index: int) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        # Journal every commit that became durable before the kill.
        fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (str(slot.identity) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.point == "after_commit" and index == self.k:
            self._die()


def host_main(url: str, run_id: str, script: str, point: str, k: int, work: Path) -> None:
    source, _ = SCRIPTS[script]
    with open_store(url) as inner:
        store = KillingStore(inner, point, k, work / f"{run_id}.journal")
        execute(store, run_id, source, providers=LocalProviders(log_path=work / "provider.jsonl"),
                runner=InProcessRunner())


def _executions(work: Path, run_id: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    path = work / "provider.jsonl"
    for entry in ProviderLog(path).read() if path.exists() else []:
        if entry.get("run_id") == run_id and entry.get("ok"):
            out[entry["identity"]].append(entry)
    return out


def trial(url: str, work: Path, run_id: str, script: str, point: str, k: int,
          reference: Any) -> dict[str, Any]:
    env = {"PATH": os.defpath, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    proc = subprocess.run([sys.executable, __file__, "--host", url, run_id, script, point,
                           str(k), str(work)], env=env, cwd=str(ROOT), capture_output=True,
                          timeout=120)
    crashed = proc.returncode == -signal.SIGKILL
    row = {"script": script, "point": point, "k": k, "crashed": crashed, "unresolved": 0,
           "reconciled": 0, "abandoned": 0, "duplicates": 0, "lost": 0, "final_ok": False}
    source, _ = SCRIPTS[script]
    providers = LocalProviders(log_path=work / "provider.jsonl")
    with open_store(url) as store:
        journal = work / f"{run_id}.journal"
        committed_before = set(journal.read_text().split()) if journal.exists() else set()
        slots = {str(s.identity) for s in store.list_slots(run_id)}
        row["lost"] = len(committed_before - slots)
        outcome = None
        for _ in range(3):
            outcome = execute(store, run_id, source, providers=providers,
                              runner=InProcessRunner())
            if outcome.status != "unresolved":
                break
            executed = _executions(work, run_id)
            for call in store.unresolved_calls(run_id):
                ident = str(call.identity)
                if ident in {str(s.identity) for s in store.list_slots(run_id)}:
                    continue
                row["unresolved"] += 1
                if executed.get(ident):  # the provider's log shows it ran: write it back
                    store.reconcile_call(run_id, call.identity, abandon=False,
                                         result=executed[ident][-1]["payload"])
                    row["reconciled"] += 1
                else:
                    store.reconcile_call(run_id, call.identity, abandon=True)
                    row["abandoned"] += 1
        row["final_ok"] = outcome is not None and outcome.status == "succeeded" and \
            outcome.result == reference
        row["duplicates"] = sum(len(v) - 1 for v in _executions(work, run_id).values())
    return row


def campaign(url: str | None, trials: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:8]  # run ids must be fresh in a shared store
    with tempfile.TemporaryDirectory(prefix="frostline-crash-") as tmp:
        work = Path(tmp)
        url = url or f"sqlite:///{work}/campaign.db"
        references: dict[str, Any] = {}
        with open_store(url) as store:
            for name, (source, _) in SCRIPTS.items():
                ref = execute(store, f"reference-{name}-{tag}", source,
                              providers=LocalProviders(), runner=InProcessRunner())
                references[name] = ref.result
        plan = [(s, p) for s in SCRIPTS for p in POINTS]
        rows = []
        for i in range(trials):
            script, point = plan[i % len(plan)]
            k = rng.randrange(SCRIPTS[script][1])
            rows.append(trial(url, work, f"crash-{tag}-{i}", script, point, k,
                              references[script]))
        return rows


def report(rows: list[dict[str, Any]], seconds: float) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["script"], r["point"])].append(r)
    head = (f"{'script':<11}{'point':<16}{'trials':>7}{'killed':>7}{'unresolved':>11}"
            f"{'reconciled':>11}{'abandoned':>10}{'dup':>5}{'lost':>5}{'final ok':>9}")
    lines = [head, "-" * len(head)]
    for (script, point), rs in sorted(groups.items()):
        lines.append(f"{script:<11}{point:<16}{len(rs):>7}{sum(r['crashed'] for r in rs):>7}"
                     f"{sum(r['unresolved'] for r in rs):>11}{sum(r['reconciled'] for r in rs):>11}"
                     f"{sum(r['abandoned'] for r in rs):>10}{sum(r['duplicates'] for r in rs):>5}"
                     f"{sum(r['lost'] for r in rs):>5}{sum(r['final_ok'] for r in rs):>9}")
    dup = sum(r["duplicates"] for r in rows)
    lost = sum(r["lost"] for r in rows)
    lines.append("-" * len(head))
    lines.append(f"{len(rows)} trials in {seconds:.1f}s: silent duplicates {dup}, lost commits "
                 f"{lost}, final ok {sum(r['final_ok'] for r in rows)}/{len(rows)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--host":
        url, run_id, script, point, k, work = args[1:7]
        host_main(url, run_id, script, point, int(k), Path(work))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--store", default=None, help="store URL (default: a temporary SQLite)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args(args)
    start = time.monotonic()
    rows = campaign(opts.store, opts.trials, opts.seed)
    print(json.dumps(rows, indent=1) if opts.json else report(rows, time.monotonic() - start))
    bad = any(r["duplicates"] or r["lost"] or not r["final_ok"] or not r["crashed"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
