"""`frostline graph tune` and `frostline graph adopt`: offline graph tuning and its adoption.

`tune` searches the graph's declared tunables on the tuning split and writes the tuned graph
and the report of the search (frostline.coding.tune); `adopt` decides from two held-out
`frostline ab` results folders whether the tuned graph replaces the declared one
(frostline.coding.adopt).

Exit codes (the table of `frostline.cli.common`): `tune` 0 the tuned graph and its report were
written (whatever the search found), 2 bad input: a split other than tuning, a budget below 1, a
malformed graph or one that declares nothing tunable, a missing or unsealed tasks folder;
`adopt` 0 adopted, 1 the declared graph stays (rejected or undecided), 2 bad input.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    config_option,
    console,
    emit_json,
    fail,
    fail_with,
    text,
)
from frostline.errors import FrostlineError


@click.command("tune", cls=Command)
@click.option("--tasks", "tasks_dir", required=True, metavar="DIR",
              help="A folder built by `frostline tasks build`.")
@click.option("--split", default="tuning", show_default=True,
              help="Only tuning is accepted: the held-out split belongs to the A/B.")
@click.option("--budget", type=int, default=12, show_default=True, metavar="N",
              help="Evaluations at most, the declared graph's included; each runs every task.")
@click.option("--out", "out", default=None, metavar="FILE",
              help="The tuned graph file (default: DIR/results/tuned-GRAPH-seedS.json); the "
                   "report of the search goes beside it as FILE's stem + .report.json.")
@click.option("--graph", "graph_spec", default="canonical", show_default=True, metavar="GRAPH",
              help="The declared graph to tune: 'canonical' or a graph JSON file.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Orders the search; the same seed on the same tasks gives the same result.")
@click.option("--limit", type=int, default=None,
              help="N tuning tasks only, taken round-robin over their packages.")
@click.option("--faults", "fault_rate", type=float, default=0.0, show_default=True,
              help="Rate of injected tool faults (0..1), as in `frostline ab`.")
@click.option("--fault-seed", type=int, default=0, show_default=True)
@click.option("--model", "model_name", default=None, metavar="NAME",
              help="The configured [models.NAME] (default: none, the template generator).")
@click.option("--json", "as_json", is_flag=True, help="Print the report of the search as JSON.")
@config_option
def tune_cmd(tasks_dir: str, split: str, budget: int, out: str | None, graph_spec: str,
             seed: int, limit: int | None, fault_rate: float, fault_seed: int,
             model_name: str | None, as_json: bool, config_file: str | None) -> None:
    """Search GRAPH's declared tunables on the tuning split, at design time only.

    Every candidate is model-checked before it is evaluated (a red one never runs); the
    result is a candidate for adoption, decided on held-out figures by `graph adopt`."""
    from frostline.cli.ab import chat_model
    from frostline.coding.ab.driver import spread
    from frostline.coding.interface import FaultPlan
    from frostline.coding.tasks.split import load_tasks, rows_digest
    from frostline.coding.tune import require_tuning_split, tune, workflow_evaluator, write_tuned
    from frostline.graph.graph import load_graph

    try:
        require_tuning_split(split)
        if budget < 1 or (limit is not None and limit < 1) or not 0.0 <= fault_rate <= 1.0:
            fail("--budget and --limit must be at least 1, --faults within 0..1", EXIT_USAGE,
                 as_json)
        base = load_graph(graph_spec)
        tasks = spread(load_tasks(Path(tasks_dir), split), limit)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    model, label = chat_model(config_file, model_name, as_json)
    target = Path(out) if out else Path(tasks_dir) / "results" / f"tuned-{base.name}-seed{seed}.json"
    err = console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="frostline-tune-") as work:
        try:
            result = tune(base, tasks, workflow_evaluator(
                workdir=Path(work), faults=FaultPlan(rate=fault_rate, seed=fault_seed),
                model=model), budget=budget, seed=seed, split=split,
                tasks_digest=rows_digest([t.to_dict() for t in tasks]),
                progress=lambda line: err.print(text(line)))
        except FrostlineError as exc:
            fail_with(exc, as_json, EXIT_USAGE)
    result.context.update({"faults": {"rate": fault_rate, "seed": fault_seed},
                           "model": label, "tasks_dir": tasks_dir})
    graph_file, report_file = write_tuned(result, target)
    report = result.report()
    if as_json:
        emit_json({**report, "graph_file": str(graph_file), "report_file": str(report_file)})
    else:
        _print(report, graph_file, report_file)
    raise SystemExit(EXIT_OK)


def _print(report: dict[str, Any], graph_file: Path, report_file: Path) -> None:
    c = console()
    table = Table(title=text(f"graph tune: {report['evaluations']} evaluation(s) on "
                             f"{report['tasks']['count']} tuning tasks "
                             f"(budget {report['budget']}, seed {report['seed']})"))
    for column in ("#", "changed", "model check", "resolve", "tool calls", "wall s"):
        table.add_column(column)
    for cand in report["candidates"]:
        scores = cand["scores"] or {}
        verdict = "green" if cand["check"]["ok"] else f"red: {', '.join(cand['check']['failed'])}"
        table.add_row(str(cand["index"]), text(cand["changed"] or "declared"), text(verdict),
                      text(scores.get("resolve_rate", "not evaluated")),
                      text(scores.get("tool_calls", "")), text(cand["wall_s"] or ""))
    c.print(table)
    c.print(text(f"{report['outcome']}"))
    c.print(text(f"label: {report['label']}"))
    c.print(text(f"tuned graph: {graph_file}\nreport: {report_file}"))


@click.command("adopt", cls=Command)
@click.argument("tuned_spec", metavar="TUNED_GRAPH")
@click.option("--declared", "declared_dir", required=True, metavar="DIR",
              help="`frostline ab --arms arm4` results on the held-out split.")
@click.option("--tuned", "tuned_dir", required=True, metavar="DIR",
              help="`frostline ab --arms arm4 --graph TUNED_GRAPH` results, same tasks and faults.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
def adopt_cmd(tuned_spec: str, declared_dir: str, tuned_dir: str, as_json: bool) -> None:
    """Adopt TUNED_GRAPH only if it strictly dominates the declared graph on held-out tasks."""
    from frostline.coding.adopt import decide_adoption, read_results
    from frostline.graph.graph import load_graph

    try:
        tuned_graph = load_graph(tuned_spec)
        decision = decide_adoption(read_results(Path(declared_dir)), read_results(Path(tuned_dir)),
                                   tuned_graph)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    if as_json:
        emit_json(decision.to_dict())
    else:
        c = console()
        c.print(f"[bold]{text(decision.verdict.upper())}[/] {text(decision.subject)} vs the "
                f"declared graph ({text(decision.rule)}): {text(decision.reason)}")
        for cmp in decision.evidence:
            if cmp.verdict != "same":
                c.print(text(f"  {cmp.instrument}: {cmp.verdict} (gain {cmp.gain:.4g}, CI "
                             f"{[round(x, 4) for x in cmp.ci]}, n={cmp.n})"))
    raise SystemExit(EXIT_OK if decision.verdict == "adopted" else EXIT_FAILED)
