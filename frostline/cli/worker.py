"""`frostline worker`, `frostline submit` and `frostline workers`: attempts run as jobs on
workers that share one PostgreSQL store (frostline.worker), submitted from anywhere.

Exit codes: `worker` 0 after a graceful stop, 2 for a store that is not PostgreSQL; `submit`
0 once the job is queued (with `--wait`, the attempt's own code as `frostline run` gives it),
1 when the run already has a job waiting or running, 2 for bad input, 6 when the checker
rejects the script before anything is queued. `submit --wait` says on stderr when no worker
is alive on the queue (and how to start one) rather than waiting silently, and `--timeout S`
bounds the wait: a job still open then exits 1 with code `wait_timeout` (it stays queued).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    config_option,
    configured_catalog,
    emit_json,
    fail,
    fail_with,
    json_arg_text,
    json_option,
    relocation_option,
)
from frostline.errors import DefinitionError, FrostlineError
from frostline.store.url import parse, resolve

EXIT_REJECTED = 6
_NOT_PG = ("needs a PostgreSQL store (--store postgresql://…); the embedded SQLite default runs "
           "jobs inside `frostline serve`, and `frostline run` runs an attempt inline")


def _pg_url(store_url: str | None, what: str, as_json: bool) -> str:
    url = resolve(store_url)
    try:
        location = parse(url)
    except DefinitionError as err:
        fail_with(err, as_json, EXIT_USAGE)
    if location.backend != "postgres":
        fail(f"{what} {_NOT_PG}", EXIT_USAGE, as_json)
    return url


# ------------------------------------------------------------------------------------ worker
@click.command("worker")
@click.option("--store", "store_url", default=None, metavar="URL",
              help="PostgreSQL store URL shared by every worker (default: $FROSTLINE_STORE).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=4, show_default=True,
              help="Jobs run at once on this worker.")
@config_option
@click.option("--runner", "runner_name", type=click.Choice(["auto", "sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where scripts run; 'process' reduces isolation, 'auto' falls back loudly.")
@click.option("--name", default="", help="Worker name (default: HOST:PID).")
@click.option("--heartbeat", "heartbeat_s", type=click.FloatRange(0.1), default=5.0,
              envvar="FROSTLINE_WORKER_HEARTBEAT", show_default=True,
              help="Seconds between heartbeats and stalled-job checks.")
@click.option("--stalled-after", "stalled_s", type=click.FloatRange(1.0), default=30.0,
              envvar="FROSTLINE_WORKER_STALLED_AFTER", show_default=True,
              help="A worker silent this long is stalled; its jobs go back to the queue.")
@click.option("--grace", "grace_s", type=click.FloatRange(0.0), default=60.0,
              envvar="FROSTLINE_WORKER_GRACE", show_default=True,
              help="On SIGTERM, seconds running jobs get to finish before they are handed back.")
@click.option("--forget-after", "forget_s", type=click.FloatRange(1.0), default=300.0,
              envvar="FROSTLINE_WORKER_FORGET_AFTER", show_default=True,
              help="A worker silent this long is deleted from the listing (stalled until then).")
@click.option("--lock-journal", default=None, metavar="FILE", envvar="FROSTLINE_LOCK_JOURNAL",
              help="Append when this worker takes and lets go of each run (JSON lines).")
@json_option
def worker(store_url: str | None, concurrency: int, config_file: str | None, runner_name: str,
           name: str, heartbeat_s: float, stalled_s: float, grace_s: float,
           forget_s: float, lock_journal: str | None, as_json: bool) -> None:
    """Run jobs from the store's queue on this host (its sandbox, providers, credentials)."""
    from frostline.embedded import default_log_path, make_runner, open_capabilities
    from frostline.embedded.bodies import host_body
    from frostline.worker import WorkerHost, WorkerSettings, open_worker_store

    url = _pg_url(store_url, "`frostline worker`", as_json)
    try:
        runner, label = make_runner(runner_name)
        registry = open_capabilities(config_file, log_path=default_log_path())
    except FrostlineError as err:
        fail(f"{err.message}\n(choose --runner process to run with reduced isolation)"
             if runner_name == "sandbox" else err.message, EXIT_FAILED, as_json, err)
    # A due timer's resume waits for a free slot of its owner, as the API admits any job:
    # the bound is the configuration's [service.limits] executing_attempts, when it sets one.
    configured = registry.config.service_limits.get("executing_attempts")
    settings = WorkerSettings(concurrency=concurrency, name=name, heartbeat_s=heartbeat_s,
                              stalled_after_s=stalled_s, grace_s=grace_s,
                              lock_journal=lock_journal, forget_after_s=max(forget_s, stalled_s),
                              resume_limit=int(configured) if configured else None)
    try:
        store = open_worker_store(url)
        host = WorkerHost(store, lambda stops: host_body(
            registry, runner, registry.catalog, interrupts=stops, config=registry.config),
            sandbox=label, settings=settings, say=lambda line: click.echo(line, err=True))
        try:
            code = host.run()
        finally:
            store.close()
    except FrostlineError as err:  # the store: unreachable, or lost (exit code by kind)
        fail_with(err, as_json)
    finally:
        registry.close()
    sys.exit(code)


# ------------------------------------------------------------------------------------ submit
@click.command("submit")
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run_id", required=True, help="Run id (a new or an existing run).")
@click.option("--store", "store_url", default=None, metavar="URL",
              help="PostgreSQL store URL the workers share (default: $FROSTLINE_STORE).")
@click.option("--args", "args_text", default=None, metavar="JSON|@FILE",
              help="Arguments passed to orchestrate(ctx, args).")
@click.option("--envelope", "envelope_file", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Envelope JSON file (only used when the run is created).")
@click.option("--wait", is_flag=True, help="Wait for the attempt and exit with its code.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0), default=None,
              metavar="SECONDS", help="With --wait: give up waiting after SECONDS (exit 1; "
                                      "the job stays queued). Default: no limit.")
@click.option("--key", default=None, metavar="KEY",
              help="Idempotency key: submitting again with the same KEY (after a timeout or "
                   "an error) returns the first submission's job instead of queueing another.")
@relocation_option
@config_option
@json_option
def submit(script: Path, run_id: str, store_url: str | None, args_text: str | None,
           envelope_file: Path | None, wait: bool, timeout_s: float | None, key: str | None,
           relocation: str | None, config_file: str | None, as_json: bool) -> None:
    """Queue SCRIPT as the next attempt of RUN_ID for a worker to run."""
    import json

    url = _pg_url(store_url, "`frostline submit`", as_json)
    if timeout_s is not None and not wait:
        fail("--timeout bounds --wait; pass --wait too, or drop --timeout", EXIT_USAGE, as_json)
    try:
        source = script.read_text(encoding="utf-8")
        args = json.loads(json_arg_text(args_text)) if args_text is not None else None
        envelope = (json.loads(envelope_file.read_text(encoding="utf-8"))
                    if envelope_file is not None else None)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(f"cannot read the script, --args or --envelope: {exc}", EXIT_USAGE, as_json)
    catalog = configured_catalog(config_file, as_json)
    try:
        outcome = _submit(url, run_id, source, args, envelope, catalog,
                          (float("inf") if timeout_s is None else timeout_s) if wait else None,
                          as_json, key, relocation)
    except FrostlineError as err:
        code = EXIT_REJECTED if err.code == "rejected" else None
        fail_with(err, as_json, code)
    sys.exit(outcome)


def _submit(url: str, run_id: str, source: str, args: Any, envelope: dict[str, Any] | None,
            catalog: Any, wait_s: float | None, as_json: bool, key: str | None = None,
            relocation: str | None = None) -> int:
    from frostline.worker.submit import submit_attempt

    with _store(url) as store:
        sub = submit_attempt(store, run_id, source, args=args, envelope=envelope,
                             catalog=catalog, key=key, relocation=relocation)
        if wait_s is None:
            if as_json:
                emit_json(sub.to_dict())
            else:
                click.echo(f"queued job {sub.ticket}: run {run_id} attempt {sub.attempt}; "
                           f"follow it with `frostline show {run_id}` or GET {sub.location}")
            return 0
        state = _wait(store, url, run_id, sub.ticket, wait_s)
        if state is None or not state.done:
            fail(f"job {sub.ticket} of run {run_id} is still "
                 f"{state.state if state is not None else 'queued'} after {wait_s:g} s; it "
                 "stays queued and runs when a worker takes it (follow it with `frostline show "
                 f"{run_id}`, list the workers with `frostline workers`)", EXIT_FAILED, as_json,
                 code="wait_timeout", job=sub.ticket, run_id=run_id)
    return _report(run_id, state, as_json)


# A worker whose last heartbeat is older than this is not alive (the queue's stalled bound).
_ALIVE_S = 30.0
_SLICE_S = 1.0


def _wait(store: Any, url: str, run_id: str, ticket: str, wait_s: float) -> Any:
    """Wait up to `wait_s` for the job, saying on stderr (once) when no worker is alive to take
    it and how to start one, and once more when one comes back."""
    from frostline.embedded.jobs import wait_job
    from frostline.worker import ProcrastinateQueue

    queue = ProcrastinateQueue(store)
    deadline = time.monotonic() + wait_s
    warned = False
    try:
        while True:
            state = wait_job(store, run_id, ticket, min(_SLICE_S, max(0.0, deadline
                                                                      - time.monotonic())))
            if (state is not None and state.done) or time.monotonic() >= deadline:
                return state
            now = time.time()
            alive = any(now - w["last_heartbeat"] < _ALIVE_S for w in queue.workers())
            if not alive and not warned:
                click.echo("waiting: no worker is alive on this store's queue (none has sent a "
                           f"heartbeat in the last {_ALIVE_S:g} s), so nothing will run job "
                           f"{ticket} until one starts. Start one on a host with the "
                           f"providers: `frostline worker --store {_redacted(url)}`"
                           + ("" if wait_s != float("inf") else
                              "; or stop waiting (Ctrl-C, or --timeout SECONDS): the job stays "
                              "queued"), err=True)
                warned = True
            elif alive and warned:
                click.echo("waiting: a worker is alive now", err=True)
                warned = False
    finally:
        queue.close()


def _redacted(url: str) -> str:
    import shlex

    from frostline.store.url import redact

    return shlex.quote(redact(url))


def _report(run_id: str, state: Any, as_json: bool) -> int:
    from frostline.runtime.outcome import EXIT_CODES

    outcome = state.outcome or {}
    if as_json:
        emit_json(state.to_dict())
    else:
        click.echo(f"run {run_id} attempt {outcome.get('attempt')}: "
                   f"{outcome.get('status') or state.state} (executed "
                   f"{outcome.get('executed', 0)}, replayed {outcome.get('replayed', 0)})")
        if state.error:
            click.echo(f"error: {state.error.get('message')}", err=True)
    if state.state != "finished" or state.error:
        return EXIT_FAILED
    return EXIT_CODES.get(str(outcome.get("status")), EXIT_FAILED)


def _store(url: str) -> Any:
    from frostline.store import open_store

    return open_store(url)


# ----------------------------------------------------------------------------------- workers
@click.command("workers")
@click.option("--store", "store_url", default=None, metavar="URL",
              help="PostgreSQL store URL the workers share (default: $FROSTLINE_STORE).")
@json_option
def workers(store_url: str | None, as_json: bool) -> None:
    """List the workers of the store's queue: live or stalled, last heartbeat, the jobs they
    run. A stalled worker's jobs go back to the queue; it is forgotten after --forget-after."""
    from frostline.worker import ProcrastinateQueue

    url = _pg_url(store_url, "`frostline workers`", as_json)
    try:
        with _store(url) as store:
            queue = ProcrastinateQueue(store)
            try:
                found, failed = queue.workers(), queue.failed_jobs()
            finally:
                queue.close()
    except FrostlineError as err:
        fail_with(err, as_json)
    if as_json:
        emit_json({"workers": found, "failed": failed})
        return
    table = Table(title=f"{len(found)} worker(s)", title_justify="left")
    for col in ("name", "host", "pid", "state", "heartbeat", "sandbox", "jobs"):
        table.add_column(col)
    for w in found:
        jobs = ", ".join(f"{j['kind']} {j['run_id']}" for j in w["jobs"]) or "-"
        state = ("[red]stalled[/] (its jobs go back to the queue)" if w["state"] == "stalled"
                 else "live")
        table.add_row(str(w["name"] or w["worker_id"]), str(w["host"] or "?"), str(w["pid"]),
                      state, f"{w['silent_s']:.1f}s ago", str(w["sandbox"] or "?"), jobs)
    Console().print(table)
    if failed:
        Console().print(_failed_table(failed))


def _failed_table(failed: list[dict[str, Any]]) -> Any:
    """The jobs that failed for good (the queue does not run them again), newest first."""
    table = Table(title=f"{len(failed)} recent job(s) failed for good", title_justify="left")
    for col in ("failed", "run", "job", "worker", "tries", "error"):
        table.add_column(col)
    for f in failed:
        at = f["failed_at"]
        when = "?" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))
        error = f["error"] or {}
        table.add_row(when, str(f["run_id"]), f"{f['kind']} {f['job']}", str(f["worker"] or "?"),
                      str(f["tries"]), f"[red]{error.get('code')}[/] {error.get('message', '')}")
    return table
