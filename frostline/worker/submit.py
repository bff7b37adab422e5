"""Submitting an attempt from a program: check it here, queue it for any worker.

Example::

    with open_store("postgresql://app@db/frostline") as store:
        sub = submit_attempt(store, "brand-video-7", source, args={"brief": "a fox"})
        state = wait_job(store, sub.run_id, sub.ticket, timeout_s=600)
"""

from __future__ import annotations

from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.embedded.jobs import JobSpec, Submission, precheck_script
from frostline.embedded.tickets import new_ticket, ticket_for
from frostline.store.base import Store
from frostline.worker.queue import ProcrastinateQueue


def submit_attempt(store: Store, run_id: str, source: str, *, args: Any = None,
                   envelope: dict[str, Any] | None = None,
                   catalog: Catalog = DEFAULT_CATALOG, key: str | None = None,
                   relocation: str | None = None) -> Submission:
    """Queue `source` as the next attempt of `run_id` (created with `envelope` if new; the
    attempt runs under `relocation` when given, see `execute`).

    The checker runs first, against the run's envelope: a rejected script raises ScriptRejected
    and nothing is queued. AlreadyQueued if the run has a job waiting or running. With an
    idempotency `key`, a submission again with the same key returns the first one's
    Submission (however it ended) instead of queueing anything.
    """
    run = store.get_run(run_id)
    precheck_script(source, run.envelope if run is not None else (envelope or {}), catalog,
                    store=store, run_id=run_id if run is not None else None)
    queue = ProcrastinateQueue(store)
    try:
        params: dict[str, Any] = {"source": source, "args": args, "envelope": envelope}
        if relocation is not None:
            params["relocation"] = relocation
        return queue.submit(store, JobSpec("attempt", run_id, params, _ticket(run_id, key)))
    finally:
        queue.close()


def _ticket(run_id: str, key: str | None) -> str:
    return new_ticket() if key is None else ticket_for(run_id, key)


def submit_graph(store: Store, run_id: str, graph: str, bodies: str, *,
                 key: str | None = None) -> Submission:
    """Queue a durable run (or the resumption of one) of phase graph `graph` ('seed',
    'canonical' or a JSON file) with the state bodies of module or file `bodies`; the worker
    that takes it loads both by name, so both must be there on every worker host.

    AlreadyQueued if the run has a job waiting or running; `key` as in `submit_attempt`.
    """
    queue = ProcrastinateQueue(store)
    try:
        return queue.submit(store, JobSpec("graph", run_id, {"graph": graph, "bodies": bodies},
                                           _ticket(run_id, key)))
    finally:
        queue.close()
