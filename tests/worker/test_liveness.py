"""Workers stay live under database faults (issue 31): real worker processes, the real
PostgreSQL and real `pg_terminate_backend` sweeps. Nothing stays `doing` without a worker
running it, and a finished job is never run again."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from frostline.embedded.jobs import JobSpec, JobState, record_queued
from frostline.embedded.jobs import wait_job as _wait_job
from frostline.errors import StoreUnavailable
from frostline.worker import ProcrastinateQueue
from frostline.worker import schema as jobs_schema
from frostline.worker.submit import submit_attempt
from tests.worker.conftest import eventually
from tests.worker.host_process import sweep

pytestmark = pytest.mark.postgres

ECHO = textwrap.dedent('''
    async def orchestrate(ctx, args):
        a = await ctx.run("echo", {"n": 1})
        b = await ctx.run("echo", {"n": 2})
        return [a["n"], b["n"]]
''')


class Retrying:
    """The test's own store, through sweeps: a swept connection fails one call (nothing of it
    stored), the next call reconnects."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            for _ in range(20):
                try:
                    return found(*args, **kwargs)
                except StoreUnavailable:
                    continue
            raise AssertionError(f"the store kept failing on {name}")
        return call


def wait_job(store: Any, run_id: str, ticket: str, timeout: float) -> JobState | None:
    return _wait_job(Retrying(store), run_id, ticket, timeout)


def _jobs(store: Any, query: str, *params: Any) -> list[tuple[Any, ...]]:
    queue = ProcrastinateQueue(store)
    try:
        with jobs_schema.connect(queue.conninfo) as conn:
            return list(conn.execute(query, params).fetchall())
    finally:
        queue.close()


def _status(store: Any, job_id: int) -> str:
    return str(_jobs(store, "SELECT status FROM procrastinate_jobs WHERE id = %s", job_id)[0][0])


def _kinds(store: Any, run_id: str, ticket: str) -> list[str]:
    return [e.kind for e in store.list_events(run_id)
            if e.kind.startswith("job.") and e.data.get("job") == ticket]


def test_issue31_a_status_lost_in_a_sweep_is_saved_and_the_worker_keeps_working(own_fleet,
                                                                                own_store):
    store = Retrying(own_store)
    own_fleet.start("w1", "--concurrency", "1", "--fault", "sweep:swept")
    sub = submit_attempt(store, "swept-1", ECHO)
    assert wait_job(store, "swept-1", sub.ticket, 90).outcome["status"] == "succeeded"
    eventually(lambda: "fault: swept" in own_fleet.output("w1"), what="the sweep")
    # The save met a dead connection; it is retried until saved, not lost in a task.
    eventually(lambda: _status(store, sub.queue_job_id) == "succeeded", timeout=30,
               what="the swept job's status saved")
    said = own_fleet.output("w1")
    assert "saved job" in said or "could not save" not in said
    assert own_fleet.procs["w1"].poll() is None
    after = submit_attempt(store, "after-1", ECHO)  # the listener and heartbeat live on
    assert wait_job(store, "after-1", after.ticket, 60).outcome["status"] == "succeeded"
    eventually(lambda: _jobs(store, "SELECT id FROM procrastinate_jobs WHERE status = "
                             "'doing'") == [], timeout=30, what="no job left doing")
    assert _kinds(store, "swept-1", sub.ticket).count("job.finished") == 1
    assert "Task exception was never retrieved" not in own_fleet.output("w1")


def test_issue31_a_job_held_by_a_worker_that_does_not_run_it_is_taken_back(own_fleet,
                                                                             own_store):
    store = Retrying(own_store)
    own_fleet.start("w1", "--concurrency", "1")
    eventually(lambda: _jobs(store, "SELECT worker_id FROM frostline_workers WHERE name = "
                             "'w1'"), what="w1 registered")
    sweep(own_fleet.url)  # the fault that loses a fetch's reply
    worker_id = _jobs(store, "SELECT worker_id FROM frostline_workers WHERE name = 'w1'")
    # What a fetch whose reply was lost leaves: the job `doing` under w1, which never saw it.
    spec = JobSpec("attempt", "held-1", {"source": ECHO, "args": None, "envelope": None})
    queue = ProcrastinateQueue(store)
    try:
        with jobs_schema.connect(queue.conninfo, autocommit=False) as conn:
            job_id = queue.app.configure_task("frostline.job", lock="held-1",
                                              queueing_lock="held-1", queue=queue.queue,
                                              connection=conn).defer(job=spec.to_args())
            conn.execute("UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s "
                         "WHERE id = %s", (worker_id[-1][0], job_id))
            conn.commit()
    finally:
        queue.close()
    record_queued(store, spec, attempt=1, queue_job_id=job_id)
    state = wait_job(store, "held-1", spec.ticket, 60)
    assert state is not None and state.outcome["status"] == "succeeded", state
    requeued = [e.data["reason"] for e in store.list_events("held-1")
                if e.kind == "job.requeued"]
    assert requeued and "does not run it" in requeued[0]
    eventually(lambda: _status(store, job_id) == "succeeded", timeout=30,
               what="the taken-back job done")


def test_issue31_a_finished_job_whose_status_was_never_saved_is_not_run_again(own_fleet,
                                                                               own_store):
    store = Retrying(own_store)
    w1 = own_fleet.start("w1", "--concurrency", "1", "--stalled-after", "2", "--fault",
                     "die:done")
    sub = submit_attempt(store, "done-1", ECHO)
    assert wait_job(store, "done-1", sub.ticket, 90).outcome["status"] == "succeeded"
    w1.wait(30)  # it died between storing job.finished and saving the job's status
    assert _status(store, sub.queue_job_id) == "doing"
    sweep(own_fleet.url)
    own_fleet.start("w2", "--concurrency", "1", "--stalled-after", "2")
    eventually(lambda: _status(store, sub.queue_job_id) == "succeeded", timeout=60,
               what="the finished job marked done")
    assert "marked done, not run again" in own_fleet.output("w2")
    kinds = _kinds(store, "done-1", sub.ticket)
    assert kinds.count("job.started") == 1 and kinds.count("job.finished") == 1, kinds
    assert "job.requeued" not in kinds
    assert len(store.list_attempts("done-1")) == 1


def _xmin(store: Any, query: str, *params: Any) -> str:
    return str(_jobs(store, query, *params)[0][0])


def test_issue31_a_submission_commits_with_its_event_even_right_after_a_sweep(own_fleet,
                                                                              own_store):
    store = Retrying(own_store)
    queue = ProcrastinateQueue(own_store)  # long-lived, as the HTTP API's is
    try:
        first = queue.submit(store, JobSpec("attempt", "q-1", {"source": ECHO}))
        sweep(own_fleet.url)  # the queue's pooled connection is dead now
        second = queue.submit(store, JobSpec("attempt", "q-2", {"source": ECHO}))
    finally:
        queue.close()
    for sub in (first, second):
        # one transaction wrote both rows: the event is there exactly when the job is
        event = _xmin(store, "SELECT xmin FROM fl.events WHERE seq = %s", sub.queued_seq)
        job = _xmin(store, "SELECT xmin FROM procrastinate_jobs WHERE id = %s",
                    sub.queue_job_id)
        assert event == job, sub
    assert [e.kind for e in store.list_events("q-2")] == ["job.queued"]
    assert len(_jobs(store, "SELECT id FROM procrastinate_jobs WHERE lock = 'q-2'")) == 1


def test_issue31_a_submission_again_with_its_key_gives_back_the_first(own_fleet, own_store,
                                                                     tmp_path):
    import json
    import os
    import subprocess
    import sys

    from tests.worker.conftest import ROOT

    store = Retrying(own_store)
    own_fleet.start("w1", "--concurrency", "1")
    sub = submit_attempt(store, "keyed", ECHO, key="order-7")
    assert wait_job(store, "keyed", sub.ticket, 60).outcome["status"] == "succeeded"
    again = submit_attempt(store, "keyed", ECHO, key="order-7")  # after it ran: no attempt 2
    assert again == sub
    script = tmp_path / "echo.py"
    script.write_text(ECHO)
    cli = subprocess.run(
        [sys.executable, "-m", "frostline", "submit", str(script), "--run", "keyed", "--store",
         own_fleet.url, "--key", "order-7", "--json"], cwd=ROOT, text=True, capture_output=True,
        timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["job"] == sub.ticket and json.loads(cli.stdout)["attempt"] == 1
    assert len(store.list_attempts("keyed")) == 1
    assert len(_jobs(store, "SELECT id FROM procrastinate_jobs WHERE lock = 'keyed'")) == 1


def _listed(url: str) -> list[dict[str, Any]]:
    import json
    import os
    import subprocess
    import sys

    from tests.worker.conftest import ROOT

    out = subprocess.run([sys.executable, "-m", "frostline", "workers", "--store", url, "--json"],
                         cwd=ROOT, text=True, capture_output=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout)["workers"])


def test_issue31_a_killed_worker_is_listed_stalled_then_forgotten(own_fleet, own_store):
    store = Retrying(own_store)
    timing = ("--stalled-after", "2", "--forget-after", "6")
    own_fleet.start("w1", "--concurrency", "1", *timing)
    own_fleet.start("w2", "--concurrency", "1", *timing)
    eventually(lambda: {w["name"] for w in _listed(own_fleet.url)} == {"w1", "w2"},
               what="both workers registered")
    assert {w["state"] for w in _listed(own_fleet.url)} == {"live"}
    own_fleet.kill("w1")
    sweep(own_fleet.url)
    stalled = eventually(lambda: [w for w in _listed(own_fleet.url)
                                  if w["name"] == "w1" and w["state"] == "stalled"],
                         what="w1 listed as stalled")
    assert stalled[0]["silent_s"] > 2  # type: ignore[index]
    assert [w["state"] for w in _listed(own_fleet.url) if w["name"] == "w2"] == ["live"]
    eventually(lambda: [w["name"] for w in _listed(own_fleet.url)] == ["w2"], timeout=60,
               what="w1 forgotten")
    assert len(_jobs(store, "SELECT id FROM procrastinate_workers")) == 1
    assert "forgot worker(s)" in own_fleet.output("w2")


def _frostline(*args: str) -> Any:
    import os
    import subprocess
    import sys

    from tests.worker.conftest import ROOT

    return subprocess.run([sys.executable, "-m", "frostline", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"})


def test_issue31_runs_show_and_the_api_name_one_state_after_a_sweep_mid_call(own_fleet,
                                                                            own_store):
    """A sweep while a call is in flight: however the run ends (the store took the commit
    on a fresh connection, or the call is left unresolved), every surface says the same
    word, and an unresolved call comes with the command that reconciles it. The lost-commit
    case itself is pinned by tests/runtime/test_fail_closed.py on both stores."""
    import json

    from frostline.service.operations import run_summary

    store = Retrying(own_store)
    own_fleet.start("w1", "--concurrency", "1", latency=1.0)
    sub = submit_attempt(store, "cut", ECHO)
    eventually(lambda: store.unresolved_calls("cut"), what="the first call dispatched")
    sweep(own_fleet.url)
    state = wait_job(store, "cut", sub.ticket, 90)
    assert state is not None and state.state == "finished", state
    word = store.list_attempts("cut")[-1].status
    assert word in ("succeeded", "unresolved"), word
    assert store.get_run("cut").status == word
    assert run_summary(store, store.get_run("cut"))["status"] == word
    listed = _frostline("runs", "--store", own_fleet.url, "--json")
    assert [r["status"] for r in json.loads(listed.stdout)["runs"]] == [word], listed
    shown = _frostline("show", "cut", "--store", own_fleet.url)
    assert f"status {word}" in shown.stdout, shown.stdout + shown.stderr
    pending = [c for c in store.unresolved_calls("cut")
               if store.get_slot("cut", c.identity) is None]
    assert (word == "unresolved") == bool(pending)
    for c in pending:
        assert f"frostline reconcile cut {c.identity}" in shown.stdout, shown.stdout


def test_issue31_a_finished_job_held_when_the_database_went_away_is_not_run_again(
        own_fleet, own_store):
    """The status save gives up only when the watchdog finds the database gone; the worker
    says so, and its next registration hands the job back: as done, since it finished."""
    from tests.conftest import PG_ENV
    from tests.worker.host_process import reopen

    store = Retrying(own_store)
    own_fleet.start("w1", "--concurrency", "1", "--fault", "cut:gone")
    sub = submit_attempt(store, "gone-1", ECHO)
    eventually(lambda: "the database is gone" in own_fleet.output("w1"), timeout=60,
               what="w1 giving up the status save")
    import os

    reopen(own_fleet.url, os.environ[PG_ENV])
    eventually(lambda: _status(store, sub.queue_job_id) == "succeeded", timeout=60,
               what="the job handed back as done")
    said = own_fleet.output("w1")
    assert "handing back what it held" in said and "marked done, not run again" in said
    kinds = _kinds(store, "gone-1", sub.ticket)
    assert kinds.count("job.started") == 1 and kinds.count("job.finished") == 1, kinds
    assert len(store.list_attempts("gone-1")) == 1
    after = submit_attempt(store, "then-2", ECHO)  # and it works on
    assert wait_job(store, "then-2", after.ticket, 60).outcome["status"] == "succeeded"
