"""`frostline mcp`: frostline as an MCP server for any MCP client (an agent in an IDE or a
desktop app), over stdio (default: the client starts `frostline mcp`) or streamable HTTP
(`--transport http`, bearer tokens from `frostline token create`).

The configured capabilities (and their MCP servers) are started once and serve every run until
the client disconnects or the server stops. Exit codes (the table of `frostline.cli.common`):
2 a bad store URL or configuration, or a missing `mcp` extra, 7 the store cannot be reached,
8 the sandbox cannot be established.
"""

from __future__ import annotations

from typing import Any

import click

from frostline.cli.common import (
    EXIT_USAGE,
    Command,
    config_option,
    fail,
    make_runner,
    opened_capabilities,
    opened_store,
    store_option,
)


@click.command("mcp", cls=Command)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="stdio: the client starts this process; http: listen.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="HTTP: port to listen on (the endpoint is /mcp).")
@click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where scripts run; 'process' reduces isolation.")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True,
              help="Wall-clock limit of one script in seconds.")
@click.option("--no-auth", is_flag=True,
              help="HTTP: accept requests without a bearer token (only on a trusted host).")
@store_option
@config_option
@click.option("--json", "as_json", is_flag=True,
              help="Report a failure to start as one JSON error on stdout.")
def mcp(transport: str, host: str, port: int, runner_kind: str, timeout_s: float,
        no_auth: bool, store_url: str | None, config_file: str | None, as_json: bool) -> None:
    """Serve frostline to an MCP client: tools and resources.

    The tools: catalog, check_script, run_script, gate_script, show_run, reconcile_call,
    approve, signal, cancel_run. Runs and artifacts are resources. Each principal is held to
    the [service.limits] of the configuration, as `frostline serve` holds it. See docs/mcp.md.
    """
    try:
        from frostline.mcp.serve import http_app, serve_stdio
    except ImportError as exc:  # the mcp extra is optional
        fail("frostline mcp needs the 'mcp' extra: pip install 'frostline[mcp]' (from a "
             f"checkout: pip install -e '.[mcp]') ({exc})",
             EXIT_USAGE, as_json)
    runner = make_runner(runner_kind, timeout_s, as_json)
    with opened_capabilities(config_file, as_json) as registry, \
            opened_store(store_url, as_json) as store:
        from frostline.cli.serve import configured_limits

        limits = configured_limits(registry.config.service_limits, as_json)
        queue = _queue(store)
        if transport == "stdio":
            import functools

            import anyio

            anyio.run(functools.partial(serve_stdio, store, registry, runner, limits=limits,
                                        queue=queue))
            return
        import uvicorn

        app = http_app(store, registry, runner, host=host, require_token=not no_auth,
                       limits=limits, queue=queue)
        click.echo(f"frostline MCP server on http://{host}:{port}/mcp", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")


def _queue(store: Any) -> Any:
    """Procrastinate's queue on a PostgreSQL store (where cancel_run finds a worker's job)."""
    if getattr(store, "schema_name", None) is None:
        return None
    from frostline.worker.queue import ProcrastinateQueue

    return ProcrastinateQueue(store)
