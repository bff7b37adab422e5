"""`frostline ab` resumes a run whose process was killed (SIGKILL): same tasks, same seed, only
the jobs its journal lacks, and no job of the killed driver left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from frostline.coding.ab.driver import run_ab
from frostline.coding.ab.journal import JOURNAL_FILE, Journal
from frostline.coding.interface import FaultPlan
from frostline.coding.tasks.split import load_tasks
from frostline.errors import DefinitionError
from tests.coding.ab_doubles import scripted_solve_double
from tests.coding.ab_fixtures import sealed_tasks

ROOT = Path(__file__).resolve().parents[2]


def _journal_jobs(results: Path) -> list[tuple[str, str]]:
    rows = []
    for raw in (results / JOURNAL_FILE).read_text().splitlines()[1:]:
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if "outcome" in row:
            rows.append((row["arm"], row["task"]))
    return rows


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _ab(tasks: Path, results: Path, env: dict[str, str], arms: str = "arm2,arm4"
        ) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "frostline", "ab", "--tasks", str(tasks), "--split", "heldout",
         "--arms", arms, "--faults", "0.2", "--fault-seed", "11", "--no-figures", "--out",
         str(results), "--solver", "tests.coding.ab_doubles:slow_solve_double", "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(300)
def test_a_sigkilled_ab_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    tasks = sealed_tasks(tmp_path / "t", 5)
    results, piddir, order = tmp_path / "r", tmp_path / "pids", tmp_path / "order"
    piddir.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}",
           "FROSTLINE_SLOW_PIDDIR": str(piddir), "FROSTLINE_ORDER_FILE": str(order),
           "FROSTLINE_SLOW_S": "0.3", "FROSTLINE_SLOW_STALL": "4"}
    driver = _ab(tasks, results, env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(piddir.iterdir())) < 4:
        assert driver.poll() is None, driver.communicate()
        time.sleep(0.05)
    # the fourth job is running (and stalls): three are in the journal
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    before = _journal_jobs(results)
    assert len(before) == 3
    # No job of the killed driver goes on running (it would race the resumed run): the stalled
    # one would sleep for ten minutes.
    pids = [int(p.read_text()) for p in piddir.iterdir()]
    for _ in range(600):
        if not any(_alive(pid) for pid in pids):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"a job of the killed driver outlived it: {[p for p in pids if _alive(p)]}")

    # Another run in the same folder is refused with what differs.
    other = _ab(tasks, results, env, arms="arm4")
    out, _ = other.communicate(timeout=120)
    assert other.returncode == 2, out
    error = json.loads(out)["error"]
    assert error["reason"] == "journal_mismatch" and "arms" in error["differ"]

    resumed = _ab(tasks, results, env)
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    report = json.loads(out)
    assert report["run"]["sessions"] == 2 and report["run"]["resumed_jobs"] == len(before)
    assert report["arms"]["arm4"]["tasks"] == report["arms"]["arm2"]["tasks"] == 5
    jobs = _journal_jobs(results)
    assert sorted(jobs) == sorted(set(jobs)) and len(jobs) == 10  # every job once
    lines = (results / "outcomes.jsonl").read_text().splitlines()
    assert len(lines) == 10
    # What the journal held was not run again; at most the jobs killed mid-way ran twice.
    ran = Counter(order.read_text().splitlines())
    assert all(ran[f"{task} {arm}"] == 1 for arm, task in before)
    assert sum(ran.values()) - 10 <= 1  # --jobs 1: one job at most was cut short
    # Same tasks, same fault seed: the resumed outcomes equal a run that was never stopped.
    straight = run_ab(load_tasks(tasks, "heldout"), ["arm2", "arm4"], scripted_solve_double,
                      faults=FaultPlan(0.2, 11), workdir=tmp_path / "w")
    expected = {(o.arm, o.task_id): o.instruments.resolved
                for arm in straight.outcomes.values() for o in arm}
    got = {(row["arm"], row["task_id"]): row["instruments"]["resolved"]
           for row in map(json.loads, lines)}
    assert got == expected


def test_a_torn_last_line_is_ignored_and_another_run_is_refused(tmp_path: Path) -> None:
    tasks = load_tasks(sealed_tasks(tmp_path / "t", 3), "heldout")
    identity = {"tasks": [t.task_id for t in tasks], "arms": ["arm4"]}
    journal = Journal(tmp_path / "r", identity)
    run_ab(tasks[:2], ["arm4"], scripted_solve_double, faults=FaultPlan(),
           workdir=tmp_path / "w", journal=journal)
    with open(tmp_path / "r" / JOURNAL_FILE, "a") as fh:
        fh.write('{"arm": "arm4", "task": "x", "outco')  # killed mid-write
    again = Journal(tmp_path / "r", identity)
    assert set(again.done) == {("arm4", t.task_id) for t in tasks[:2]} and again.sessions == 2
    run = run_ab(tasks, ["arm4"], scripted_solve_double, faults=FaultPlan(),
                 workdir=tmp_path / "w", journal=again)
    assert run.resumed_jobs == 2 and [o.task_id for o in run.outcomes["arm4"]] == \
        [t.task_id for t in tasks]
    assert len(Journal(tmp_path / "r", identity).done) == len(tasks)
    with pytest.raises(DefinitionError, match="another A/B run") as info:
        Journal(tmp_path / "r", {**identity, "arms": ["arm2"]})
    assert info.value.fields["differ"] == ["arms"]
