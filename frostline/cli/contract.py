"""The revision contract on the command line: `frostline gate`, `frostline cert`,
`frostline orphans`.

Thin click commands over frostline.contract; every one takes `--store URL` (flag >
$FROSTLINE_STORE > the default SQLite file) and `--json` for machines.

Exit codes: 0 success (gate accepted, certificate consistent), 1 verification found differences
or the store failed, 2 usage error or unknown run, 3 the gate stopped the candidate.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    emit_json,
    guarded,
    json_option,
    opened_run,
    store_option,
)
from frostline.contract.gate import GateResult, frozen_map
from frostline.runtime import certificates as certificate
from frostline.runtime.gate_check import gate_source

# ---------------------------------------------------------------------------------------- gate


@click.command("gate")
@click.argument("run_id")
@click.argument("script", type=click.File("r", encoding="utf-8"))
@store_option
@json_option
def gate_command(run_id: str, script: Any, store_url: str | None, as_json: bool) -> None:
    """Gate SCRIPT (a file, or - for stdin) against the frozen sites of RUN_ID.

    Exit 0 when accepted, 3 when stopped, 2 on bad input or an unknown run.
    """
    source = script.read()
    with opened_run(store_url, run_id, as_json) as store:
        frozen = guarded(as_json, lambda: frozen_map(store.list_slots(run_id),
                                                     store.list_attempts(run_id)))
        result: GateResult = guarded(as_json, lambda: gate_source(frozen, source))
    if as_json:
        emit_json(result.to_dict())
    else:
        _print_gate(result, len(frozen))
    sys.exit(EXIT_OK if result.accepted else EXIT_STOPPED)


def _print_gate(result: GateResult, frozen_count: int) -> None:
    console = Console()
    if result.accepted:
        console.print(f"[green]accepted[/]: all {frozen_count} frozen site(s) are intact")
        return
    table = Table(title="gate stopped the candidate (nothing was executed)")
    for col in ("kind", "frozen site", "capability", "line", "committed source", "nearest"):
        table.add_column(col)
    for ce in result.counterexamples:
        near = ce.nearest
        table.add_row(ce.kind, ce.site, ce.capability, str(ce.line), ce.source_line.strip(),
                      f"{near.site} ({near.match}, line {near.line})" if near else "-")
    console.print(table)
    for ce in result.counterexamples:
        console.print(f"- {ce.message}", highlight=False)


# ---------------------------------------------------------------------------------------- cert


@click.command("cert")
@click.argument("run_id")
@click.option("--verify", is_flag=True,
              help="Recompute from the slots and list differences against the latest certificate.")
@store_option
@json_option
def cert_command(run_id: str, verify: bool, store_url: str | None, as_json: bool) -> None:
    """Show the prefix certificate of RUN_ID and its differences against the store.

    Without --verify: the latest persisted certificate (or the one computed from the slots when
    none was persisted), plus the differences; exit 0. With --verify: the values recomputed from
    the store, plus the differences; exit 1 when there are any.
    """
    with opened_run(store_url, run_id, as_json) as store:
        report = guarded(as_json, lambda: certificate.verify(store, run_id))
    persisted = report["certificate"]
    shown = report if verify or persisted is None else persisted
    summary = {"run_id": run_id, "persisted": persisted is not None,
               "attempt": persisted["attempt"] if persisted is not None else None,
               "frozen_sites": shown["frozen_sites"], "chain_digest": shown["chain_digest"],
               "entries": shown["entries"], "consistent": report["consistent"],
               "differences": report["differences"]}
    if verify:
        summary["certificate"] = persisted
    if as_json:
        emit_json(summary)
    else:
        _print_cert(run_id, summary, verify)
    sys.exit(EXIT_FAILED if verify and not report["consistent"] else EXIT_OK)


def _print_cert(run_id: str, summary: dict[str, Any], verify: bool) -> None:
    console = Console()
    if verify:
        where = "recomputed from the store"
    elif summary["persisted"]:
        where = f"persisted after attempt {summary['attempt']}"
    else:
        where = "computed from the slots; no certificate persisted yet"
    console.print(f"certificate of run [bold]{run_id}[/] ({where})", highlight=False)
    _print_frozen(console, summary["frozen_sites"])
    console.print(f"chain digest: {summary['chain_digest']}\nentries: {summary['entries']}",
                  highlight=False)
    if summary["consistent"]:
        console.print(f"[green]consistent[/]: the store matches the certificate of run {run_id}")
        return
    table = Table(title="differences between the store and the latest certificate")
    for col in ("kind", "identity", "detail"):
        table.add_column(col)
    for d in summary["differences"]:
        detail = (", ".join(f"{k}: {v['certified']} → {v['store']}" for k, v in d["fields"].items())
                  if d["kind"] == "changed" else f"{d.get('capability')} (attempt {d.get('attempt')})")
        table.add_row(d["kind"], d["identity"], detail)
    console.print(table)


def _print_frozen(console: Console, frozen: dict[str, str]) -> None:
    table = Table(title="frozen sites")
    table.add_column("site")
    table.add_column("capability")
    for site, cap in frozen.items():
        table.add_row(site, cap)
    console.print(table)


# ------------------------------------------------------------------------------------- orphans


@click.command("orphans")
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
    console = Console()
    table = Table(title=f"orphans of run {run_id}")
    for col in ("attempt", "status", "orphaned identities"):
        table.add_column(col)
    for r in rows:
        table.add_row(str(r["attempt"]), r["status"], "\n".join(r["orphans"]) or "-")
    console.print(table)
