"""Issue 26 over real worker processes and a real PostgreSQL: a value no store can hold fails
its attempt once and the queue moves on; a data error is never retried; a store failure that
may pass is retried a bounded number of times with backoff, then the job and its attempt end
failed with the reason, where `runs`, `show` and the API read it."""

from __future__ import annotations

import json
import textwrap

import pytest

from frostline.embedded.jobs import wait_job
from frostline.service.operations import run_detail, run_summary
from frostline.worker.submit import submit_attempt
from tests.store.helpers import Raw
from tests.worker.test_processes import _cli

pytestmark = pytest.mark.postgres

NUL_RESULT = textwrap.dedent('''
    async def orchestrate(ctx, args):
        return {"s": "a\\x00b"}
''')
FINE = textwrap.dedent('''
    async def orchestrate(ctx, args):
        r = await ctx.run("echo", {"n": 1})
        return r["n"]
''')


def _job_kinds(store, run_id):
    return [e.kind for e in store.list_events(run_id) if e.kind.startswith("job.")]


def test_issue26_nul_in_result_fails_attempt_once(fleet, pg_store):
    fleet.start("w1", "--concurrency", "1")
    poisoned = submit_attempt(pg_store, "poisoned", NUL_RESULT)
    behind = submit_attempt(pg_store, "behind", FINE)  # queued behind it on the one slot
    state = wait_job(pg_store, "poisoned", poisoned.ticket, 60)
    assert state is not None and state.state == "finished", state
    assert state.outcome["status"] == "failed"
    assert state.outcome["error"]["code"] == "value_not_storable"
    assert _job_kinds(pg_store, "poisoned") == ["job.queued", "job.started", "job.finished"]
    [attempt] = pg_store.list_attempts("poisoned")
    assert (attempt.status, attempt.result) == ("failed", None)
    after = wait_job(pg_store, "behind", behind.ticket, 60)
    assert after is not None and after.state == "finished", after
    assert after.outcome["status"] == "succeeded" and after.outcome["result"] == 1


def _trigger_on_success(url: str, sqlstate: str) -> None:
    """The store's attempts refuse to become 'succeeded' with `sqlstate` (a real server
    error, raised by a trigger), every other write passes."""
    raw = Raw(url)
    try:
        raw.execute("CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN IF NEW.status = "
                    f"'succeeded' THEN RAISE EXCEPTION 'poisoned' USING ERRCODE = '{sqlstate}'; "
                    "END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
        raw.execute("CREATE TRIGGER poison BEFORE UPDATE ON attempts FOR EACH ROW "
                    "EXECUTE FUNCTION poison()")
    finally:
        raw.close()


def test_issue26_a_data_error_fails_the_job_without_a_retry(fleet, pg_store, pg_store_url):
    _trigger_on_success(pg_store_url, "22000")  # data_exception
    fleet.start("w1", "--concurrency", "1")
    sub = submit_attempt(pg_store, "refused", FINE)
    state = wait_job(pg_store, "refused", sub.ticket, 60)
    assert state is not None and state.state == "finished", state
    assert state.outcome["status"] == "failed"
    assert state.outcome["error"]["code"] == "store_refused"
    assert _job_kinds(pg_store, "refused") == ["job.queued", "job.started", "job.finished"]
    [attempt] = pg_store.list_attempts("refused")
    assert attempt.status == "failed" and attempt.error["code"] == "store_refused"


def test_issue26_transient_failures_are_retried_with_backoff_then_fail(
        fleet, pg_store, pg_store_url, monkeypatch):
    _trigger_on_success(pg_store_url, "40001")  # serialization_failure: may pass, never does
    monkeypatch.setenv("FROSTLINE_JOB_RETRIES", "2")  # the worker process inherits these
    monkeypatch.setenv("FROSTLINE_JOB_BACKOFF_S", "0.2")
    fleet.start("w1", "--concurrency", "1")
    sub = submit_attempt(pg_store, "flaky", FINE)
    state = wait_job(pg_store, "flaky", sub.ticket, 90)
    assert state is not None and state.state == "finished", state
    assert state.error is not None and state.error["code"] == "retries_exhausted"
    assert state.error["tries"] == 3 and state.error["last"] == "store_unavailable"
    events = [e for e in pg_store.list_events("flaky") if e.kind.startswith("job.")]
    assert [e.kind for e in events].count("job.started") == 3
    requeued = [e for e in events if e.kind == "job.requeued"]
    assert len(requeued) == 2
    gap1 = events[[e.kind for e in events].index("job.requeued") + 1].ts - requeued[0].ts
    assert gap1 >= 0.2  # backoff: not at once
    attempts = pg_store.list_attempts("flaky")
    assert attempts and all(a.status == "failed" for a in attempts)
    assert attempts[-1].error["code"] == "retries_exhausted"
    run = pg_store.get_run("flaky")
    assert run_summary(pg_store, run)["status"] == "failed"
    detail = run_detail(pg_store, run)
    assert detail["attempts"][-1]["error"]["code"] == "retries_exhausted"
    shown = _cli("show", "flaky", "--store", pg_store_url, "--json")
    assert shown.returncode in (0, 1), shown.stderr
    assert "retries_exhausted" in shown.stdout
    listed = _cli("runs", "--store", pg_store_url, "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = [r for r in json.loads(listed.stdout)["runs"] if r["run_id"] == "flaky"]
    assert row["status"] == "failed"


def test_issue26_submit_refuses_args_no_store_holds_before_queueing(pg_store, pg_store_url,
                                                                   tmp_path):
    script = tmp_path / "ok.py"
    script.write_text(FINE)
    got = _cli("submit", str(script), "--run", "q", "--store", pg_store_url, "--args",
               '{"s": "a\\u0000b"}', "--json")
    assert got.returncode == 2, got.stdout + got.stderr
    assert json.loads(got.stdout)["error"]["code"] == "value_not_storable"
    assert pg_store.get_run("q") is None


def test_issue26_over_http_with_workers_poison_is_a_422_and_a_nul_result_fails_once(
        fleet, pg_store):
    """The issue's own setup: the API queues for PostgreSQL workers. NUL args once gave a
    plain-text 500 and a run without a job, a NUL signal a 503, a NUL result a loop."""
    from frostline.service.app import create_app
    from frostline.service.operations import Services
    from frostline.worker import ProcrastinateQueue
    from tests.service.conftest import serving_app

    app = create_app(pg_store, services=Services.remote(ProcrastinateQueue))
    with serving_app(app, pg_store) as live, live.client(live.alice) as c:
        r = c.post("/v1/runs", json={"script": FINE, "run_id": "a", "args": {"s": "\x00"}})
        assert r.status_code == 422 and r.json()["error"]["code"] == "value_not_storable"
        assert c.get("/v1/runs/a").status_code == 404
        fleet.start("w1", "--concurrency", "1")
        r = c.post("/v1/runs", json={"script": NUL_RESULT, "run_id": "n"}, params={"wait": 60})
        assert r.status_code == 200, r.text
        assert r.json()["outcome"]["error"]["code"] == "value_not_storable"
        r = c.post("/v1/runs/n/signals/x", json={"data": "a\x00b"})
        assert r.status_code == 422, r.text  # the value is refused first, in JSON (was a 503)
        assert r.json()["error"]["code"] == "value_not_storable"
        r = c.post("/v1/runs", json={"script": FINE, "run_id": "b"}, params={"wait": 60})
        assert r.status_code == 200 and r.json()["outcome"]["status"] == "succeeded", r.text
        assert c.get("/v1/runs/n").json()["status"] == "failed"
