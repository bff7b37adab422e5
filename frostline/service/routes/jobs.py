"""Jobs: where one stands (the `Location` of a 202), which workers run them, and the queue's
metrics for Prometheus."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from frostline.contract.records import key_as_name, run_key
from frostline.embedded.jobs import job_state
from frostline.errors import RunNotFound
from frostline.service import metrics
from frostline.service.dependencies import Credentials, Principal, State, principal

router = APIRouter(tags=["jobs"])


@router.get("/v1/runs/{run_id}/jobs/{job}")
def get_job(job: str, run_id: str, who: Principal, state: State) -> dict[str, Any]:
    """A job of the run: queued, running, finished (with its outcome) or interrupted. An
    author job answers here for its whole life: while the run is being authored, and after
    an authoring that stored no run (its outcome says why)."""
    run = state.store.find_run(who, run_id)
    key = run.run_id if run is not None and run.owner == who else run_key(who, run_id)
    found = job_state(state.store, key, job)
    if found is None and (run is None or run.owner != who):
        # the answer for a run the caller cannot see, whoever owns one of that name
        raise RunNotFound(f"no run {run_id!r}", run_id=run_id)
    if found is None:
        raise RunNotFound(f"run {run_id!r} has no job {job!r}", run_id=run_id, job=job)
    return key_as_name(key, run_id, found.to_dict())


@router.get("/v1/workers")
def list_workers(who: Principal, state: State) -> dict[str, Any]:
    """The workers taking this server's jobs, with their last heartbeat and current jobs (the
    caller sees its own runs' jobs; others are counted, not named), and the caller's jobs
    that failed for good lately (`failed`: retries exhausted, refused by the store)."""
    out = []
    for worker in state.queue.workers():
        jobs = worker.get("jobs", [])
        mine = [{**j, "run_id": run.name} for j in jobs
                if (run := _owned(state, j.get("run_id"), who)) is not None]
        out.append({**worker, "jobs": mine, "busy": len(jobs)})
    failed = [{**f, "run_id": run.name} for f in state.queue.failed_jobs()
              if (run := _owned(state, f.get("run_id"), who)) is not None]
    return {"workers": out, "failed": failed}


def _owned(state: Any, run_id: Any, who: str) -> Any:
    run = state.store.get_run(run_id) if isinstance(run_id, str) else None
    return run if run is not None and run.owner == who else None


def metrics_reader(request: Request, state: State, credentials: Credentials) -> None:
    """A token is needed unless the operator made the metrics public
    (`frostline serve --metrics-public`): queue depth and job counts tell of every
    principal's activity."""
    if not getattr(request.app.state, "metrics_public", False):
        principal(request, state, credentials)


@router.get("/v1/metrics", tags=["meta"], response_class=Response,
            responses={200: {"content": {metrics.CONTENT_TYPE: {}}}},
            dependencies=[Depends(metrics_reader)])
def get_metrics(state: State) -> Response:
    """Queue depth, job latency and workers, in Prometheus text format (a bearer token is
    needed unless the server runs with `--metrics-public`)."""
    return Response(metrics.render(state.queue), media_type=metrics.CONTENT_TYPE)
