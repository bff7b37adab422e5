"""The runtime on the command line: `frostline run`, `frostline show`, `frostline reconcile`.

Thin click commands over `frostline.runtime.execute` and the store. Every command takes
`--store URL` (flag > $FROSTLINE_STORE > ./.frostline/frostline.db) and `--json`.

Exit codes of `run`: 0 succeeded, 1 failed, 2 usage, 3 gate stopped, 4 divergence,
5 unresolved attempt, 6 rejected by the checker. `show` and `reconcile`: 0 ok, 1 store or
reconcile failure, 2 usage (bad identity, unknown run, unreadable file).

The runner: `--runner sandbox` (default; bubblewrap) or `--runner process` (a plain child
process, reduced isolation, chosen explicitly); $FROSTLINE_RUNNER sets the default.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from frostline.capabilities.catalog import Catalog
from frostline.capabilities.envelope import Envelope
from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    config_option,
    emit_json,
    fail,
    json_arg_text,
    json_option,
    make_runner,
    opened_capabilities,
    opened_store,
    store_option,
)
from frostline.contract.identity import Identity
from frostline.errors import DefinitionError, FrostlineError, RunNotFound
from frostline.runtime.describe import describe_run
from frostline.runtime.execute import AttemptOutcome, execute
from frostline.runtime.runners import Runner

_OUTCOME_STYLE = {"replayed": "cyan", "executed": "green", "failed": "red", "diverged": "bold red",
                  "denied": "red", "invalid": "yellow", "unresolved": "bold red",
                  "orphan": "magenta", "stopped": "dim", "store_unavailable": "bold red"}


def _read_json_arg(value: str, what: str, as_json: bool) -> Any:
    """`value` is JSON text, or @FILE naming a JSON file."""
    try:
        text = json_arg_text(value)
    except OSError as exc:
        fail(f"cannot read {what} file {value[1:]!r}: {exc.strerror}", EXIT_USAGE, as_json)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{what} is not valid JSON ({exc}); pass JSON text or @FILE", EXIT_USAGE, as_json)


def _runner(kind: str, timeout_s: float, as_json: bool) -> Runner:
    try:
        return make_runner(kind, timeout_s)
    except DefinitionError as err:
        fail(err.message, EXIT_USAGE, as_json)


# ----------------------------------------------------------------------------------------- run
@click.command("run")
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run_id", required=True, help="Run id; reuse it to repair a failed run.")
@click.option("--args", "args_text", default=None, metavar="JSON|@FILE",
              help="Arguments passed to orchestrate(ctx, args).")
@click.option("--envelope", "envelope_file", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Envelope JSON file (only used when the run is created).")
@click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where the script runs; 'process' reduces isolation.")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True,
              help="Wall-clock limit of the script in seconds.")
@click.option("--fail-open", is_flag=True,
              help="Dispatch even when the attempt record cannot be written (unsafe).")
@click.option("--unsafe-skip-checker", "skip_checker", is_flag=True,
              help="Run WITHOUT the static checker, inside the sandbox (only to demonstrate "
                   "defence in depth; never in production).")
@store_option
@config_option
@json_option
def run_command(script: Path, run_id: str, args_text: str | None, envelope_file: Path | None,
                runner_kind: str, timeout_s: float, fail_open: bool, skip_checker: bool,
                store_url: str | None, config_file: str | None, as_json: bool) -> None:
    """Run SCRIPT as one attempt of the run RUN_ID (replaying what the run already committed)."""

    if skip_checker:
        if runner_kind != "sandbox":
            fail("--unsafe-skip-checker only runs inside the sandbox (--runner sandbox): "
                 "without the checker, the sandbox is the only line of defence", EXIT_USAGE,
                 as_json)
        click.echo("WARNING: --unsafe-skip-checker: the static checker (R00-R12) is SKIPPED. "
                   "The script runs unvetted; only the sandbox, the broker and the gate stand "
                   "between it and the host. Use this to test defence in depth, never in "
                   "production.", err=True)

    try:
        source = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read script {str(script)!r}: {exc}", EXIT_USAGE, as_json)
    args = _read_json_arg(args_text, "--args", as_json) if args_text is not None else None
    runner = _runner(runner_kind, timeout_s, as_json)
    with opened_capabilities(config_file, as_json) as registry, \
            opened_store(store_url, as_json) as store:
        envelope = _envelope(envelope_file, registry.catalog, as_json)
        try:
            outcome = execute(store, run_id, source, args=args, envelope=envelope,
                              providers=registry, runner=runner, catalog=registry.catalog,
                              fail_open=True if fail_open else None,
                              skip_checker=skip_checker)
        except FrostlineError as err:
            fail(err.message, EXIT_USAGE if isinstance(err, DefinitionError) else EXIT_FAILED,
                 as_json, err)
    if as_json:
        emit_json(outcome.to_dict())
    else:
        _print_outcome(outcome)
    sys.exit(outcome.exit_code)


def _envelope(envelope_file: Path | None, catalog: Catalog, as_json: bool) -> Envelope | None:
    """The --envelope file, its grants checked against the configured catalog."""
    if envelope_file is None:
        return None
    try:
        return Envelope.from_json(envelope_file.read_text(encoding="utf-8"), catalog)
    except OSError as exc:
        fail(f"cannot read envelope {str(envelope_file)!r}: {exc.strerror}", EXIT_USAGE, as_json)
    except FrostlineError as err:
        fail(f"envelope {str(envelope_file)!r}: {err.message}", EXIT_USAGE, as_json, err)


def _print_outcome(o: AttemptOutcome) -> None:
    console = Console()
    table = Table(title=f"run {o.run_id} · attempt {o.attempt}", title_justify="left")
    for col in ("identity", "capability", "outcome", "digest", "note"):
        table.add_column(col)
    for row in o.calls:
        outcome = str(row.get("outcome", "?"))
        note = ""
        if row.get("semantic_repeat"):
            note = f"semantic repeat ({row['semantic_repeat']})"
        if row.get("error"):
            note = str(row["error"].get("message", ""))[:80]
        table.add_row(row["identity"], row["capability"],
                      f"[{_OUTCOME_STYLE.get(outcome, '')}]{outcome}[/]",
                      str(row.get("digest", ""))[:12], note)
    for ident in o.orphans:
        table.add_row(ident, "", "[magenta]orphan[/]", "", "committed, not invoked")
    if o.calls or o.orphans:
        console.print(table)
    style = "green" if o.status == "succeeded" else "bold red"
    console.print(f"status [{style}]{o.status}[/] · executed {o.executed} · replayed "
                  f"{o.replayed} · provider calls {o.provider_calls} · spend "
                  f"${o.spend_usd:.4f} · orphans {len(o.orphans)} · semantic repeats "
                  f"{len(o.semantic_repeats)} · divergences {len(o.divergences)}",
                  highlight=False)
    if o.gate and not o.gate.get("accepted", True):
        for c in o.gate.get("counterexamples", []):
            console.print(f"  gate: [red]{c.get('kind')}[/] {c.get('site')} "
                          f"(line {c.get('line')}: {c.get('source_line', '').strip()})",
                          highlight=False)
    if o.error:
        console.print(f"[bold red]error:[/] {o.error.get('message', o.error)}", highlight=False)
    elif o.status == "succeeded":
        console.print("result: " + json.dumps(o.result, default=str)[:2000], highlight=False)


# ---------------------------------------------------------------------------------------- show
@click.command("show")
@click.argument("run_id")
@store_option
@json_option
def show_command(run_id: str, store_url: str | None, as_json: bool) -> None:
    """Show the attempts of RUN_ID and, per identity, what happened in each attempt."""
    with opened_store(store_url, as_json) as store:
        try:
            data = describe_run(store, run_id)
        except RunNotFound as err:
            fail(err.message, EXIT_USAGE, as_json, err)
        except FrostlineError as err:
            fail(err.message, EXIT_FAILED, as_json, err)
    if as_json:
        emit_json(data)
        return
    console = Console()
    run = data["run"]
    console.print(f"run [bold]{run['run_id']}[/] · status {run['status']} · "
                  f"{len(data['attempts'])} attempt(s) · {data['committed']} committed",
                  highlight=False)
    attempts = Table(title="attempts", title_justify="left")
    for col in ("#", "status", "executed", "replayed", "provider calls", "spend", "orphans"):
        attempts.add_column(col)
    for a in data["attempts"]:
        attempts.add_row(str(a["number"]), a["status"], str(a["executed"]), str(a["replayed"]),
                         str(a["provider_calls"]), f"${a['spend_usd']:.4f}",
                         str(len(a["orphans"])))
    console.print(attempts)
    if data["identities"]:
        grid = Table(title="identities", title_justify="left")
        grid.add_column("identity")
        numbers = [a["number"] for a in data["attempts"]]
        for n in numbers:
            grid.add_column(f"#{n}")
        for ident, per in data["identities"].items():
            cells = []
            for n in numbers:
                outcome = per.get(str(n), "")
                cells.append(f"[{_OUTCOME_STYLE.get(outcome, '')}]{outcome}[/]" if outcome else "")
            grid.add_row(ident, *cells)
        console.print(grid)
    for change in data["catalog_changes"]:
        for c in change["changes"]:
            console.print(f"[yellow]catalog changed[/] before attempt {change['attempt']}: "
                          f"{c['capability']} ({', '.join(c['fields'])}) has committed calls "
                          f"made under attempt {change['since_attempt']}'s terms",
                          highlight=False)
    for c in data["unresolved"]:
        console.print(f"[bold red]unresolved[/] {c['identity']} ({c['capability']}, dispatched "
                      f"in attempt {c['attempt']}): reconcile with --result @FILE or --abandon",
                      highlight=False)


# ----------------------------------------------------------------------------------- reconcile
@click.command("reconcile")
@click.argument("run_id")
@click.argument("identity")
@click.option("--abandon", is_flag=True,
              help="Give up on the pending call: it may execute once more (audited).")
@click.option("--result", "result_arg", default=None, metavar="@FILE|JSON",
              help="Write back the result the provider is known to have produced.")
@store_option
@json_option
def reconcile_command(run_id: str, identity: str, abandon: bool, result_arg: str | None,
                      store_url: str | None, as_json: bool) -> None:
    """Resolve an unresolved call of RUN_ID at IDENTITY (SITE@PATH:OCCURRENCE)."""
    if abandon == (result_arg is not None):
        fail("pass exactly one of --abandon or --result @FILE", EXIT_USAGE, as_json)
    try:
        ident = Identity.parse(identity)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE, as_json)
    result = _read_json_arg(result_arg, "--result", as_json) if result_arg is not None else None
    with opened_store(store_url, as_json) as store:
        try:
            if store.get_run(run_id) is None:
                raise RunNotFound(f"no run {run_id!r} in the store {store.url}", run_id=run_id)
            with store.run_lock(run_id):  # never while an attempt of the run executes
                call = store.reconcile_call(run_id, ident, abandon=abandon, result=result)
        except RunNotFound as err:
            fail(err.message, EXIT_USAGE, as_json, err)
        except FrostlineError as err:
            fail(err.message, EXIT_FAILED, as_json, err)
    data = {"run_id": run_id, "identity": str(ident), "status": call.status.value,
            "capability": call.capability, "call_id": call.call_id}
    if as_json:
        emit_json(data)
    elif abandon:
        click.echo(f"abandoned {ident} ({call.capability}); the next attempt may execute it "
                   "once more")
    else:
        click.echo(f"reconciled {ident} ({call.capability}); the next attempt replays the "
                   "written-back result")
