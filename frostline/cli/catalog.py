"""`frostline catalog [--json|--python]` and `frostline catalog check`: what a configuration yields.

`catalog` lists every capability of the configured catalog with its provider, effect class,
price and schemas (MCP servers are started to list their tools, then stopped); `--python` prints
the catalog as the typed, documented stubs a model reads when it writes or repairs a script
(frostline.repair.signatures). `catalog check`
validates the file and starts each MCP server once, reporting each provider; it exits 2 for a
bad file (naming the file and key) and 1 for a provider that cannot be started.
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from frostline.cli.common import (
    Group,
    config_option,
    console,
    emit_json,
    json_option,
    opened_capabilities,
    text,
)

_EFFECT_STYLE = {"read_only": "green", "idempotent": "cyan", "side_effecting": "yellow"}


@click.group("catalog", cls=Group, invoke_without_command=True)
@config_option
@json_option
@click.option("--python", "as_python", is_flag=True,
              help="Print the catalog as typed Python signatures with docstrings (payload, "
                   "price, effect, approval): what a model reads when it writes a script.")
@click.pass_context
def catalog(ctx: click.Context, config_file: str | None, as_json: bool, as_python: bool) -> None:
    """List the capabilities the configuration yields: name, provider, effect, price, schema."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"config_file": config_file, "as_json": as_json}
        return
    if as_python and as_json:
        raise click.UsageError("--python and --json are two renderings; pick one")
    with opened_capabilities(config_file, as_json) as registry:
        if as_python:
            from frostline.repair.signatures import render_signatures

            click.echo(render_signatures(registry.catalog), nl=False)
            return
        rows = registry.describe()
        data: dict[str, Any] = {"config": _source(registry),
                                "digest": registry.catalog.digest(), "capabilities": rows}
    if as_json:
        emit_json(data)
        return
    table = Table(title=text(f"catalog · {data['config'] or 'built-in (no configuration file)'}"),
                  title_justify="left")
    for col in ("capability", "provider", "effect", "price"):
        table.add_column(col, no_wrap=True)
    table.add_column("payload", overflow="fold")
    for row in rows:
        effect = row["effect"]
        table.add_row(text(row["name"]), text(f"{row['provider']} ({row['kind']})"),
                      f"[{_EFFECT_STYLE.get(effect, '')}]{text(effect)}[/]",
                      f"${row['price_usd']:.4f}", text(_payload(row["input_schema"])))
    console().print(table)


@catalog.command("check")
@config_option
@json_option
@click.pass_obj
def check(obj: dict[str, Any] | None, config_file: str | None, as_json: bool) -> None:
    """Validate the configuration file and start each MCP server once."""
    config_file = config_file or (obj or {}).get("config_file")
    as_json = as_json or bool((obj or {}).get("as_json"))
    with opened_capabilities(config_file, as_json) as registry:
        providers = []
        for name, kind in sorted(registry.kinds.items()):
            served = sorted(c for c, p in registry.routes.items() if p == name)
            if served or kind != "local":
                providers.append({"name": name, "kind": kind, "capabilities": served})
        data: dict[str, Any] = {"ok": True, "config": _source(registry), "providers": providers,
                "capabilities": len(registry.catalog), "digest": registry.catalog.digest()}
    if as_json:
        emit_json(data)
        return
    out = console()
    out.print(f"[green]ok[/] {text(data['config'] or 'no configuration file: built-in catalog')}"
              f" · {data['capabilities']} capabilities")
    for p in providers:
        out.print(f"  {text(p['name'])} ({text(p['kind'])}): {len(p['capabilities'])} "
                  "capabilities")


def _source(registry: Any) -> str | None:
    source = registry.config.source
    return None if source is None else str(source)


def _payload(schema: dict[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts = [f"{k}{'' if k in required else '?'}: "
             f"{v.get('type', 'any') if isinstance(v, dict) else 'any'}"
             for k, v in props.items()]
    return ", ".join(parts) or "{...}"
