"""Test doubles of the coding workflow's `solve`, for the A/B driver's tests only.

They are stand-ins with the real signature, never the workflow: `scripted_solve_double` derives
every instrument from the arm's flags and the task id by a fixed script, so the driver, the
statistics and the rules can be checked against known answers. Nothing here is a result.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from frostline.coding.interface import Arm, FaultPlan, Instruments, Task, TaskOutcome

#: A task whose id ends with this makes the double raise (a solver bug the driver survives).
EXPLODE = "-explode"
#: ... and this one kills the worker process outright.
DIE = "-die"
#: ... and this one never ends: it starts a child (as a test suite's sandbox would) and waits;
#: the child's pid goes to the file named by $FROSTLINE_HANG_PIDFILE, the temporary folder it
#: made to $FROSTLINE_HANG_TMPFILE.
HANG = "-hang"


def _h(task: Task, salt: str) -> int:
    return int(hashlib.sha256(f"{salt}:{task.task_id}".encode()).hexdigest()[:8], 16)


def scripted_solve_double(task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                          workdir: Path) -> TaskOutcome:
    """Scripted instruments: the lattice removes repeated work and stale context, gates and
    allowlists remove illegal and redundant actions, the free agent pays tokens; arms with the
    lattice resolve every task, the others three in four."""
    if task.task_id.endswith(EXPLODE):
        raise RuntimeError("scripted failure")
    if task.task_id.endswith(DIE):
        (workdir / "scratch").write_text(task.task_id)  # the driver must remove it
        os._exit(3)
    if task.task_id.endswith(HANG):
        import subprocess
        import time

        (workdir / "scratch").write_text(task.task_id)  # the driver must remove it
        # a temporary folder (as a sandboxed test run makes one): the driver must remove it
        tmp = Path(tempfile.mkdtemp())
        (tmp / "scratch").write_text(task.task_id)
        if os.environ.get("FROSTLINE_HANG_TMPFILE"):
            Path(os.environ["FROSTLINE_HANG_TMPFILE"]).write_text(str(tmp))
        child = subprocess.Popen(["sleep", "600"])
        Path(os.environ["FROSTLINE_HANG_PIDFILE"]).write_text(str(child.pid))
        time.sleep(600)
    assert workdir.is_dir() and not any(workdir.iterdir())
    if os.environ.get("FROSTLINE_ORDER_FILE"):  # which job ran when, for the driver's tests
        with open(os.environ["FROSTLINE_ORDER_FILE"], "a") as order:
            order.write(f"{task.task_id} {arm.name}\n")
    (workdir / "scratch").write_text(task.task_id)
    resolved = 1 if arm.lattice or _h(task, "r") % 4 else 0
    ins = Instruments(
        resolved=resolved,
        tokens=0 if model is None else 1000 + _h(task, "t") % 500,
        llm_calls=0 if model is None else 3,
        illegal_actions=0 if arm.allowlists and arm.gates else 1 + _h(task, "i") % 3,
        redundant_actions=0 if arm.allowlists else 1 + _h(task, "d") % 2,
        repeated_work=0 if arm.lattice else 2 + _h(task, "w") % 3,
        regressions=_h(task, "g") % 2 if not arm.failure_edges else 0,
        stale_context=0 if arm.lattice else 1,
    )
    status = "ACCEPT" if resolved else "TERMINAL_REJECT"
    return TaskOutcome(task.task_id, arm.name, status, "" if resolved else "out_of_budget", ins)


def declining_solve_double(task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                           workdir: Path) -> TaskOutcome:
    """Declines every task, as `solve` does for an arm it cannot run."""
    return TaskOutcome(task.task_id, arm.name, "not_run", f"{arm.name} declined by the double")


def slow_solve_double(task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                      workdir: Path) -> TaskOutcome:
    """`scripted_solve_double` after $FROSTLINE_SLOW_S seconds (default 0.5), its process id
    written first to a file named after the job under $FROSTLINE_SLOW_PIDDIR: a job long enough
    for a test to kill the driver while it runs. The job that finds itself the
    $FROSTLINE_SLOW_STALL-th in that folder sleeps ten minutes instead (a job the driver's death
    must end)."""
    import time

    seconds = float(os.environ.get("FROSTLINE_SLOW_S", "0.5"))
    piddir = os.environ.get("FROSTLINE_SLOW_PIDDIR")
    if piddir:
        Path(piddir, f"{arm.name}.{task.task_id}.{os.getpid()}").write_text(str(os.getpid()))
        if len(os.listdir(piddir)) == int(os.environ.get("FROSTLINE_SLOW_STALL", "0")):
            seconds = 600.0
    time.sleep(seconds)
    return scripted_solve_double(task, arm, faults, model=model, workdir=workdir)
