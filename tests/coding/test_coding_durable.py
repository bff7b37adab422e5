"""The coding graph as a durable run: SIGKILL mid-way, resume in a new process, and the
workspace is what it was — re-materialised from the committed patches, not re-edited.

A real child process runs arm 4 on the textkit repository (real bubblewrap, real pytest); its
`test.run` blocks, so the test polls the store until TEST's call is durably pending (every call
before it, EDIT's included, has committed), kills the child with SIGKILL and resumes the run in
a second child, which records the mutated file as the first re-executed tool sees it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from coding_repo import CORE, make_task

from frostline.coding.arms import arm
from frostline.coding.interface import FaultPlan
from frostline.coding.resumable import solve_durable
from frostline.contract.records import CallStatus
from frostline.graph.durable import tool_identity
from frostline.store import open_store

CHILD = Path(__file__).with_name("coding_child.py")
ROOT = Path(__file__).resolve().parents[3]
DEADLINE_S = 120.0  # a hang guard only
VISIBLE = ("tests/test_core.py::test_clamp_inside",)
HIDDEN = ("tests/test_core.py::test_clamp_above", "tests/test_core.py::test_clamp_edges")

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def child(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(CHILD), *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_pending(store_url: str, run_id: str, proc: subprocess.Popen[str], state: str) -> None:
    target = tool_identity(state, 0, 0)
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
                pytest.fail(f"{state}'s tool call never became pending")
            time.sleep(0.05)


def test_sigkill_then_resume_rematerialises_the_workspace(store_url: str,
                                                          tmp_path: Path) -> None:
    task = make_task(tmp_path / "src", "clamp_gt", visible=VISIBLE, hidden=HIDDEN)
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(task.to_dict()))
    workdir, out, run_id = tmp_path / "work", tmp_path / "out.json", "coding-killed"
    mutated = workdir / "workspace" / "tree" / task.mutation.file

    proc = child([store_url, run_id, str(task_file), str(workdir), "block", str(out)])
    wait_pending(store_url, run_id, proc, "TEST")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    proc.stdout.close()
    at_crash = mutated.read_text()
    base = (workdir / "workspace" / "base" / task.mutation.file).read_text()
    assert at_crash != base  # EDIT's patch was in the tree when the run died
    edit = tool_identity("EDIT", 0, 0)
    with open_store(store_url) as store:
        assert edit in {s.identity for s in store.list_slots(run_id)}
    shutil.rmtree(workdir / "workspace" / "tree")  # the tree is lost with the machine

    proc = child([store_url, run_id, str(task_file), str(workdir), "record", str(out)])
    assert proc.wait(timeout=DEADLINE_S) == 0, proc.stdout.read()
    proc.stdout.close()
    result = json.loads(out.read_text())
    # the first call that runs again (TEST's) sees the tree exactly as it was at the crash
    assert Path(str(out) + ".snapshot").read_text() == at_crash
    assert result["durable"] == "accepted" and result["outcome"]["status"] == "ACCEPT"
    assert result["outcome"]["instruments"]["resolved"] == 1
    assert result["replayed"] > 0
    assert mutated.read_text() == CORE  # the accepted repair restores the original comparison
    with open_store(store_url) as store:
        edit_calls = [c for c in store.list_calls(run_id) if c.identity == edit]
    assert len(edit_calls) == 1 and edit_calls[0].attempt == 1  # replayed, never re-executed


def test_a_finished_durable_run_started_again_replays_everything(sqlite_url: str,
                                                                 tmp_path: Path) -> None:
    task = make_task(tmp_path / "src", "palindrome_not",
                     visible=("tests/test_core.py::test_palindrome",))
    with open_store(sqlite_url) as store:
        first, outcome = solve_durable(store, "again", task, arm("arm4"), FaultPlan(),
                                       workdir=tmp_path / "w")
        assert outcome is not None and outcome.status == "ACCEPT", outcome
        second, again = solve_durable(store, "again", task, arm("arm4"), FaultPlan(),
                                      workdir=tmp_path / "w")
    assert first.executed > 0 and second.executed == 0
    assert second.replayed == first.executed + first.replayed
    assert again is not None and again.status == "ACCEPT"
    assert again.instruments.resolved == 1
