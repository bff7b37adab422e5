"""`frostline serve` and `frostline token create`: the HTTP service (frostline.service) and the
bearer tokens it accepts. FastAPI is imported only when `serve` runs: it is an optional extra.

Exit codes (the table of `frostline.cli.common`): 2 a bad store URL, a bad principal name or a
missing `service` extra, 7 the store cannot be reached, 8 the sandbox cannot be established.
"""

from __future__ import annotations

import re

import click

from frostline.cli.common import (
    EXIT_USAGE,
    Command,
    Group,
    emit_json,
    fail,
    fail_with,
    json_option,
    opened_store,
    store_option,
)
from frostline.errors import FrostlineError

_PRINCIPAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


@click.command("serve", cls=Command)
@store_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--runner", "runner_name", type=click.Choice(["auto", "sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where scripts run; 'process' reduces isolation, 'auto' falls back loudly.")
@click.option("--json", "as_json", is_flag=True,
              help="Report a failure to start as one JSON error on stdout.")
def serve(store_url: str | None, host: str, port: int, runner_name: str, as_json: bool) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) and the web UI at /.

    Needs the `service` extra: pip install 'frostline[service]'.
    """
    try:
        from frostline.service.app import serve as run_server
        from frostline.service.operations import Services
    except ImportError as exc:  # the service extra is optional
        fail(f"the HTTP service needs the 'service' extra: pip install 'frostline[service]' "
             f"({exc})", EXIT_USAGE, as_json)
    try:
        services = Services.default(runner_name=runner_name)
    except FrostlineError as err:  # e.g. the sandbox cannot be established here
        fail_with(err, as_json)
    try:
        run_server(store_url, host, port, lambda: services)
    except FrostlineError as err:  # the store: a bad URL, or one that cannot be reached
        fail_with(err, as_json)


@click.group("token", cls=Group)
def token() -> None:
    """Manage API bearer tokens."""


@token.command("create")
@click.argument("name")
@store_option
@json_option
def create(name: str, store_url: str | None, as_json: bool) -> None:
    """Create a token for principal NAME; the token is printed alone on the last line
    (with --json: {"principal", "token"})."""
    if not _PRINCIPAL.match(name):
        fail("NAME must be 1-64 characters: letters, digits, '.', '_', '@' or '-'", EXIT_USAGE,
             as_json)
    with opened_store(store_url, as_json) as store:
        try:
            value = store.create_token(name)
        except FrostlineError as err:
            fail_with(err, as_json)
    if as_json:
        emit_json({"principal": name, "token": value})
        return
    click.echo(f"Created a token for {name}. It is shown once; only its hash is stored.", err=True)
    click.echo(value)
