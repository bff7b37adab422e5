"""`frostline graph …`: check, draw and run phase graphs. Thin commands over frostline.graph.

`tune` and `adopt` (offline tuning and its adoption) are in frostline.cli.graph_tune.

Exit codes (the table of `frostline.cli.common`): `check` 0 when all three queries hold, 1 when
one fails, 2 when the graph file is malformed. `run` 0 accepted, 1 rejected, 9 stuck or
stopped by the step limit, 2 for a malformed graph or bodies file, or a graph the model checker
rejects; a durable run (`--run`) also exits 4 when it diverged, 5 when it found an unresolved
side-effecting tool call, 7 when the store cannot be reached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STORE_UNAVAILABLE,
    EXIT_USAGE,
    Command,
    Group,
    config_option,
    console,
    emit_json,
    exit_code_of,
    fail,
    fail_with,
    opened_capabilities,
    opened_store,
    text,
)
from frostline.cli.graph_tune import adopt_cmd, tune_cmd
from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.contract.status import ATTEMPT_EXIT, EXIT_CODES, GRAPH_EXIT, AttemptStatus
from frostline.errors import FrostlineError, GraphLoadError
from frostline.graph.allowlist import LocalToolRouter
from frostline.graph.bodies import load_bodies
from frostline.graph.engine import Engine, RunResult, TraversalStatus
from frostline.graph.graph import Graph, load_graph
from frostline.graph.ledger import CallbackSink, LedgerEvent
from frostline.graph.modelcheck import check as model_check
from frostline.graph.promela import to_promela
from frostline.graph.render import FORMATS as DRAWINGS

FORMATS = {**DRAWINGS, "promela": to_promela}


def _load(spec: str, as_json: bool) -> Graph:
    try:
        return load_graph(spec)
    except GraphLoadError as exc:
        fail_with(exc, as_json, EXIT_USAGE, json_lines=True)


@click.group("graph", cls=Group)
def graph() -> None:
    """Phase graphs: model-check, draw and run declared workflows."""


@graph.command("check", cls=Command)
@click.argument("graph_spec", metavar="GRAPH")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@click.option("--spin", "with_spin", is_flag=True, help="Also confirm the verdicts with SPIN.")
def check_cmd(graph_spec: str, as_json: bool, with_spin: bool) -> None:
    """Prove reachability, safety and liveness of GRAPH ('seed', 'canonical' or a JSON file)."""
    g = _load(graph_spec, as_json)
    result = model_check(g)
    payload = result.to_dict()
    if with_spin:
        from frostline.graph.promela import spin_check

        spin = spin_check(g)
        payload["spin"] = {"reachability": spin.reachability, "safety": spin.safety,
                           "liveness": spin.liveness, "elapsed_ms": round(spin.elapsed_ms, 1),
                           "agrees": (spin.reachability, spin.safety, spin.liveness) ==
                           (result.reachability.ok, result.safety.ok, result.liveness.ok)}
    if as_json:
        emit_json(payload, indent=None)
    else:
        out = console()
        table = Table(title=text(f"graph {g.name}: {'GREEN' if result.ok else 'RED'}"))
        table.add_column("query")
        table.add_column("verdict")
        table.add_column("counterexample / detail")
        for name, q in result.queries.items():
            ce = " → ".join(q.counterexample) if q.counterexample else ""
            table.add_row(text(name), "[green]holds[/]" if q.ok else "[red]fails[/]",
                          text("\n".join(x for x in (ce, q.detail) if x)))
        out.print(table)
        out.print(f"{result.states_explored} configurations explored in {result.elapsed_ms:.1f} ms")
        for note in result.notes:
            out.print(f"note: {text(note)}")
        if with_spin:
            out.print(f"SPIN: {text(payload['spin'])}")
    raise SystemExit(EXIT_OK if result.ok else EXIT_FAILED)


@graph.command("show", cls=Command)
@click.argument("graph_spec", metavar="GRAPH")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="mermaid", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to a file instead of standard output.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {graph, format, text} (or {graph, format, output} with -o).")
def show_cmd(graph_spec: str, fmt: str, output: Path | None, as_json: bool) -> None:
    """Draw GRAPH as Mermaid, Graphviz DOT or SVG, or export it as a Promela model for SPIN."""
    g = _load(graph_spec, as_json)
    drawing = FORMATS[fmt](g)
    if output is not None:
        try:
            output.write_text(drawing, "utf-8")
        except OSError as exc:
            fail(f"cannot write {str(output)!r}: {exc.strerror or exc}", EXIT_USAGE, as_json)
    if as_json:
        where = {"text": drawing} if output is None else {"output": str(output)}
        emit_json({"graph": g.name, "format": fmt, **where})
    elif output is None:
        click.echo(drawing, nl=False)


def _describe(event: LedgerEvent) -> str:
    d = event.data
    match event.kind:
        case "state_entered":
            return f"enter {d['state']} (visit {d['visit']})"
        case "edge":
            extra = f" [{d['reason']}]" if d.get("reason") else ""
            drawn = f" drew {d['budget_drawn']}" if d.get("budget_drawn") else ""
            return f"edge {d['from']} -> {d['to']} ({d['kind']}){extra}{drawn}"
        case "gate":
            gate = d.get("gate")
            verdict = "skipped" if gate is None else ("holds" if gate["holds"] else "false")
            return f"gate {d['edge']['from']}->{d['edge']['to']}: {verdict}"
        case "tool_call":
            return f"tool {d['tool']} as {d['identity']}"
        case "invalidation":
            return f"{d['changed']} changed: STALE {', '.join(d['stale'])}"
        case "terminal":
            return f"terminal {d['state']} ({d['status']}{', ' + d['reason'] if d.get('reason') else ''})"
        case "model_call":
            return f"model call in {d['state']} (visit {d['visit']}, turn {d['turn']}, {d['remaining']} left)"
        case "artifact":
            return f"artifact {d['artifact']} v{d['version']}{'' if d['changed'] else ' (identical)'}"
        case _:
            return f"{event.kind} {json.dumps(d, sort_keys=True)[:160]}"


@graph.command("run", cls=Command)
@click.argument("graph_spec", metavar="GRAPH")
@click.option("--bodies", "bodies_spec", required=True, metavar="MODULE_OR_FILE",
              help="Python module or file defining the state bodies.")
@click.option("--json", "as_json", is_flag=True, help="Print ledger events and the result as JSON lines.")
@click.option("--run-id", default="graph-run", show_default=True,
              help="The ledger's run id of an in-memory run (ignored with --run).")
@click.option("--run", "durable_run", default=None, metavar="RUN_ID",
              help="Run durably as RUN_ID in the store: tool calls go through the broker, and "
                   "running the same RUN_ID again resumes it without repeating committed calls.")
@click.option("--store", "store_url", default=None, metavar="URL",
              help="Store URL for --run (default: $FROSTLINE_STORE, else ./.frostline/).")
@click.option("--owner", default=None, metavar="NAME",
              help=f"The principal a new durable run belongs to (default: {LOCAL_PRINCIPAL!r}); "
                   "its graph view is then in the API and the UI for NAME's token.")
@config_option
def run_cmd(graph_spec: str, bodies_spec: str, as_json: bool, run_id: str, durable_run: str | None,
            store_url: str | None, owner: str | None, config_file: str | None) -> None:
    """Run GRAPH with the state bodies of MODULE_OR_FILE, printing the ledger as it goes.

    Graph tools the bodies module does not define are answered by the configured capabilities
    of the same name (--config, $FROSTLINE_CONFIG or ./frostline.toml)."""
    g = _load(graph_spec, as_json)
    with opened_capabilities(config_file, as_json) as registry:
        _run(g, bodies_spec, as_json, run_id, durable_run, store_url, registry, owner)


def _run(g: Graph, bodies_spec: str, as_json: bool, run_id: str, durable_run: str | None,
         store_url: str | None, registry: Any, owner: str | None = None) -> NoReturn:
    from frostline.graph.configured import configured_tools

    def show(event: LedgerEvent) -> None:
        if as_json:
            emit_json({"event": event.to_dict()}, indent=None)
        else:
            click.echo(f"{event.seq:4d} {_describe(event)}")

    try:
        made = dict(load_bodies(bodies_spec))
        defined = dict(made.get("tools") or {})
        made["tools"] = {**configured_tools(registry, g.tools, defined,
                                            durable=durable_run is not None), **defined}
        if durable_run is not None:
            _run_durable(g, made, durable_run, store_url, show, as_json, owner)
        engine = Engine(g, made["bodies"], model=made.get("model"),
                        router=LocalToolRouter(made["tools"]), sinks=[CallbackSink(show)],
                        run_id=run_id)
        result = engine.run()
    except FrostlineError as exc:  # the graph, the bodies or the tools are wrong: usage
        fail_with(exc, as_json, exit_code_of(exc, EXIT_USAGE), json_lines=True)
    _report(g, result, as_json)
    raise SystemExit(_CODES[result.status])


# From the one table (frostline.contract.status): a traversal's status, and the durable run's
# statuses that exit with their own row (any other ends `failed`).
_CODES = {s: EXIT_CODES[GRAPH_EXIT[s]][0] for s in TraversalStatus}
_DURABLE_CODES: dict[str, int] = {s: EXIT_CODES[ATTEMPT_EXIT[s]][0]
                                   for s in (AttemptStatus.DIVERGED, AttemptStatus.UNRESOLVED)}


def _report(g: Graph, result: RunResult, as_json: bool) -> None:
    if as_json:
        emit_json({"result": result.to_dict()}, indent=None)
    else:
        c = result.counters
        click.echo(f"{result.status.value}: {result.terminal or '-'} {result.reason}".rstrip())
        click.echo(f"steps {c.steps}, model calls {c.model_calls}, tool calls {c.tool_calls}, "
                   f"retry {c.retry_used}/{g.budgets.retry}, rollback {c.rollback_used}/{g.budgets.rollback}, "
                   f"illegal tools {c.illegal_tools}, illegal transitions {c.illegal_transitions}")


def _run_durable(g: Graph, made: Mapping[str, Any], run_id: str, store_url: str | None,
                 show: Callable[[LedgerEvent], None], as_json: bool,
                 owner: str | None = None) -> NoReturn:
    """`graph run --run`: one attempt of a durable graph run; exits with the run's code."""
    from frostline.graph.durable import run_durable

    with opened_store(store_url, as_json) as store:
        outcome = run_durable(store, run_id, g, made["bodies"], made.get("tools") or {},
                              model=made.get("model"), sinks=[CallbackSink(show)], owner=owner)
    if as_json:
        emit_json({"durable": {k: v for k, v in outcome.to_dict().items() if k != "result"}},
                  indent=None)
    else:
        click.echo(f"run {run_id} attempt {outcome.attempt}: {outcome.status} "
                   f"(tools executed {outcome.executed}, replayed {outcome.replayed})")
    if outcome.result is not None:
        _report(g, outcome.result, as_json)
        raise SystemExit(_CODES[outcome.result.status])
    code = _DURABLE_CODES.get(outcome.status, EXIT_FAILED)
    error = outcome.error or {"code": outcome.status, "message": f"the attempt {outcome.status}"}
    if error.get("code") == "store_unavailable":
        code = EXIT_STORE_UNAVAILABLE
    fail(str(error.get("message", outcome.status)), code, as_json, json_lines=True,
         **{k: v for k, v in error.items() if k != "message"})


graph.add_command(tune_cmd)
graph.add_command(adopt_cmd)
