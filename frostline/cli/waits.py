"""Runs that wait, from the command line: `frostline approve RUN IDENTITY [--reject]
[--reason …]` answers an approval, `frostline signal RUN NAME --data JSON` sends an event, and
`frostline resume RUN` runs the next attempt, which replays the prefix and goes on from the
wait with its answer.

Exit codes: the table of `frostline.cli.common`: approve and signal exit 0 once the answer is
committed, 2 for an unknown run or wait or a malformed answer, 1 when the wait already has an
answer (the first stands) or the run has finished; resume exits like `run` (10 while the run
still waits).
"""

from __future__ import annotations

import sys

import click

from frostline.cli.common import (
    Command,
    config_option,
    emit_json,
    fail_with,
    guarded,
    json_option,
    make_runner,
    opened_capabilities,
    opened_run,
    read_json_arg,
    store_option,
    text,
)
from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.errors import FrostlineError


@click.command("approve", cls=Command)
@click.argument("run_id")
@click.argument("identity")
@click.option("--reject", is_flag=True, help="Reject instead of approving.")
@click.option("--reason", default=None, help="Why (kept with the answer; the script sees it).")
@store_option
@json_option
def approve_command(run_id: str, identity: str, reject: bool, reason: str | None,
                    store_url: str | None, as_json: bool) -> None:
    """Approve (or --reject) the approval RUN_ID waits for at IDENTITY."""
    from frostline.embedded.answers import approve

    with opened_run(store_url, run_id, as_json) as store:
        answer = guarded(as_json, lambda: approve(store, run_id, identity, by=LOCAL_PRINCIPAL,
                                                  approved=not reject, reason=reason))
    if as_json:
        emit_json(answer)
    else:
        verb = "rejected" if reject else "approved"
        click.echo(f"{verb} {text(identity)} of run {text(run_id)}; resume it with "
                   f"'frostline resume {text(run_id)}'")


@click.command("signal", cls=Command)
@click.argument("run_id")
@click.argument("name")
@click.option("--data", "data_arg", required=True, metavar="JSON|@FILE",
              help="The event's body: JSON data.")
@store_option
@json_option
def signal_command(run_id: str, name: str, data_arg: str, store_url: str | None,
                   as_json: bool) -> None:
    """Send the event NAME to RUN_ID (kept until a wait for NAME takes it)."""
    from frostline.embedded.answers import signal

    data = read_json_arg(data_arg, "--data", as_json)
    with opened_run(store_url, run_id, as_json) as store:
        sent = guarded(as_json, lambda: signal(store, run_id, name, data))
    if as_json:
        emit_json(sent)
    elif sent["delivered_to"] is not None:
        click.echo(f"event {text(name)} delivered to {text(sent['delivered_to'])}; resume the "
                   f"run with 'frostline resume {text(run_id)}'")
    else:
        click.echo(f"event {text(name)} kept for run {text(run_id)}: the next wait for it "
                   "takes it")


@click.command("resume", cls=Command)
@click.argument("run_id")
@click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where the script runs; 'process' reduces isolation.")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True,
              help="Wall-clock limit of the script in seconds.")
@store_option
@config_option
@json_option
def resume_command(run_id: str, runner_kind: str, timeout_s: float, store_url: str | None,
                   config_file: str | None, as_json: bool) -> None:
    """Run the next attempt of the waiting run RUN_ID: it replays what was committed and goes
    on with the answers its waits received."""
    from frostline.cli.run import print_outcome
    from frostline.embedded.resume import resume, resume_source

    runner = make_runner(runner_kind, timeout_s, as_json)
    with opened_capabilities(config_file, as_json) as registry, \
            opened_run(store_url, run_id, as_json) as store:
        try:
            source = resume_source(store, run_id)
            outcome = resume(store, run_id, providers=registry, runner=runner,
                             catalog=registry.catalog)
        except FrostlineError as err:
            fail_with(err, as_json)
    if as_json:
        emit_json(outcome.to_dict())
    else:
        print_outcome(outcome, source)
    sys.exit(outcome.exit_code)
