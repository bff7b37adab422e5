"""`frostline cancel RUN_ID`: stop a run its owner no longer wants.

A queued job of the run is cancelled and never starts; a running one has its attempt stopped
(every call it already dispatched completes and commits first) and ends `cancelled`; a waiting
run is cancelled and nothing resumes it. On a PostgreSQL store the job is cancelled in
Procrastinate's queue, or its worker is asked to stop it; on the SQLite default the process
that runs it (`frostline serve`) reads the request from the store and stops it. The command
waits up to --wait seconds for a running job to end.

Exit codes (the table of `frostline.cli.common`): 0 cancelled (or the stop was asked and is
still under way after --wait); 1 the run has finished, with nothing to cancel; 2 an unknown run;
7 the store cannot be reached.
"""

from __future__ import annotations

from typing import Any

import click

from frostline.cli.common import (
    Command,
    emit_json,
    guarded,
    json_option,
    opened_run,
    store_option,
    text,
)
from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.store import Store


@click.command("cancel", cls=Command)
@click.argument("run_id")
@click.option("--wait", "wait_s", type=click.FloatRange(0, 3600), default=30.0,
              show_default=True, help="Seconds to wait for a running job to stop.")
@store_option
@json_option
def cancel_command(run_id: str, wait_s: float, store_url: str | None, as_json: bool) -> None:
    """Cancel RUN_ID's queued or running job (its attempt ends `cancelled`), or the run
    itself if it waits."""
    from frostline.embedded.cancel import cancel_run, settled

    with opened_run(store_url, run_id, as_json) as store:
        queue = _queue(store)
        try:
            found = guarded(as_json, lambda: cancel_run(store, run_id, by=LOCAL_PRINCIPAL,
                                                        queue=queue))
        finally:
            if queue is not None:
                queue.close()
        result = settled(store, found, wait_s)
    if as_json:
        emit_json(result)
        return
    for job in result["jobs"]:
        click.echo(f"job {text(str(job['job']))} of run {text(run_id)}: was {job['was']}, now "
                   f"{job['state']}")
    click.echo(f"run {text(run_id)} is {result['status']}")


def _queue(store: Store) -> Any:
    """Procrastinate's queue on a PostgreSQL store; None on SQLite (the serving process reads
    the request from the store)."""
    if getattr(store, "schema_name", None) is None:
        return None
    from frostline.worker.queue import ProcrastinateQueue

    return ProcrastinateQueue(store)
