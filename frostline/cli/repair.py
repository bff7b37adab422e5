"""`frostline repair`: ask a model for a gate-admissible fix of a failed run.

The command checks the run's certificate first (a prefix that no longer matches its
certificate is not repaired: fail closed), builds the repair task from the store, drives the
bounded loop with the model named by `--model`, prints the per-rewrite feedback and the accepted
candidate, and with `--execute` runs that candidate as the run's next attempt. Nothing is
written to the prefix unless `--execute` runs an accepted candidate.

Exit codes (the table of `frostline.cli.common`): 0 a candidate was accepted (with --execute:
the attempt's own exit code), 1 the model or the certificate failed, 2 bad input or an unknown
store or run, 3 no candidate was accepted within --max-rewrites, 7 the store cannot be reached,
8 (--execute) the sandbox cannot be established.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.syntax import Syntax
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    Command,
    config_option,
    console,
    emit_json,
    fail_with,
    guarded,
    json_option,
    make_runner,
    opened_capabilities,
    opened_run,
    read_json_arg,
    relocation_option,
    store_option,
    text,
)
from frostline.errors import PrefixConflict
from frostline.repair.loop import RepairResult, repair, task_from_store
from frostline.runtime import certificates as certificate


@click.command("repair", cls=Command)
@click.argument("run_id")
@click.option("--model", "spec", required=True, metavar="SPEC",
              help="NAME of a configured [models.NAME] endpoint, openai:MODEL (the endpoint of "
                   "FROSTLINE_MODEL_BASE_URL) "
                   "or replay:FILE (stored replies, read from the working directory or "
                   "$FROSTLINE_REPLAY_DIRS; recorded:FILE is the older spelling).")
@click.option("--max-rewrites", default=3, show_default=True, type=click.IntRange(1, 20),
              help="At most this many model calls.")
@click.option("--timeout", "timeout_s", default=None, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per model request (openai: models only).")
@click.option("--max-retries", default=None, type=click.IntRange(0, 10),
              help="Retries per model request (openai: models only).")
@click.option("--out", "out_path", default=None, type=click.Path(dir_okay=False),
              help="Write the accepted candidate to this file.")
@click.option("--execute", is_flag=True,
              help="Run the accepted candidate as the run's next attempt.")
@click.option("--args", "args_json", default=None, metavar="JSON|@FILE",
              help="Arguments for --execute (JSON, or @FILE); default: the args of the run's latest attempt.")
@click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where --execute runs the script; 'process' reduces isolation.")
@click.option("--script-timeout", default=600.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Wall-clock limit of the executed script in seconds.")
@relocation_option
@store_option
@config_option
@json_option
def repair_command(run_id: str, spec: str, max_rewrites: int, timeout_s: float | None,
                   max_retries: int | None, out_path: str | None, execute: bool,
                   args_json: str | None, runner_kind: str, script_timeout: float,
                   relocation: str | None, store_url: str | None, config_file: str | None,
                   as_json: bool) -> None:
    """Ask a model to repair the last failed attempt of RUN_ID within the revision contract."""
    from frostline.repair.endpoints import model_client
    from frostline.repair.replay import ReplayPolicy

    options: dict[str, Any] = {}
    if timeout_s is not None:
        options["timeout"] = timeout_s
    if max_retries is not None:
        options["max_retries"] = max_retries
    args = (read_json_arg(args_json, "--args", as_json, want_object=True)
            if args_json is not None else None)
    runner = make_runner(runner_kind, script_timeout, as_json) if execute else None
    with opened_capabilities(config_file, as_json) as registry, \
            opened_run(store_url, run_id, as_json) as store:
        report = guarded(as_json, lambda: certificate.verify(store, run_id))
        tampered = [d for d in report["differences"] if d["kind"] != "extra"]
        if tampered:
            fail_with(PrefixConflict(
                f"the prefix of run {run_id!r} no longer matches its certificate "
                f"({len(tampered)} difference(s), e.g. {tampered[0]['kind']} "
                f"{tampered[0]['identity']}); inspect it with `frostline cert {run_id} --verify` "
                "before repairing", run_id=run_id, differences=tampered), as_json,
                EXIT_FAILED)
        if runner is None and _rebinds(store, run_id, relocation):  # for the dry replay
            runner = make_runner(runner_kind, script_timeout, as_json)
        task = guarded(as_json, lambda: task_from_store(
            store, run_id, catalog=registry.catalog, max_rewrites=max_rewrites,
            relocation=relocation, runner=runner))
        replay = ReplayPolicy.for_cli(store_files=store.local_files())
        client = guarded(as_json, lambda: model_client(spec, registry.config, replay=replay,
                                                       **options))
        result: RepairResult = guarded(as_json, lambda: repair(client, task))
        store.append_event(run_id, "repair", {
            "model": spec, "accepted": result.accepted is not None,
            "rewrites": [{"n": r.n, "ok": r.ok, "reason": r.reason} for r in result.rewrites],
            "usage": result.usage_total})
        if result.accepted is not None and out_path is not None:
            Path(out_path).write_text(result.accepted, encoding="utf-8")
        outcome = None
        if execute and result.accepted is not None:
            outcome = guarded(as_json, lambda: _execute(store, run_id, result.accepted, args,
                                                        runner, registry, relocation))
    if as_json:
        data = {"run_id": run_id, **result.to_dict()}
        if outcome is not None:
            data["execution"] = outcome.to_dict()
        emit_json(data)
    else:
        _print(result, outcome)
    if result.accepted is None:
        sys.exit(EXIT_STOPPED)
    sys.exit(outcome.exit_code if outcome is not None else EXIT_OK)


def _rebinds(store: Any, run_id: str, relocation: str | None) -> bool:
    """Whether the repair's candidates get the trace check (--relocation, else the run's)."""
    if relocation is not None:
        return relocation == "rebind"
    from frostline.capabilities.envelope import Envelope, Relocation

    run = store.get_run(run_id)
    return run is not None and Envelope.from_dict(run.envelope).relocation is Relocation.REBIND


def _execute(store: Any, run_id: str, source: str | None, args: Any, runner: Any,
             registry: Any, relocation: str | None) -> Any:
    from frostline.runtime.execute import execute

    assert source is not None
    return execute(store, run_id, source, args=args, providers=registry, runner=runner,
                   catalog=registry.catalog, relocation=relocation)


def _print(result: RepairResult, outcome: Any) -> None:
    out = console()
    table = Table(title="repair rewrites")
    for col in ("#", "verdict", "reason", "tokens"):
        table.add_column(col)
    for r in result.rewrites:
        table.add_row(str(r.n), "[green]accepted[/]" if r.ok else "[red]refused[/]",
                      text(r.reason), str(r.usage.get("total_tokens", "-")))
    out.print(table)
    for r in result.rewrites:
        for ce in r.counterexamples:
            out.print(f"  rewrite {r.n}: {text(ce.get('message'))}", highlight=False)
    if result.accepted is None:
        out.print(f"[red]no candidate was accepted[/] in {len(result.rewrites)} rewrite(s)")
        return
    out.print(Syntax(result.accepted, "python", line_numbers=True))
    if outcome is not None:
        out.print(f"executed as attempt {outcome.attempt}: [bold]{text(outcome.status)}[/] "
                  f"(replayed {outcome.replayed}, executed {outcome.executed})")


__all__ = ["repair_command"]
