"""`frostline demo`: the brand-video scenario (frostline.demo) in one screen."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from frostline.cli.common import EXIT_USAGE, Command, console, emit_json, fail, fail_with, text
from frostline.contract.status import AttemptStatus
from frostline.errors import FrostlineError


@click.command("demo", cls=Command)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@click.option("--store", "store_url", default=None, help="Store URL (default: ./.frostline/frostline.db).")
@click.option("--out", "out_dir", default="frostline-demo", show_default=True,
              help="Where the PNGs and the run report are written.")
@click.option("--runner", "runner_name", type=click.Choice(["auto", "sandbox", "process"]),
              default="auto", show_default=True,
              help="auto uses the bubblewrap sandbox when it works here and says so when it does not.")
@click.option("--owner", default=None, metavar="NAME",
              help="The principal the demo's run belongs to (default: the local principal), "
                   "e.g. the name of an API token, to see the run in the web UI.")
@click.option("--config", "config_file", default=None, metavar="FILE",
              help="Answer the demo's capabilities with the providers this file configures "
                   "(default: the offline local providers).")
def demo(as_json: bool, store_url: str | None, out_dir: str, runner_name: str,
         owner: str | None, config_file: str | None) -> None:
    """Run the brand-video demo: a failed fanout repaired without paying twice."""
    from frostline.demo.scenario import run_demo

    out = console(stderr=as_json)
    try:
        if as_json:
            result = run_demo(store_url=store_url, out_dir=out_dir, runner_name=runner_name,
                              owner=owner, config=config_file)
        else:
            with out.status("running the demo…") as status:
                result = run_demo(store_url=store_url, out_dir=out_dir, runner_name=runner_name,
                                  owner=owner, progress=lambda msg: status.update(text(msg)),
                                  config=config_file)
    except FrostlineError as exc:
        fail_with(exc, as_json)
    except OSError as exc:  # --out names something that cannot be a folder of files
        fail(f"cannot write the demo's files to {out_dir!r}: {exc.strerror or exc}", EXIT_USAGE,
             as_json)
    data = result.to_dict()
    if as_json:
        emit_json(data, indent=None)
        return
    _render(out, data)


def _render(console: Console, d: dict[str, Any]) -> None:
    first, second = d["attempts"][0], d["attempts"][-1]
    console.print(Panel.fit(
        "[b]Brand video[/b]: a storyboard, then four shots rendered in parallel.\n"
        "Local providers render real PNGs; the authoring and repair model's replies are "
        "[b]scripted[/b] (written by hand, shipped with frostline, no network).\n"
        f"Run [cyan]{text(d['run_id'])}[/cyan] · runner: {text(d['runner'])} · "
        f"store: {text(d['store'])}",
        title="frostline demo"))
    for rw in d.get("authoring", {}).get("rewrites", []):
        if rw.get("ok"):
            console.print(f"0.{rw['n']} Scripted draft {rw['n']} [green]accepted[/green] by the "
                          "checker: it becomes attempt 1.")
        else:
            found = "; ".join(f"{v['rule']} line {v['line']}" for v in rw.get("violations", [])
                              if v.get("severity", "error") == "error")
            console.print(f"0.{rw['n']} Scripted draft {rw['n']} [magenta]refused by the "
                          f"checker[/magenta] ({text(found)}): the counterexample goes back.")
    console.print(f"1. Attempt 1 [red]{text(first['status'])}[/red]: {first.get('executed', 0)} calls committed, "
                  f"then the provider rejected shot 4: "
                  f"{text((first.get('error') or {}).get('message') or '')}")
    for i, rw in enumerate(d["repair"]["rewrites"], start=1):
        if rw.get("counterexamples"):
            console.print(f"2.{i} Repair {i} [magenta]stopped by the gate before spending[/magenta]:")
            for c in rw["counterexamples"]:
                near = (c.get("nearest") or {}).get("site")
                console.print(f"     [b]{text(c['kind'])}[/b] frozen site [cyan]{text(c['site'])}[/cyan] "
                              f"line {c.get('line')}: [dim]{text((c.get('source_line') or '').strip())}[/dim]"
                              + (f" (moved to {text(near)}?)" if near else ""))
        elif rw.get("ok"):
            console.print(f"2.{i} Repair {i} [green]accepted[/green]: it changes only the failed tail.")
        else:
            console.print(f"2.{i} Repair {i} refused: {text(rw.get('reason'))}")
    console.print(f"3. Attempt 2 [green]{text(second['status'])}[/green]: {d['replayed']} identities replayed "
                  f"(the bytes of the {d['byte_identical_shots']} replayed shots identical to attempt 1's: "
                  f"{'yes' if d['byte_identical'] else 'NO'}), {d['executed']} executed.")
    for policy, r in d.get("relocation", {}).items():
        console.print(f"   relocation [b]{policy}[/b]: the moved repair is "
                      f"[{'green' if r['status'] == AttemptStatus.SUCCEEDED else 'magenta'}]"
                      f"{text(r['status'])}[/] ({r['rebound']} moved call(s) replayed free, "
                      f"{r['executed']} executed, {r['provider_calls']} provider call(s))")
    table = Table(title="Revision contract vs naive full rerun", title_justify="left")
    table.add_column("path")
    table.add_column("provider calls", justify="right")
    table.add_column("images produced", justify="right")
    table.add_column("spend (USD)", justify="right")
    table.add_row("revision contract", str(d["contract_calls"]), str(d["images"]), f"{d['spend_usd']:.3f}")
    table.add_row("naive full rerun", str(d["naive_calls"]), str(d["naive_images"]),
                  f"{d['naive_spend_usd']:.3f}")
    console.print(table)
    console.print(f"PNGs and report.md written to [b]{text(d['out_dir'])}[/b] ({d['elapsed_s']:.1f} s).")
