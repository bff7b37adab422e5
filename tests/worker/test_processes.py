"""Workers as real processes over a real PostgreSQL: jobs spread over workers, a SIGKILLed
worker's job finishes elsewhere under the crash rules, SIGTERM hands a job back, and the
command line (`frostline worker`, `submit --wait`, `workers`) does what it says."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from frostline.embedded.jobs import job_state, wait_job
from frostline.worker.submit import submit_attempt
from tests.worker.conftest import ROOT, eventually
from tests.worker.crash_rules import duplicates, overlaps, reconcile_from_logs

pytestmark = pytest.mark.postgres

SEQUENTIAL = textwrap.dedent('''
    async def orchestrate(ctx, args):
        out = []
        for i in range(8):
            r = await ctx.run("echo", {"i": i, "run": args["tag"]})
            out.append(r["i"])
        return out
''')


def _logs(fleet):
    return sorted(fleet.tmp.glob("*.calls.jsonl"))


def _journals(fleet):
    return sorted(fleet.tmp.glob("*.locks.jsonl"))


def test_jobs_spread_over_workers_and_sigterm_stops_gracefully(fleet, pg_store):
    fleet.start("w1", "--concurrency", "1", latency=0.1)
    fleet.start("w2", "--concurrency", "1", latency=0.1)
    subs = [submit_attempt(pg_store, f"r{i}", SEQUENTIAL, args={"tag": i}) for i in range(6)]
    states = [wait_job(pg_store, s.run_id, s.ticket, 90) for s in subs]
    assert [s.state for s in states] == ["finished"] * 6
    assert all(s.outcome["status"] == "succeeded" for s in states), states
    assert {s.worker for s in states} == {"w1", "w2"}
    assert duplicates(_logs(fleet)) == {}
    assert overlaps(_journals(fleet), {}) == []
    proc = fleet.procs["w1"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert "stopped" in fleet.output("w1")


def test_a_killed_worker_s_run_finishes_on_another_under_the_crash_rules(fleet, pg_store):
    w1 = fleet.start("w1", "--concurrency", "1", latency=0.3)
    sub = submit_attempt(pg_store, "victim", SEQUENTIAL, args={"tag": "v"})
    eventually(lambda: len((fleet.tmp / "w1.calls.jsonl").read_text().splitlines()) >= 2
               if (fleet.tmp / "w1.calls.jsonl").exists() else False, what="two calls on w1")
    killed = {w1.pid: fleet.kill("w1")}
    fleet.start("w2", "--concurrency", "1", latency=0.05)
    state = wait_job(pg_store, "victim", sub.ticket, 90)
    assert state.state == "finished" and state.worker == "w2"
    kinds = [e.kind for e in pg_store.list_events("victim") if e.kind.startswith("job.")]
    assert kinds.count("job.started") == 2 and "job.requeued" in kinds
    status = state.outcome["status"]
    if status == "unresolved":  # the kill caught a call in flight: fail closed until reconciled
        assert reconcile_from_logs(pg_store, "victim", _logs(fleet)) >= 1
        again = submit_attempt(pg_store, "victim", SEQUENTIAL)
        status = wait_job(pg_store, "victim", again.ticket, 90).outcome["status"]
    assert status == "succeeded"
    assert pg_store.list_attempts("victim")[-1].result == list(range(8))
    assert duplicates(_logs(fleet)) == {}
    assert overlaps(_journals(fleet), killed) == []


def test_sigterm_hands_a_running_job_back(fleet, pg_store):
    w1 = fleet.start("w1", "--concurrency", "1", "--grace", "0.2", latency=0.3)
    sub = submit_attempt(pg_store, "handed", SEQUENTIAL, args={"tag": "h"})
    eventually(lambda: (s := job_state(pg_store, "handed", sub.ticket)) and s.state == "running",
               what="the job running on w1")
    w1.send_signal(signal.SIGTERM)
    assert w1.wait(30) == 0
    assert "handed back 1 attempt" in fleet.output("w1")
    fleet.start("w2", "--concurrency", "1", latency=0.05)
    state = wait_job(pg_store, "handed", sub.ticket, 90)
    assert state.worker == "w2" and state.outcome["status"] == "succeeded"
    assert state.outcome["result"] == list(range(8))
    assert duplicates(_logs(fleet)) == {}
    assert overlaps(_journals(fleet), {}) == []


def _cli(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "frostline", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, **kw)


def test_the_command_line_worker_submit_and_workers(pg_store_url, tmp_path):
    script = tmp_path / "echo.py"
    script.write_text(SEQUENTIAL)
    out = open(tmp_path / "worker.out", "wb")  # noqa: SIM115 — the process owns it
    worker = subprocess.Popen(
        [sys.executable, "-m", "frostline", "worker", "--store", pg_store_url, "--runner",
         "process", "--concurrency", "2", "--heartbeat", "0.5", "--name", "cli-w"],
        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        health = eventually(lambda: (tmp_path / "worker.out").read_text(), what="health line")
        assert "store postgresql://" in health and "queues frostline" in health
        assert "sandbox: plain child process" in health and "concurrency 2" in health
        done = _cli("submit", str(script), "--run", "cli-run", "--store", pg_store_url,
                    "--args", '{"tag": "c"}', "--wait", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        body = json.loads(done.stdout)
        assert body["state"] == "finished" and body["worker"] == "cli-w"
        assert body["outcome"]["result"] == list(range(8))
        queued = _cli("submit", str(script), "--run", "cli-run", "--store", pg_store_url)
        assert queued.returncode == 0 and "attempt 2" in queued.stdout
        listed = _cli("workers", "--store", pg_store_url, "--json")
        assert listed.returncode == 0, listed.stderr
        names = [w["name"] for w in json.loads(listed.stdout)["workers"]]
        assert names == ["cli-w"]
        rejected = tmp_path / "bad.py"
        rejected.write_text("import os\nasync def orchestrate(ctx, args):\n    return 1\n")
        refused = _cli("submit", str(rejected), "--run", "bad", "--store", pg_store_url)
        assert refused.returncode == 6 and "checker rejected" in refused.stderr
        sqlite = _cli("submit", str(script), "--run", "x", "--store",
                      f"sqlite:///{tmp_path / 'x.db'}")
        assert sqlite.returncode == 2 and "PostgreSQL" in sqlite.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        code = worker.wait(30)
        out.close()
    assert code == 0


def test_a_durable_graph_run_is_a_job_too(fleet, pg_store, tmp_path, monkeypatch):
    from frostline.worker import submit_graph

    tool_log = tmp_path / "tools.jsonl"
    monkeypatch.setenv("FROSTLINE_TOOL_LOG", str(tool_log))  # the worker inherits it
    fleet.start("w1", "--concurrency", "1")
    bodies = str(ROOT / "tests" / "graph" / "durable_bodies.py")
    sub = submit_graph(pg_store, "g1", "canonical", bodies)
    state = wait_job(pg_store, "g1", sub.ticket, 90)
    assert state.state == "finished" and state.error is None, state
    assert state.outcome["status"] == "accepted" and state.outcome["executed"] > 0
    ran = len(tool_log.read_text().splitlines())
    again = submit_graph(pg_store, "g1", "canonical", bodies)  # resuming replays every call
    second = wait_job(pg_store, "g1", again.ticket, 90)
    assert second.outcome["replayed"] == state.outcome["executed"]
    assert second.outcome["executed"] == 0 and len(tool_log.read_text().splitlines()) == ran
    assert pg_store.get_run("g1").kind == "graph"
