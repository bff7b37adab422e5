"""A durable graph run killed with SIGKILL mid-way resumes in a new process without repeating
any committed tool call.

A real child process runs the canonical graph through `frostline graph run --run`; its EXECUTE
tool blocks on a file barrier. The test polls the store until the earlier states' tool calls
are committed and EXECUTE's call is durably pending, kills the child with SIGKILL, releases
the barrier and resumes the run in a new process. The tools' own append-only log is the count
of real executions.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from durable_bodies import BARRIER_ENV, CALLS, EFFECT_ENV, LOG_ENV, executions

from frostline.graph.durable import tool_identity
from frostline.store import CallStatus, open_store

ROOT = Path(__file__).resolve().parents[2]
BODIES = Path(__file__).with_name("durable_bodies.py")
CLI = "from frostline.cli.graph import graph; graph(prog_name='frostline graph')"
BEFORE_EXECUTE = ("RECONNAISSANCE", "LOCALIZE", "GENERATE", "EDIT")
DEADLINE_S = 60.0  # a hang guard only; the test never waits on time for ordering


def child(store_url: str, run_id: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CLI, "run", "canonical", "--bodies",
                             str(BODIES), "--run", run_id, "--store", store_url],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for_pending_execute(store_url: str, run_id: str, proc: subprocess.Popen[str]) -> None:
    """Poll the store until EXECUTE's tool call is durably pending (so everything before it
    has committed)."""
    target = tool_identity("EXECUTE", 0, 0)
    deadline = time.monotonic() + DEADLINE_S
    with open_store(store_url) as store:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the child exited early ({proc.returncode}): {proc.stdout.read()}")
            if store.get_run(run_id) is not None and any(
                    c.identity == target and c.status is CallStatus.PENDING
                    for c in store.list_calls(run_id)):
                return
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("EXECUTE's tool call never became pending")
            time.sleep(0.01)


@pytest.mark.parametrize("side_effecting", [False, True], ids=["read-only", "side-effecting"])
def test_sigkill_mid_run_then_resume_repeats_no_committed_tool(
        store_url: str, tmp_path: Path, side_effecting: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "tools.jsonl"
    barrier = tmp_path / "barrier"
    monkeypatch.setenv(LOG_ENV, str(log))
    env = {**os.environ, LOG_ENV: str(log), BARRIER_ENV: str(barrier),
           EFFECT_ENV: "1" if side_effecting else "0"}
    run_id = "killed"

    proc = child(store_url, run_id, env)
    wait_for_pending_execute(store_url, run_id, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    proc.stdout.close()

    committed_before = {tool_identity(s, 0, i) for s in BEFORE_EXECUTE
                        for i in range(len(CALLS[s]))}
    with open_store(store_url) as store:
        assert {s.identity for s in store.list_slots(run_id)} == committed_before
        assert [a.status for a in store.list_attempts(run_id)] == ["running"]
    assert len(executions()) == len(committed_before)  # EXECUTE's tool never got past the barrier

    barrier.touch()
    if side_effecting:
        # The tool may have had its effect: the resumed run fails closed until an operator says.
        stopped = subprocess.run([sys.executable, "-c", CLI, "run", "canonical", "--bodies",
                                  str(BODIES), "--run", run_id, "--store", store_url],
                                 cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
        assert stopped.returncode == 5, stopped.stdout + stopped.stderr
        assert "graph/EXECUTE/v0@:0" in stopped.stderr
        assert len(executions()) == len(committed_before)
        with open_store(store_url) as store:
            store.reconcile_call(run_id, tool_identity("EXECUTE", 0, 0), abandon=True)

    resumed = subprocess.run([sys.executable, "-c", CLI, "run", "canonical", "--bodies",
                              str(BODIES), "--run", run_id, "--store", store_url],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "tools executed 3, replayed 5" in resumed.stdout

    every = {tool_identity(s, 0, i) for s, calls in CALLS.items() for i in range(len(calls))}
    ran = [(e["tool"], tuple(sorted(e["payload"].items()))) for e in executions()]
    calls = [(t, tuple(sorted(p.items()))) for s in CALLS for t, p in CALLS[s]]
    assert sorted(ran) == sorted(calls)  # every tool call executed exactly once in total
    assert len({e["pid"] for e in executions()}) == 2  # split across the killed and the resumed
    with open_store(store_url) as store:
        assert {s.identity for s in store.list_slots(run_id)} == every
        assert store.get_run(run_id).status == "accepted"
        statuses = [a.status for a in store.list_attempts(run_id)]
        assert statuses == (["failed", "unresolved", "accepted"] if side_effecting
                            else ["failed", "accepted"])
        kinds = [e.kind for e in store.list_events(run_id)]
        assert "attempt_crashed" in kinds and kinds[-1] == "attempt_finished"
