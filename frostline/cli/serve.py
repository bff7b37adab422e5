"""`frostline serve` and `frostline token create`: the HTTP service (frostline.service) and the
bearer tokens it accepts. FastAPI is imported only when `serve` runs: it is an optional extra."""

from __future__ import annotations

import re

import click

_PRINCIPAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


@click.command("serve")
@click.option("--store", "store_url", default=None, help="Store URL (default: FROSTLINE_STORE or ./.frostline).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--runner", "runner_name", type=click.Choice(["auto", "sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where scripts run; 'process' reduces isolation, 'auto' falls back loudly.")
def serve(store_url: str | None, host: str, port: int, runner_name: str) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) and the web UI at /."""
    try:
        from frostline.service.app import serve as run_server
        from frostline.service.operations import Services
    except ImportError as exc:  # the service extra is optional
        raise click.UsageError(
            f"the HTTP service needs the 'service' extra: pip install 'frostline[service]' ({exc})"
        ) from exc
    from frostline.errors import FrostlineError
    from frostline.store.url import parse, resolve

    if parse(resolve(store_url)).backend == "postgres":
        # Jobs go to the workers' queue: this host runs no script and needs no providers.
        from frostline.worker import ProcrastinateQueue

        run_server(store_url, host, port, lambda: Services.remote(ProcrastinateQueue))
        return
    try:
        services = Services.default(runner_name=runner_name)
    except FrostlineError as exc:  # e.g. the sandbox cannot be established here
        raise click.ClickException(
            f"{exc.message}\n(choose --runner process to serve with reduced isolation)") from exc
    run_server(store_url, host, port, lambda: services)


@click.group("token")
def token() -> None:
    """Manage API bearer tokens."""


@token.command("create")
@click.argument("name")
@click.option("--store", "store_url", default=None, help="Store URL (default: FROSTLINE_STORE or ./.frostline).")
def create(name: str, store_url: str | None) -> None:
    """Create a token for principal NAME; the token is printed alone on the last line."""
    if not _PRINCIPAL.match(name):
        raise click.UsageError("NAME must be 1-64 characters: letters, digits, '.', '_', '@' or '-'")
    from frostline.store import open_store

    with open_store(store_url) as store:
        value = store.create_token(name)
    click.echo(f"Created a token for {name}. It is shown once; only its hash is stored.", err=True)
    click.echo(value)
