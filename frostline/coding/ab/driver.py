"""The A/B driver: every chosen arm on the identical tasks, in a pool of worker processes.

`run_ab` decides first which arms cannot run (no solver, or needing a model when none is
configured) and records why; every other (arm, task) pair is one job for `solve(task, arm,
faults, *, model=None, workdir)`, run in its own forked process (at most `jobs` at once), in a
fresh working folder, task by task (every arm on a task before the next task, the arms' order
rotated from task to task). The same `FaultPlan` (rate and seed) goes to every arm, so every arm meets the
same faults at the same calls. A job that raises ends its task in TERMINAL_REJECT with the error
as its reason, and the driver goes on with the next one. Wall time is the driver's own clock
around the call, never the solver's word.

With a `Journal` (`frostline.coding.ab.journal`) every finished job is on disk before the next
one is heard of, and a run started again on the same journal runs only the jobs it lacks: the
same tasks, arms and fault seed, continued where the run stopped. A worker process dies with
the driver (the kernel sends it SIGKILL when its parent dies, and its sandboxes die with it),
so a killed driver leaves no job running behind it to race the resumed run.

The driver only measures: it reads tasks and writes under its results folder, nothing else.
"""

from __future__ import annotations

import ctypes
import importlib
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

from frostline.coding.ab.journal import Journal
from frostline.coding.arms import ARMS
from frostline.coding.interface import Arm, FaultPlan, Instruments, Task, TaskOutcome

__all__ = ["DEFAULT_SOLVER", "ABRun", "Solver", "load_solver", "run_ab", "spread"]

#: Where the coding workflow's `solve` lives.
DEFAULT_SOLVER = "frostline.coding.solve:solve"
REJECT = "TERMINAL_REJECT"
NOT_RUN = "not_run"
#: A task still running after this long is killed and rejected (a runaway test suite).
TASK_TIMEOUT_S = 900.0


class Solver(Protocol):
    def __call__(self, task: Task, arm: Arm, faults: FaultPlan, *, model: Any = None,
                 workdir: Path) -> TaskOutcome: ...


@dataclass
class ABRun:
    """What the driver measured: outcomes per arm in task order, and the arms not run."""

    tasks: list[Task]
    arms: list[str]
    outcomes: dict[str, list[TaskOutcome]] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=dict)
    faults: FaultPlan = field(default_factory=FaultPlan)
    wall_s: float = 0.0
    jobs: int = 1
    model: str | None = None
    sessions: int = 1  # driver sessions the run took (more than one: it was resumed)
    resumed_jobs: int = 0  # jobs read back from the journal rather than run this session


def spread(tasks: Sequence[Task], limit: int | None) -> list[Task]:
    """The first `limit` tasks taken round-robin over packages (each package's own order
    kept), so a small slice still spans the packages; all of them when `limit` is None."""
    if limit is None:
        return list(tasks)
    seen: dict[str, int] = {}
    ranked = []
    for position, task in enumerate(tasks):
        rank = seen.get(task.package, 0)
        seen[task.package] = rank + 1
        ranked.append((rank, position, task))
    return [t for _, _, t in sorted(ranked, key=lambda x: (x[0], x[1]))[:limit]]


def load_solver(spec: str = DEFAULT_SOLVER) -> tuple[Solver | None, str]:
    """The solve function named `module:attr`, or (None, why it cannot be loaded)."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        return None, (f"the coding workflow's solve function ({spec}) is not part of this "
                      f"installation: {exc}")
    solver = getattr(module, attr or "solve", None)
    if not callable(solver):
        return None, f"{spec} is not a callable solve function"
    return solver, ""


def _solve_one(solver: Solver, task: Task, arm: Arm, faults: FaultPlan, model: Any,
               workdir: Path) -> TaskOutcome:
    """One job (in a worker process): a fresh folder, the driver's clock, errors as rejects."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    started = time.monotonic()
    try:
        outcome = solver(task, arm, faults, model=model, workdir=workdir)
        if not isinstance(outcome, TaskOutcome):
            raise TypeError(f"solve returned {type(outcome).__name__}, not a TaskOutcome")
    except Exception as exc:  # the task ends, the run goes on
        outcome = TaskOutcome(task.task_id, arm.name, REJECT,
                              f"driver: {type(exc).__name__}: {exc}"[:500])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # a task's workspace is not a result
    outcome.instruments.wall_s = round(time.monotonic() - started, 3)
    outcome.instruments.resolved = 1 if outcome.instruments.resolved else 0
    return outcome


def unavailable(names: Sequence[str], model: Any, solver_reason: str) -> dict[str, str]:
    """Why each arm of `names` cannot run, for those that cannot."""
    reasons: dict[str, str] = {}
    for name in names:
        if solver_reason:
            reasons[name] = solver_reason
        elif ARMS[name].needs_model and model is None:
            reasons[name] = ("needs a model and none is configured (a [models.NAME] table in "
                             "the configuration, chosen with --model)")
    return reasons


def _private_tmp(workdir: Path) -> Path:
    """Where a job's temporary files go: beside its folder, so that the driver removes them
    with it when it kills the job (a killed process runs no clean-up of its own)."""
    return workdir.with_name(f"{workdir.name}.tmp")


def _remove(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.rmtree(_private_tmp(workdir), ignore_errors=True)


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when the driver dies (Linux; elsewhere a no-op):
    a job left running by a killed driver would race the run that resumes it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the driver died before the request was made
        os._exit(1)


def _child(conn: Connection, job: tuple[Any, ...], parent: int) -> None:
    _die_with_parent(parent)
    os.setsid()  # its own process group: a task past its time limit is killed whole
    tmp = _private_tmp(job[5])
    tmp.mkdir(parents=True, exist_ok=True)
    tempfile.tempdir = str(tmp)  # this forked process only
    try:
        conn.send(_solve_one(*job))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    conn.close()


def _rejected(job: tuple[Any, ...], why: str, wall_s: float = 0.0) -> TaskOutcome:
    """A task the driver ended; `wall_s` is how long it ran (it counts in the wall-time
    instrument like any other task's)."""
    task, arm = job[1], job[2]
    return TaskOutcome(task.task_id, arm.name, REJECT, f"driver: {why}",
                       Instruments(wall_s=round(wall_s, 3)))


def _kill(proc: Any) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _run_jobs(jobs: list[tuple[Any, ...]], width: int,
              task_timeout: float = TASK_TIMEOUT_S,
              finished: Callable[[int, TaskOutcome], None] = lambda *_: None
              ) -> list[TaskOutcome]:
    """Each job in its own forked process, at most `width` at once. A process that dies
    without answering (a crash the job could not catch) ends only its own task, rejected; so
    does one still running after `task_timeout` seconds (killed with its sandboxes, its
    folder removed as the job would have). `finished(index, outcome)` hears of each job as it
    ends."""
    ctx = multiprocessing.get_context("fork")
    results: list[TaskOutcome | None] = [None] * len(jobs)
    # sentinel -> (job index, process, pipe, when it started)
    running: dict[Any, tuple[int, Any, Connection, float]] = {}
    queue = list(enumerate(jobs))
    while queue or running:
        while queue and len(running) < width:
            index, job = queue.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(child, job, os.getpid()), daemon=True)
            proc.start()
            child.close()
            running[proc.sentinel] = (index, proc, parent, time.monotonic())
        soonest = min(started for *_, started in running.values()) + task_timeout
        ready = wait(list(running), timeout=max(0.0, soonest - time.monotonic()))
        for sentinel in [s for s, (*_, started) in running.items() if s not in ready
                         and started + task_timeout <= time.monotonic()]:
            index, proc, parent, started = running.pop(sentinel)
            _kill(proc)
            proc.join()
            parent.close()
            _remove(jobs[index][5])
            killed = _rejected(jobs[index], f"the task ran past its {task_timeout:g} s time "
                                            "limit and was killed",
                               time.monotonic() - started)
            results[index] = killed
            finished(index, killed)
        for sentinel in ready:
            index, proc, parent, started = running.pop(sentinel)
            answer: TaskOutcome | None
            try:
                answer = parent.recv() if parent.poll() else None
            except (EOFError, OSError):
                answer = None
            parent.close()
            proc.join()
            if answer is None:
                _remove(jobs[index][5])
                answer = _rejected(jobs[index], f"the worker process died (exit code "
                                                f"{proc.exitcode})",
                                   time.monotonic() - started)
            results[index] = answer
            finished(index, answer)
    return [r for r in results if r is not None]


def run_ab(tasks: Sequence[Task], names: Sequence[str], solver: Solver | None, *,
           faults: FaultPlan, model: Any = None, model_label: str | None = None, jobs: int = 1,
           workdir: Path, solver_reason: str = "", task_timeout: float = TASK_TIMEOUT_S,
           progress: Callable[[str], None] = lambda _: None,
           journal: Journal | None = None) -> ABRun:
    """Run every runnable arm of `names` on every task of `tasks` (with `journal`, only the
    jobs it does not already hold, each recorded in it as it ends)."""
    run = ABRun(tasks=list(tasks), arms=list(names), faults=faults, jobs=jobs, model=model_label)
    run.not_run = unavailable(names, model, solver_reason if solver is None else "")
    runnable = [n for n in names if n not in run.not_run]
    started = time.monotonic()
    # Task-major, with the arms' order rotated from task to task: a change in the machine's
    # load while the run goes on then weighs on every arm alike (arm after arm, the arms run
    # last would pay for whatever the machine did late in the run).
    order = [(name, task) for i, task in enumerate(tasks)
             for name in runnable[i % len(runnable):] + runnable[:i % len(runnable)]] \
        if runnable else []
    done = dict(journal.done) if journal is not None else {}
    before = journal.wall_s if journal is not None else 0.0
    if journal is not None:
        run.sessions, run.resumed_jobs = journal.sessions, len(done)
        if done:
            progress(f"resuming: {len(done)} of {len(order)} jobs are in the journal "
                     f"(session {journal.sessions})")
    pending = [(name, task) for name, task in order if (name, task.task_id) not in done]
    batch = [(solver, task, ARMS[name], faults, model, workdir / name / task.task_id)
             for name, task in pending]
    ended: list[int] = []

    def finished(index: int, outcome: TaskOutcome) -> None:
        ended.append(index)
        name, task = pending[index]
        if journal is not None:
            journal.record(name, task.task_id, outcome, before + time.monotonic() - started)
        progress(f"[{len(ended) + len(done)}/{len(order)}] {name} {task.task_id}: "
                 f"{'resolved' if outcome.instruments.resolved else outcome.status} "
                 f"({time.monotonic() - started:.0f} s)")

    fresh = _run_jobs(batch, max(1, jobs), task_timeout, finished) if batch else []
    done.update({(n, t.task_id): o for (n, t), o in zip(pending, fresh, strict=True)})
    results = [done[(n, t.task_id)] for n, t in order]
    position = {t.task_id: i for i, t in enumerate(tasks)}
    for name in runnable:
        outcomes = sorted((o for (n, _), o in zip(order, results, strict=True) if n == name),
                          key=lambda o: position[o.task_id])
        # A task `solve` itself declined to run (status not_run) is not a measurement.
        ran = [o for o in outcomes if o.status != NOT_RUN]
        if outcomes and not ran:
            run.not_run[name] = outcomes[0].reason or "solve did not run it"
            continue
        run.outcomes[name] = ran
        resolved = sum(o.instruments.resolved for o in run.outcomes[name])
        progress(f"{name}: {resolved}/{len(tasks)} resolved")
    run.wall_s = round(before + time.monotonic() - started, 2)
    return run
