"""The revision contract on the command line: `frostline gate`, `frostline cert`,
`frostline orphans`.

Thin click commands over frostline.contract; every one takes `--store URL` (flag >
$FROSTLINE_STORE > the default SQLite file) and `--json` for machines.

Exit codes (the table of `frostline.cli.common`): 0 success (gate accepted, certificate
consistent), 1 verification found differences, 2 usage error, unknown store or run, 3 the gate
stopped the candidate, 7 the store cannot be reached. They only read: no store is created.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    Command,
    console,
    emit_json,
    fail_with,
    guarded,
    json_option,
    make_runner,
    opened_run,
    read_text_file,
    relocation_option,
    store_option,
    text,
)
from frostline.contract.gate import frozen_map
from frostline.contract.rebind import TraceVerdict, rebinding_rows
from frostline.contract.verdict import GateVerdict
from frostline.errors import ScriptRejected
from frostline.runtime import certificates as certificate
from frostline.runtime.gate_check import gate_source

# ---------------------------------------------------------------------------------------- gate


@click.command("gate", cls=Command)
@click.argument("run_id")
@click.argument("script", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@relocation_option
@click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where the dry replay of --relocation rebind runs.")
@store_option
@json_option
def gate_command(run_id: str, script: Path, relocation: str | None, runner_kind: str,
                 store_url: str | None, as_json: bool) -> None:
    """Gate SCRIPT (a file, or - for stdin) against the frozen sites of RUN_ID.

    Under relocation `rebind` (the run's envelope, or --relocation), a candidate stopped only
    because committed calls moved gets a dry replay in the sandbox (no provider reachable);
    its verdict is the gate's. Exit 0 when accepted, 3 when stopped, 2 on bad input or an
    unknown run.
    """
    from frostline.runtime.dry_replay import gate_with_trace

    source = read_text_file(script, "script", as_json)
    with opened_run(store_url, run_id, as_json) as store:
        frozen = guarded(as_json, lambda: frozen_map(store.list_slots(run_id),
                                                     store.list_attempts(run_id)))
        try:
            result = gate_source(frozen, source)
        except ScriptRejected as err:  # a candidate that does not parse is bad input here
            fail_with(err, as_json, EXIT_USAGE)
        verdict = GateVerdict(result)
        if not result.accepted:
            runner = make_runner(runner_kind, 600.0, as_json)
            verdict = guarded(as_json, lambda: gate_with_trace(
                store, run_id, source, runner=runner, relocation=relocation))
    if as_json:
        emit_json(verdict.to_dict())
    else:
        _print_gate(verdict, len(frozen))
    sys.exit(EXIT_OK if verdict.accepted else EXIT_STOPPED)


def _print_gate(verdict: GateVerdict, frozen_count: int) -> None:
    out = console()
    result, trace = verdict.static, verdict.trace
    if result.accepted:
        out.print(f"[green]accepted[/]: all {frozen_count} frozen site(s) are intact")
        return
    if isinstance(trace, TraceVerdict) and trace.admitted:
        out.print(f"[green]accepted by the dry replay[/] (relocation rebind): "
                  f"{trace.rebound} moved committed call(s) replay their slots, "
                  f"{trace.replayed} replay at their own identity; new work starts "
                  f"at {text(str(trace.frontier))}", highlight=False)
        for row in rebinding_rows(trace.rebinding):
            out.print(f"  {text(row['identity'])} replays {text(row['bound_to'])}",
                      highlight=False)
        return
    table = Table(title="gate stopped the candidate (nothing was executed)")
    for col in ("kind", "frozen site", "capability", "line", "committed source", "nearest"):
        table.add_column(col)
    for ce in result.counterexamples:
        near = ce.nearest
        table.add_row(text(ce.kind), text(ce.site), text(ce.capability), str(ce.line),
                      text(ce.source_line.strip()),
                      text(f"{near.site} ({near.match}, line {near.line})") if near else "-")
    out.print(table)
    for ce in result.counterexamples:
        out.print(f"- {text(ce.message)}", highlight=False)
    if trace is not None:
        out.print("the dry replay (relocation rebind) did not admit it:"
                  + (f" {text(trace.note)}" if trace.note else ""),
                  highlight=False)
        for c in trace.counterexamples:
            out.print(f"- [red]{text(c.kind)}[/] {text(c.message)}", highlight=False)


# ---------------------------------------------------------------------------------------- cert


@click.command("cert", cls=Command)
@click.argument("run_id")
@click.option("--verify", is_flag=True,
              help="Recompute from the slots and list differences against the latest certificate.")
@click.option("--deep", is_flag=True,
              help="Also recompute every digest from the stored results (a periodic audit); "
                   "implies --verify.")
@store_option
@json_option
def cert_command(run_id: str, verify: bool, deep: bool, store_url: str | None,
                 as_json: bool) -> None:
    """Show the prefix certificate of RUN_ID and its differences against the store.

    Without --verify: the latest persisted certificate (or the one computed from the slots when
    none was persisted), plus the differences; exit 0. With --verify: the values recomputed from
    the store, plus the differences; exit 1 when there are any. The check is fast by default:
    the chain over the digests the store recorded when it committed each slot, and every entry
    against them. --deep also hashes every stored result again, which is what catches a result
    edited behind the store's back.
    """
    verify = verify or deep
    with opened_run(store_url, run_id, as_json) as store:
        report = guarded(as_json, lambda: certificate.verify(store, run_id, deep=deep))
    persisted = report["certificate"]
    shown = report if verify or persisted is None else persisted
    summary = {"run_id": run_id, "persisted": persisted is not None,
               "attempt": persisted["attempt"] if persisted is not None else None,
               "frozen_sites": shown["frozen_sites"], "chain_digest": shown["chain_digest"],
               "entries": shown["entries"], "consistent": report["consistent"],
               "deep": deep, "differences": report["differences"]}
    if verify:
        summary["certificate"] = persisted
    if as_json:
        emit_json(summary)
    else:
        _print_cert(run_id, summary, verify)
    sys.exit(EXIT_FAILED if verify and not report["consistent"] else EXIT_OK)


def _print_cert(run_id: str, summary: dict[str, Any], verify: bool) -> None:
    out = console()
    if verify:
        where = ("recomputed from the store, every result hashed again" if summary["deep"]
                 else "checked against the digests the store recorded at commit time")
    elif summary["persisted"]:
        where = f"persisted after attempt {summary['attempt']}"
    else:
        where = "computed from the slots; no certificate persisted yet"
    out.print(f"certificate of run [bold]{text(run_id)}[/] ({where})", highlight=False)
    _print_frozen(out, summary["frozen_sites"])
    out.print(text(f"chain digest: {summary['chain_digest']}\nentries: {summary['entries']}"),
              highlight=False)
    if summary["consistent"]:
        out.print(f"[green]consistent[/]: the store matches the certificate of run "
                  f"{text(run_id)}")
        return
    table = Table(title="differences between the store and the latest certificate")
    for col in ("kind", "identity", "detail"):
        table.add_column(col)
    for d in summary["differences"]:
        detail = (", ".join(f"{k}: {v['certified']} → {v['store']}" for k, v in d["fields"].items())
                  if d["kind"] == "changed" else f"{d.get('capability')} (attempt {d.get('attempt')})")
        table.add_row(text(d["kind"]), text(d["identity"]), text(detail))
    out.print(table)


def _print_frozen(out: Console, frozen: dict[str, str]) -> None:
    table = Table(title="frozen sites")
    table.add_column("site")
    table.add_column("capability")
    for site, cap in frozen.items():
        table.add_row(text(site), text(cap))
    out.print(table)


# ------------------------------------------------------------------------------------- orphans


@click.command("orphans", cls=Command)
@click.argument("run_id")
@store_option
@json_option
def orphans_command(run_id: str, store_url: str | None, as_json: bool) -> None:
    """List, per attempt of RUN_ID, the committed identities that the attempt did not invoke."""
    with opened_run(store_url, run_id, as_json) as store:
        attempts = guarded(as_json, lambda: store.list_attempts(run_id))
    rows: list[dict[str, Any]] = [
        {"attempt": a.number, "status": a.status, "orphans": list(a.orphans)} for a in attempts]
    if as_json:
        emit_json({"run_id": run_id, "attempts": rows})
        return
    table = Table(title=text(f"orphans of run {run_id}"))
    for col in ("attempt", "status", "orphaned identities"):
        table.add_column(col)
    for r in rows:
        table.add_row(str(r["attempt"]), text(r["status"]), text("\n".join(r["orphans"]) or "-"))
    console().print(table)
