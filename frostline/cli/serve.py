"""`frostline serve`: the HTTP service (frostline.service). FastAPI is imported only when
`serve` runs: it is an optional extra. Its bearer tokens are managed by `frostline token`.

Exit codes (the table of `frostline.cli.common`): 2 a bad store URL, configuration or limit,
or a missing `service` extra, 7 the store cannot be reached, 8 the sandbox cannot be
established.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import click

from frostline.cli.common import (
    EXIT_USAGE,
    Command,
    config_option,
    fail,
    fail_with,
    guarded,
    opened_capabilities,
    store_option,
)
from frostline.errors import DefinitionError, FrostlineError

# Plain data (no FastAPI): the flags' help shows the defaults the service applies.
from frostline.service.limits import ServiceLimits

_DEFAULT = ServiceLimits()


@click.command("serve", cls=Command)
@store_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--runner", "runner_name", type=click.Choice(["auto", "sandbox", "process"]),
              envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
              help="Where scripts run; 'process' reduces isolation, 'auto' falls back loudly.")
@click.option("--docs", is_flag=True,
              help="Serve the interactive API docs at /docs and /redoc; they load their "
                   "scripts from a CDN, so they are off unless asked for.")
@click.option("--max-executing-attempts", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Jobs one principal may have waiting or executing at once (default: "
                   f"{_DEFAULT.executing_attempts}); 429 beyond.")
@click.option("--max-event-streams", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Event streams one principal may hold open (default: "
                   f"{_DEFAULT.event_streams}); 429 beyond.")
@click.option("--max-runs-per-minute", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Runs one principal may create per minute (default: "
                   f"{_DEFAULT.runs_per_minute}); 429 beyond.")
@click.option("--max-answers-per-minute", type=click.IntRange(min=1), default=None,
              metavar="N", help=f"Signals and approvals one principal may send per minute "
                                f"(default: {_DEFAULT.answers_per_minute}); 429 beyond.")
@click.option("--metrics-public", is_flag=True,
              help="Serve /v1/metrics without a token (for a scraper on a trusted network); "
                   "by default it needs one, as queue figures tell of every principal's "
                   "activity.")
@config_option
@click.option("--json", "as_json", is_flag=True,
              help="Report a failure to start as one JSON error on stdout.")
def serve(store_url: str | None, host: str, port: int, runner_name: str, docs: bool,
          max_executing_attempts: int | None, max_event_streams: int | None,
          max_runs_per_minute: int | None, max_answers_per_minute: int | None,
          metrics_public: bool, config_file: str | None, as_json: bool) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) and the web UI at /.

    Needs the `service` extra: pip install 'frostline[service]'.
    """
    try:
        from frostline.service.app import serve as run_server
        from frostline.service.operations import Services
    except ImportError as exc:  # the service extra is optional
        fail(f"the HTTP service needs the 'service' extra: pip install 'frostline[service]' "
             f"({exc})", EXIT_USAGE, as_json)
    from frostline.store.url import parse, resolve

    given = {"executing_attempts": max_executing_attempts, "event_streams": max_event_streams,
             "runs_per_minute": max_runs_per_minute,
             "answers_per_minute": max_answers_per_minute}
    with opened_capabilities(config_file, as_json) as registry:
        # flag > configuration file ([service.limits]) > default
        limits = _limits(registry.config.service_limits, given, as_json)
        if guarded(as_json, lambda: parse(resolve(store_url))).backend == "postgres":
            # Jobs go to the workers' queue: this host runs no script and needs no providers.
            from frostline.worker import ProcrastinateQueue

            try:
                run_server(store_url, host, port,
                           lambda: Services.remote(ProcrastinateQueue, runner_name=runner_name),
                           limits=limits, docs=docs, approvals=registry.config.approvals,
                           metrics_public=metrics_public)
            except FrostlineError as err:  # the store cannot be reached or opened
                fail_with(err, as_json)
            return
        try:
            services = Services.default(runner_name=runner_name, capabilities=registry)
        except FrostlineError as err:  # e.g. the sandbox cannot be established here
            fail_with(err, as_json)
        try:
            run_server(store_url, host, port, lambda: services, limits=limits, docs=docs,
                       approvals=registry.config.approvals, metrics_public=metrics_public)
        except FrostlineError as err:  # the store: a bad URL, or one that cannot be reached
            fail_with(err, as_json)


def configured_limits(configured: Mapping[str, int], as_json: bool = False) -> ServiceLimits:
    """The limits of a configuration's [service.limits] (also `frostline mcp`'s)."""
    return _limits(configured, {}, as_json)


def _limits(configured: Mapping[str, int], flags: Mapping[str, int | None],
            as_json: bool = False) -> ServiceLimits:
    try:
        from_file = ServiceLimits.from_mapping(configured)
    except DefinitionError as exc:
        fail(f"[service.limits]: {exc.message}", EXIT_USAGE, as_json, code=exc.code)
    chosen = {k: v for k, v in flags.items() if v is not None}
    return dataclasses.replace(from_file, **chosen)
