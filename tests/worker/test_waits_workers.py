"""Runs that wait, on workers (issue 16): an approval survives a killed worker, and a due
timer resumes the run through a scheduled job, with nobody calling resume."""

from __future__ import annotations

import json
import textwrap
import time

from frostline.embedded.answers import approve
from frostline.embedded.jobs import wait_job
from frostline.service.resumer import wake
from frostline.worker.queue import ProcrastinateQueue
from frostline.worker.submit import submit_attempt
from tests.worker.conftest import eventually

APPROVAL = textwrap.dedent('''
    async def orchestrate(ctx, args):
        a = await ctx.run("echo", {"n": 1})
        ok = await ctx.run("human.approve", {"ask": "go?"})
        t = await ctx.run("timer.sleep", {"seconds": args["sleep"]})
        b = await ctx.run("echo", {"n": 2})
        return [ok["approved"], b["n"]]
''')


def _echoes(fleet) -> list[int]:
    out = []
    for path in fleet.tmp.glob("*.calls.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry["capability"] == "echo" and entry["ok"]:
                out.append(entry["payload"]["n"])
    return sorted(out)


def test_an_approval_survives_a_killed_worker_and_nothing_runs_twice(fleet, pg_store):
    fleet.start("w1", "--concurrency", "1")
    sub = submit_attempt(pg_store, "a1", APPROVAL, args={"sleep": 0})
    state = wait_job(pg_store, "a1", sub.ticket, 90)
    assert state.outcome["status"] == "waiting"
    queue = ProcrastinateQueue(pg_store)
    # The worker records the outcome a moment before its job counts as finished; killed in
    # between, its job would count as running until a worker reclaims it as stalled.
    eventually(lambda: queue.owned_jobs(pg_store.get_run("a1").owner) == 0,
               what="the waiting attempt's job to finish")
    fleet.kill("w1")  # the host that ran the attempt is gone
    approve(pg_store, "a1", "orchestrate/#1@:0", by="alice")
    try:
        resumed = wake(pg_store, queue, "a1", time.time())
        assert resumed is not None
        fleet.start("w2", "--concurrency", "1")
        done = wait_job(pg_store, "a1", resumed.ticket, 90)
    finally:
        queue.close()
    assert done.outcome["status"] == "succeeded" and done.worker == "w2"
    assert pg_store.list_attempts("a1")[-1].result == [True, 2]
    assert _echoes(fleet) == [1, 2]


def test_a_due_timer_resumes_the_run_on_a_worker(fleet, pg_store):
    fleet.start("w1", "--concurrency", "1")
    approve_first = APPROVAL.replace('ok = await ctx.run("human.approve", {"ask": "go?"})',
                                     'ok = {"approved": True}')
    sub = submit_attempt(pg_store, "t1", approve_first, args={"sleep": 1})
    assert wait_job(pg_store, "t1", sub.ticket, 90).outcome["status"] == "waiting"
    # nobody resumes it: the worker scheduled the resume job at the timer's due time
    eventually(lambda: pg_store.get_run("t1").status == "succeeded", timeout=90,
               what="the timer's scheduled resume")
    assert pg_store.list_attempts("t1")[-1].result == [True, 2]
    assert _echoes(fleet) == [1, 2]
