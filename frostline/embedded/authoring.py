"""The author job: a model writes a run's first script (the authoring loop,
frostline.repair.author) on whichever host runs the job, and an accepted script runs there as
the run's first attempt.

A job like an attempt or a repair (`JobSpec("author", run_id, {"task", "model",
"max_rewrites", "args"})`), so a server whose jobs run on PostgreSQL workers authors too: the
model endpoint and its credentials are the worker's. The job's outcome is the first attempt's
(`status`, `attempt`, `executed`, …) with the authoring report under `author` (every draft's
verdict, violations, tokens, wall time); when no draft is accepted, its `status` is
`not_authored`, no attempt is opened and the run is marked `failed`. A model that fails ends
the job with the model's error (code `model`), the run marked `failed` likewise. The report is
recorded (the run's `author` event) before the attempt starts, so a job run again after a
hand-back runs the accepted script without asking the model again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.contract.status import RunStatus
from frostline.errors import FrostlineError, RunNotFound
from frostline.repair.author import DEFAULT_MAX_REWRITES, AuthorResult, AuthorTask
from frostline.store.base import Store

NOT_AUTHORED = "not_authored"

# (task, model spec) → the authoring loop's result, with the model this host resolves the spec to
Write = Callable[[AuthorTask, str], AuthorResult]
# (source, args) → the first attempt's outcome as a dict
Execute = Callable[[str, Any], dict[str, Any]]


def author_params(task: str, model: str, *, max_rewrites: int = DEFAULT_MAX_REWRITES,
                  args: Any = None) -> dict[str, Any]:
    """The parameters of an author job."""
    return {"task": task, "model": model, "max_rewrites": max_rewrites, "args": args}


def author_job(store: Store, run_id: str, params: dict[str, Any], *, write: Write,
               execute: Execute, catalog: Catalog = DEFAULT_CATALOG) -> dict[str, Any]:
    """Run an author job on `run_id`: `write` the script for the task, then `execute` it."""
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"run {run_id!r} does not exist", run_id=run_id)
    model = str(params["model"])
    args = params.get("args")
    task = AuthorTask(str(params["task"]), catalog=catalog,
                      envelope=Envelope.from_dict(run.envelope, catalog) if run.envelope
                      else None, args=args or None,
                      max_rewrites=int(params.get("max_rewrites", DEFAULT_MAX_REWRITES)))
    report = accepted_report(store, run_id)
    if report is None:
        try:
            result = write(task, model)
        except FrostlineError:
            store.set_run_status(run_id, RunStatus.FAILED)
            raise
        report = result.to_dict()
        store.append_event(run_id, "author", {
            "model": model, "accepted": result.accepted is not None,
            "usage": result.usage_total, "report": report,
            "rewrites": [{"n": d.n, "ok": d.ok, "reason": d.reason} for d in result.rewrites]})
    if report["accepted"] is None:
        store.set_run_status(run_id, RunStatus.FAILED)
        return {"run_id": run_id, "status": NOT_AUTHORED, "attempt": None, "author": report,
                "message": f"the model wrote no script the checker accepts in "
                           f"{len(report['rewrites'])} draft(s); rephrase the task, raise "
                           "max_rewrites, or send a script"}
    return {**execute(str(report["accepted"]), args), "author": report}


def accepted_report(store: Store, run_id: str) -> dict[str, Any] | None:
    """The report of the run's accepted authoring, if a job already wrote one: a job run again
    (handed back by a worker that stopped during the attempt) runs that script, never paying
    the model twice."""
    for ev in store.list_events(run_id):
        report = ev.data.get("report") if ev.kind == "author" else None
        if isinstance(report, dict) and isinstance(report.get("accepted"), str):
            return report
    return None


def host_writer(config: Any = None) -> Write:
    """The authoring loop with the model endpoint a spec names on this host (`config`'s
    [models]); no replay policy: a spec that came over the network never opens a file."""

    def write(task: AuthorTask, spec: str) -> AuthorResult:
        from frostline.repair.author import author
        from frostline.repair.endpoints import model_client

        return author(model_client(spec, config), task)

    return write
