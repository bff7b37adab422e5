"""``frostline check``: the static checker on the command line, before anything runs.

The catalog R11 checks names against is the configuration's, chosen as every command chooses
it (`--config` > $FROSTLINE_CONFIG > ./frostline.toml > the built-in catalog; see
`frostline.config`), so a capability `run` can call is one `check` accepts.

Exit codes (the table of `frostline.cli.common`): 0 the script is valid, 6 the checker
rejects it, 2 usage error (missing or unreadable file, malformed envelope or configuration). ``--json`` prints
exactly one JSON object: ``Report.to_dict()``, or ``{"error": {...}}`` for a usage error.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from frostline.capabilities.envelope import Envelope
from frostline.cli.common import (
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    Command,
    config_option,
    configured_catalog,
    console,
    emit_json,
    fail,
)
from frostline.errors import EnvelopeError
from frostline.script.checker import check_bytes
from frostline.script.report import Report
from frostline.script.source import source_lines


@click.command("check", cls=Command)
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--envelope", "envelope_path", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON envelope (grants, budget, max_fanout) to check the script against.")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def check(script: Path, envelope_path: Path | None, config_file: str | None,
          as_json: bool) -> None:
    """Check SCRIPT statically (rules R00–R12) without running it."""
    try:
        data = script.read_bytes()
    except FileNotFoundError:
        fail(f"script {str(script)!r} does not exist", EXIT_USAGE, as_json)
    except OSError as exc:
        fail(f"cannot read script {str(script)!r}: {exc.strerror or exc}", EXIT_USAGE, as_json)
    catalog = configured_catalog(config_file, as_json)
    envelope: Envelope | None = None
    if envelope_path is not None:
        try:
            envelope = Envelope.from_json(envelope_path.read_text(encoding="utf-8"), catalog)
        except FileNotFoundError:
            fail(f"envelope {str(envelope_path)!r} does not exist", EXIT_USAGE, as_json)
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"cannot read envelope {str(envelope_path)!r}: {exc}", EXIT_USAGE, as_json)
        except EnvelopeError as exc:
            fail(f"malformed envelope {str(envelope_path)!r}: {exc.message}", EXIT_USAGE,
                 as_json, exc)
    report = check_bytes(data, envelope, catalog=catalog)
    if as_json:
        emit_json(report.to_dict(), indent=None, ensure_ascii=False)
    else:
        _print_human(report, script, data)
    raise SystemExit(EXIT_OK if report.valid else EXIT_REJECTED)


def _print_human(report: Report, script: Path, data: bytes) -> None:
    out = console()
    lines = source_lines(data.decode("utf-8", errors="replace"))
    for v in report.violations:
        color = "red" if v.severity == "error" else "yellow"
        out.print(f"[bold]{escape(str(script))}:{v.line}:{v.col}[/bold] "
                      f"[{color}]{v.rule} {v.severity}[/{color}]: {escape(v.message)}")
        if 1 <= v.line <= len(lines):
            text = lines[v.line - 1].rstrip("\n")
            out.print(f"    {escape(text)}")
            # Keep tabs in the caret's padding so it lines up under the column.
            pad = "".join(ch if ch == "\t" else " " for ch in text[: max(v.col - 1, 0)])
            out.print(f"    {pad}[{color}]^[/{color}]")
        out.print(f"    [dim]hint:[/dim] {escape(v.hint)}")
    facts = report.facts
    table = Table(title="facts", show_header=False, title_justify="left")
    table.add_column("fact")
    table.add_column("value")
    caps = ", ".join(f"{k} ×{n}" for k, n in facts.capabilities.items()) or "none"
    table.add_row("capabilities", escape(caps))
    table.add_row("call expressions", str(facts.call_expressions))
    spend = facts.spend_bound
    bound = ", ".join(f"{k} ≤{n}" for k, n in spend.calls.items()) or "none"
    table.add_row("spend bound", escape(f"{bound}; ${spend.usd:.4f}"
                                        + ("" if spend.bounded else " (unbounded)")))
    for site in facts.sites:
        table.add_row(escape(site.site), escape(f"{site.capability} (line {site.line})"))
    out.print(table)
    errors = sum(1 for v in report.violations if v.severity == "error")
    if report.valid:
        out.print("[green]valid[/green]")
    else:
        out.print(f"[red]invalid[/red]: {errors} error(s)")
