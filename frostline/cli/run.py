"""The runtime on the command line: `frostline run`, `frostline show`, `frostline reconcile`.

Thin click commands over `frostline.runtime.execute` and the store. Every command takes
`--store URL` (flag > $FROSTLINE_STORE > ./.frostline/frostline.db) and `--json`.

Exit codes: the table of `frostline.cli.common` (`run` uses every row but `stuck`). `show`
and `reconcile` only read or resolve an existing run: they never create a store.

The runner: `--runner sandbox` (default; bubblewrap) or `--runner process` (a plain child
process, reduced isolation, chosen explicitly); $FROSTLINE_RUNNER sets the default.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from frostline.capabilities.catalog import Catalog
from frostline.capabilities.envelope import Envelope
from frostline.cli.common import (
    EXIT_USAGE,
    Command,
    config_option,
    console,
    emit_json,
    fail,
    fail_with,
    json_option,
    make_runner,
    opened_capabilities,
    opened_run,
    opened_store,
    read_json_arg,
    read_text_file,
    relocation_option,
    store_option,
    text,
)
from frostline.contract.identity import Identity
from frostline.contract.rebind import TraceVerdict
from frostline.contract.records import LOCAL_PRINCIPAL, run_key
from frostline.contract.status import AttemptStatus
from frostline.embedded.reconcile import NOT_GIVEN, reconcile
from frostline.errors import FrostlineError
from frostline.runtime.describe import describe_run
from frostline.runtime.execute import AttemptOutcome, execute

# an attempt's status line: green when it succeeded, magenta while it waits, else red
_STATUS_STYLE: dict[str, str] = {AttemptStatus.SUCCEEDED: "green", AttemptStatus.WAITING: "magenta"}
_OUTCOME_STYLE = {"waiting": "magenta", "replayed": "cyan", "executed": "green", "failed": "red", "diverged": "bold red",
                  "denied": "red", "invalid": "yellow", "unresolved": "bold red",
                  "orphan": "magenta", "stopped": "dim", "store_unavailable": "bold red"}


def _cell(outcome: str | None, moved_from: str | None) -> str:
    """An identity × attempt cell of `show`: the outcome, and where a moved call came from."""
    if not outcome:
        return ""
    if moved_from:
        return _styled(outcome) + text(f" (moved from {moved_from})")
    return _styled(outcome)


def _styled(outcome: str) -> str:
    style = _OUTCOME_STYLE.get(outcome, "")
    return f"[{style}]{text(outcome)}[/]" if style else text(outcome)


# ----------------------------------------------------------------------------------------- run
@click.command("run", cls=Command)
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run_id", required=True, help="Run id; reuse it to repair a failed run.")
@click.option("--args", "args_text", default=None, metavar="JSON|@FILE",
              help="Arguments passed to orchestrate(ctx, args): a JSON object.")
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
@click.option("--owner", default=None, metavar="NAME",
              help=f"The principal a new run belongs to (default: {LOCAL_PRINCIPAL!r}); its "
                   "runs are then @NAME/RUN in the store, the API and the UI.")
@relocation_option
@store_option
@config_option
@json_option
def run_command(script: Path, run_id: str, args_text: str | None, envelope_file: Path | None,
                runner_kind: str, timeout_s: float, fail_open: bool, skip_checker: bool,
                owner: str | None, relocation: str | None, store_url: str | None,
                config_file: str | None, as_json: bool) -> None:
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
    source = read_text_file(script, "script", as_json)
    args = (read_json_arg(args_text, "--args", as_json, want_object=True)
            if args_text is not None else None)
    runner = make_runner(runner_kind, timeout_s, as_json)
    with opened_capabilities(config_file, as_json) as registry, \
            opened_store(store_url, as_json) as store:
        envelope = _envelope(envelope_file, registry.catalog, as_json)
        try:
            outcome = execute(store, run_key(owner, run_id), source, args=args,
                              envelope=envelope, providers=registry, runner=runner,
                              catalog=registry.catalog, fail_open=True if fail_open else None,
                              skip_checker=skip_checker, owner=owner, relocation=relocation)
        except FrostlineError as err:
            fail_with(err, as_json)
    if as_json:
        emit_json(outcome.to_dict())
    else:
        print_outcome(outcome, source)
    sys.exit(outcome.exit_code)


def _envelope(envelope_file: Path | None, catalog: Catalog, as_json: bool) -> Envelope | None:
    """The --envelope file, its grants checked against the configured catalog."""
    if envelope_file is None:
        return None
    raw = read_text_file(envelope_file, "envelope", as_json)
    try:
        return Envelope.from_json(raw, catalog)
    except FrostlineError as err:
        fail(f"envelope {str(envelope_file)!r}: {err.message}", EXIT_USAGE, as_json, err)


def print_outcome(o: AttemptOutcome, source: str) -> None:
    out = console()
    table = Table(title=text(f"run {o.run_id} · attempt {o.attempt}"), title_justify="left")
    for col in ("identity", "capability", "outcome", "digest", "note"):
        table.add_column(col)
    for row in o.calls:
        note = ""
        if row.get("semantic_repeat"):
            note = f"semantic repeat ({row['semantic_repeat']})"
        if row.get("moved_from"):
            note = f"replayed (moved from {row['moved_from']})"
        if row.get("error"):
            note = str(row["error"].get("message", ""))
        table.add_row(text(row["identity"]), text(row["capability"]),
                      _styled(str(row.get("outcome", "?"))), text(str(row.get("digest", ""))[:12]),
                      text(note))
    for ident in o.orphans:
        table.add_row(text(ident), "", _styled("orphan"), "", "committed, not invoked")
    if o.calls or o.orphans:
        out.print(table)
    style = _STATUS_STYLE.get(o.status, "bold red")
    out.print(f"status [{style}]{text(o.status)}[/] · executed {o.executed} · replayed "
              f"{o.replayed} · provider calls {o.provider_calls} · spend "
              f"${o.spend_usd:.4f} · orphans {len(o.orphans)} · semantic repeats "
              f"{len(o.semantic_repeats)} · divergences {len(o.divergences)}", highlight=False)
    if o.gate is not None and o.gate.accepted_by == "trace" \
            and isinstance(o.gate.trace, TraceVerdict):
        out.print(f"  gate: accepted by the dry replay (relocation rebind): "
                  f"{o.gate.trace.rebound} moved committed call(s) replayed from their slots",
                  highlight=False)
    if o.gate is not None and not o.gate.accepted:
        for c in o.gate.counterexamples:
            out.print(f"  gate: [red]{text(c.kind)}[/] {text(c.site)} "
                      f"(line {c.line}: {text(c.source_line.strip())})",
                      highlight=False)
    if o.status == AttemptStatus.WAITING and o.error:
        # A wait is a state, not an error: what it waits for, and how it goes on.
        out.print(f"[magenta]waiting:[/] {text(o.error.get('message', ''))}", highlight=False)
    elif o.error:
        for line in describe_error(o.error, source):
            out.print(line, highlight=False)
    elif o.status == AttemptStatus.SUCCEEDED:
        out.print("result: " + text(json.dumps(o.result, default=str)[:2000]), highlight=False)


def describe_error(error: dict[str, Any], source: str) -> list[str]:
    """The lines (rich markup, escaped) that tell a user what stopped an attempt: the error's
    type and message, and for a script error each line of the script it went through."""
    kind = str(error.get("type") or error.get("code") or "error")
    message = str(error.get("message", ""))
    lines = [f"[bold red]error:[/] {text(kind)}: {text(message)}"]
    script_lines = source.splitlines()
    for frame in error.get("script_frames") or []:
        number = frame.get("line")
        code = (script_lines[number - 1].strip()
                if isinstance(number, int) and 1 <= number <= len(script_lines) else "")
        lines.append(f"  script line {number}, in {text(frame.get('function', '?'))}"
                     + (f": {text(code)}" if code else ""))
    return lines


# ---------------------------------------------------------------------------------------- show
@click.command("show", cls=Command)
@click.argument("run_id")
@store_option
@json_option
def show_command(run_id: str, store_url: str | None, as_json: bool) -> None:
    """Show the attempts of RUN_ID and, per identity, what happened in each attempt."""
    with opened_run(store_url, run_id, as_json) as store:
        try:
            data = describe_run(store, run_id)
        except FrostlineError as err:
            fail_with(err, as_json)
    if as_json:
        emit_json(data)
        return
    _print_run(data)


def _print_run(data: dict[str, Any]) -> None:
    out = console()
    run = data["run"]
    out.print(f"run [bold]{text(run['run_id'])}[/] · status {text(run['status'])} · "
              f"{len(data['attempts'])} attempt(s) · {data['committed']} committed · "
              f"spent ${data['spend_usd']:.4f}", highlight=False)
    attempts = Table(title="attempts", title_justify="left")
    for col in ("#", "status", "executed", "replayed", "provider calls", "spend", "orphans"):
        attempts.add_column(col)
    for a in data["attempts"]:
        attempts.add_row(str(a["number"]), text(a["status"]), str(a["executed"]),
                         str(a["replayed"]), str(a["provider_calls"]), f"${a['spend_usd']:.4f}",
                         str(len(a["orphans"])))
    out.print(attempts)
    if data["identities"]:
        grid = Table(title="identities", title_justify="left")
        grid.add_column("identity")
        numbers = [a["number"] for a in data["attempts"]]
        for n in numbers:
            grid.add_column(f"#{n}")
        moved = data.get("moved_from", {})
        for ident, per in data["identities"].items():
            grid.add_row(text(ident), *(_cell(per.get(str(n)), moved.get(ident, {}).get(str(n)))
                                        for n in numbers))
        out.print(grid)
    for change in data["catalog_changes"]:
        for c in change["changes"]:
            out.print(f"[yellow]catalog changed[/] before attempt {change['attempt']}: "
                      f"{text(c['capability'])} ({text(', '.join(c['fields']))}) has committed "
                      f"calls made under attempt {change['since_attempt']}'s terms")
    for c in data["unresolved"]:
        out.print(f"[bold red]unresolved[/] {text(c['identity'])} ({text(c['capability'])}, "
                  f"dispatched in attempt {c['attempt']}): reconcile with `frostline reconcile "
                  f"{text(run['run_id'])} {text(c['identity'])} --result @FILE` (the result "
                  "the provider produced) or `--abandon` (it may run once more)",
                  highlight=False)
    for w in data.get("waits", []):
        if w["answer"] is None:
            what = {"approval": "an approval", "event": f"the event {w['name']}",
                    "timer": f"a timer due {w['due_at']}"}.get(w["kind"], w["kind"])
            out.print(f"[magenta]waits[/] at {text(w['identity'])} for {text(what)}: "
                      f"{text(json.dumps(w['payload'])[:200])}", highlight=False)


# ----------------------------------------------------------------------------------- reconcile
@click.command("reconcile", cls=Command)
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
    result = (read_json_arg(result_arg, "--result", as_json) if result_arg is not None
              else NOT_GIVEN)
    with opened_run(store_url, run_id, as_json) as store:
        try:  # the one reconcile: under the run's lock, never while an attempt executes
            data = reconcile(store, run_id, str(ident), abandon=abandon, result=result)
        except FrostlineError as err:
            fail_with(err, as_json)
    call_capability = data["capability"]
    if as_json:
        emit_json(data)
    elif abandon:
        click.echo(f"abandoned {ident} ({call_capability}); the next attempt may execute it "
                   "once more")
    else:
        click.echo(f"reconciled {ident} ({call_capability}); the next attempt replays the "
                   "written-back result")
