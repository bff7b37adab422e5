"""The author job: a model writes a run's first script (the authoring loop,
frostline.repair.author) on whichever host runs the job, and an accepted script runs there as
the run's first attempt.

A job like an attempt or a repair (`JobSpec("author", run_id, {"task", "model",
"max_rewrites", "args"})`), so a server whose jobs run on PostgreSQL workers authors too: the
model endpoint and its credentials are the worker's. The job's outcome is the first attempt's
(`status`, `attempt`, `executed`, …) with the authoring report under `author` (every draft's
verdict, violations, tokens, wall time).

The run exists only once a draft is accepted. Until then its row (status `authoring`) only
holds the name: it is listed nowhere, the run's routes answer 409, and the job's life is
recorded on a stream of its own (`frostline.embedded.tickets.author_stream`), never on the run's
events. An accepted draft makes it a run (`created`, then its first attempt). When no draft
is accepted (status `not_authored`), the model fails or answers garbage (the model's error,
code `model`, carrying the drafts so far under `author`), the job is cancelled, or it is
given up, the row is removed in one transaction: no run, no attempt, no event under the name,
which is free again; the job's outcome (`removed: true`) stays readable at its Location. The
row is kept, marked `failed`, only if something was recorded under it meanwhile (fail closed:
`removed: false`). A host that dies mid-authoring: a worker's job is taken back and runs
again; the serving process's pool, when it starts, removes every row still being authored
and marks its job interrupted.

The accepted report is recorded (an `author` event on the job's stream, with its ticket)
before the run is made, so a job run again after a hand-back runs the accepted script without
asking the model again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.contract.status import RunStatus
from frostline.embedded.jobs import JobCancelled
from frostline.embedded.tickets import author_stream
from frostline.errors import RunNotFound
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


def author_job(store: Store, run_id: str, params: dict[str, Any], *, ticket: str,
               write: Write, execute: Execute, catalog: Catalog = DEFAULT_CATALOG,
               cancelled: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """Run the author job `ticket` on `run_id`: `write` the script for the task, then, once a
    draft is accepted, make the run and `execute` it; otherwise remove the row that held the
    name (see the module's note). `cancelled` says whether the owner cancelled the job."""
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"run {run_id!r} does not exist (its authoring ended, and removed "
                          "it)", run_id=run_id)
    model = str(params["model"])
    args = params.get("args")
    report = accepted_report(store, run_id, ticket)
    if report is None:
        if run.status != RunStatus.AUTHORING:
            raise RunNotFound(f"run {run.name!r} is not being authored: an authored script "
                              "is a run's first attempt", run_id=run_id)
        task = AuthorTask(str(params["task"]), catalog=catalog,
                          envelope=Envelope.from_dict(run.envelope, catalog) if run.envelope
                          else None, args=args or None,
                          max_rewrites=int(params.get("max_rewrites", DEFAULT_MAX_REWRITES)))
        try:
            result = write(task, model)
        except Exception as exc:  # a model that fails or answers garbage: no run is left
            removed = store.discard_authoring(run_id)
            fields = getattr(exc, "fields", None)
            if isinstance(fields, dict):
                fields["removed"] = removed
            raise
        report = result.to_dict()
        store.append_event(author_stream(run_id), "author", _author_event(model, result, ticket))
    if report["accepted"] is None:
        removed = store.discard_authoring(run_id)
        return {"run_id": run_id, "status": NOT_AUTHORED, "attempt": None, "author": report,
                "removed": removed,
                "message": f"the model wrote no script the checker accepts in "
                           f"{len(report['rewrites'])} draft(s); "
                           + ("nothing was stored as a run (the name is free again)" if removed
                              else "the run is kept, failed: something was recorded under it "
                                   "meanwhile")
                           + "; rephrase the task, raise max_rewrites, or send a script"}
    now = store.get_run(run_id)
    if now is not None and now.status == RunStatus.AUTHORING:  # else made by an earlier try
        if cancelled():
            store.discard_authoring(run_id)
            raise JobCancelled()
        store.promote_authoring(run_id)
        store.append_event(run_id, "author", _author_event(model, report, ticket))
    return {**execute(str(report["accepted"]), args), "author": report}


def _author_event(model: str, result: AuthorResult | dict[str, Any], ticket: str
                  ) -> dict[str, Any]:
    report = result.to_dict() if isinstance(result, AuthorResult) else result
    return {"job": ticket, "model": model, "accepted": report["accepted"] is not None,
            "usage": report["usage_total"], "report": report,
            "rewrites": [{"n": d["n"], "ok": d["ok"], "reason": d["reason"]}
                         for d in report["rewrites"]]}


def accepted_report(store: Store, run_id: str, ticket: str = "") -> dict[str, Any] | None:
    """The report of job `ticket`'s accepted authoring of `run_id`, if it already wrote one:
    a job run again (handed back by a worker that stopped during the attempt) runs that
    script, never paying the model twice."""
    for stream in (author_stream(run_id), run_id):  # the run's own: jobs queued before
        for ev in store.list_events(stream):
            report = ev.data.get("report") if ev.kind == "author" else None
            if (isinstance(report, dict) and isinstance(report.get("accepted"), str)
                    and ev.data.get("job", ticket) == ticket):
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
