"""Resume a run: its next attempt runs the script of its latest attempt on the same args.

The attempt replays the committed prefix (no committed call executes again), receives the
answers its waits got since as their calls' results, and goes on; a wait still without an
answer ends it `waiting` again, spending nothing more. A run that crashed mid-attempt (status
`running`, its lock free) resumes the same way, under the crash rules.
"""

from __future__ import annotations

import asyncio
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.capabilities.provider import Provider
from frostline.contract.status import RunStatus
from frostline.errors import DefinitionError, RunNotFound
from frostline.runtime.outcome import AttemptOutcome
from frostline.runtime.runners import Runner
from frostline.store.base import Store

RESUMABLE = ("waiting", "running")


def resume_source(store: Store, run_id: str) -> str:
    """The script the next attempt runs: the latest attempt's that reached the runtime."""
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r} in this store", run_id=run_id)
    if run.status not in RESUMABLE:
        raise DefinitionError(
            f"run {run_id!r} is {run.status}, not waiting: there is nothing to resume (run a "
            "script with 'frostline run', or repair it with 'frostline repair')",
            run_id=run_id, status=run.status)
    for attempt in reversed(store.list_attempts(run_id)):
        if attempt.annotated:
            return attempt.source
    raise DefinitionError(f"run {run_id!r} has no attempt that ran; nothing to resume",
                          run_id=run_id)


def resumable_source(store: Store, run_id: str) -> str | None:
    """`resume_source` for a queued resume job: None when the run no longer waits (another
    job resumed it first), so the job ends without an attempt."""
    run = store.get_run(run_id)
    if run is None or run.status != RunStatus.WAITING:
        return None
    return resume_source(store, run_id)


async def resume_async(store: Store, run_id: str, *, providers: Provider, runner: Runner,
                       catalog: Catalog = DEFAULT_CATALOG,
                       fail_open: bool | None = None) -> AttemptOutcome:
    """Run the next attempt of the waiting run `run_id` (inside a running event loop)."""
    from frostline.runtime.execute import execute_async

    source = resume_source(store, run_id)
    return await execute_async(store, run_id, source, args=None, providers=providers,
                               runner=runner, catalog=catalog, fail_open=fail_open)


def resume(store: Store, run_id: str, **kwargs: Any) -> AttemptOutcome:
    """`resume_async`, blocking. Example: ``resume(store, "r1", providers=p, runner=r)``"""
    return asyncio.run(resume_async(store, run_id, **kwargs))
