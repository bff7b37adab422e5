"""`frostline ab`: the A/B driver of the coding workflow on a task population (the measurement
of "Build Spec 23 — Workflow / State Machine", its §8; see docs/background.md).

Exit codes (the table of `frostline.cli.common`): 0 the report was written (whatever it
decides); 2 bad input: a missing tasks folder, an unknown split, a broken seal, an unknown arm,
a bad --faults/--jobs/--limit/--task-timeout, an unknown --model, matplotlib missing without --no-figures, a
--record NAME taken by a run of another kind, an --out folder holding the journal of another run,
a --graph that is malformed, fails the model checker, or is given with other arms than arm4 or
with --solver; 7 the store for --record cannot be reached.

A run keeps a journal in its results folder (`frostline.coding.ab.journal`): the same command
run again with the same --out after the run was stopped (killed, even with SIGKILL) resumes it,
running only the jobs the journal does not hold.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from frostline.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    Command,
    config_option,
    console,
    emit_json,
    fail,
    fail_with,
    opened_store,
    store_option,
    text,
)
from frostline.coding.interface import INSTRUMENT_KEYS
from frostline.errors import FrostlineError


def chat_model(config_file: str | None, name: str | None, as_json: bool) -> tuple[Any, str | None]:
    """A chat client for the configured model (`[models.NAME]`) to hand to `solve`, or none."""
    from frostline.config import load_config
    from frostline.repair.endpoints import model_client

    try:
        config = load_config(config_file)
        models = config.models
        if name is not None and name not in models:
            fail(f"no [models.{name}] in the configuration; configured: "
                 f"{', '.join(models) or 'none'}", EXIT_USAGE, as_json)
        if name is None and len(models) > 1:
            fail(f"several models are configured ({', '.join(models)}); choose one with "
                 "--model", EXIT_USAGE, as_json)
        chosen = name if name is not None else next(iter(models), None)
        if chosen is None:
            return None, None
        return model_client(chosen, config), chosen
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)


def _record(store_url: str | None, name: str, owner: str | None, report: dict[str, Any],
            config: dict[str, Any], files: list[Path], as_json: bool) -> str:
    """Keep the report and its files in the store as a run of kind "ab"; its key."""
    from frostline.coding.recorded import record_report

    with opened_store(store_url, as_json) as store:
        try:
            return record_report(store, name, report, {f.name: f.read_bytes() for f in files},
                                 config=config, owner=owner)
        except FrostlineError as exc:
            fail_with(exc, as_json, EXIT_USAGE)


def _journal(results: Path, identity: dict[str, Any], as_json: bool) -> Any:
    """The run's journal in `results` (read back when the run resumes), or exit 2 when the
    folder holds another run's. A stopped session's job folders are not results: they go."""
    from frostline.coding.ab.journal import Journal

    try:
        journal = Journal(results, identity)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    shutil.rmtree(results / "work", ignore_errors=True)
    return journal


def _checked(arms: tuple[str, ...], fault_rate: float, jobs: int, limit: int | None,
             task_timeout: float, as_json: bool) -> list[str]:
    """The arms to run, or exit 2 on an unknown arm or an out-of-range number."""
    from frostline.coding import arms as arm_table

    names, unknown = arm_table.parse_names(arms)
    if unknown:
        fail(f"unknown arm(s) {', '.join(unknown)}; known: {', '.join(arm_table.ALL_NAMES)}",
             EXIT_USAGE, as_json, unknown=unknown)
    if not 0.0 <= fault_rate <= 1.0 or jobs < 1 or (limit is not None and limit < 1) \
            or not task_timeout > 0:
        fail("--faults must be within 0..1, --jobs and --limit at least 1, --task-timeout "
             "above 0", EXIT_USAGE, as_json)
    return list(names)


def _print(report: dict[str, Any], out: Path) -> None:
    c = console()
    table = Table(title=text(f"A/B on {report['run']['tasks']} {report['run']['split']} tasks"))
    table.add_column("arm")
    for key in ("tasks", *INSTRUMENT_KEYS, "precision"):
        table.add_column(key)
    for name, entry in report["arms"].items():
        if "not_run" in entry:
            table.add_row(text(name), text(f"not run: {entry['not_run']}"))
        else:
            prec = report["details"].get(name, {}).get("precision") or {}
            table.add_row(text(name), *(text(entry[k]) for k in ("tasks", *INSTRUMENT_KEYS)),
                          text(f"{prec.get('precision')} of {prec.get('accepted')} accepted"))
    c.print(table)
    for d in report["decisions"]:
        c.print(f"[bold]{text(d['verdict'].upper())}[/] {text(d['subject'])} vs "
                f"{text(d['against'])} ({text(d['rule'])}): {text(d['reason'])}")
    c.print(text(f"report: {out / 'report.md'}"))


def _given_graph(graph_file: str, names: list[str], solver: str | None, as_json: bool) -> Any:
    """The --graph file, loaded and model-checked, for arm 4 alone and the default solver."""
    from frostline.graph.graph import load_graph
    from frostline.graph.modelcheck import check

    if names != ["arm4"] or solver is not None:
        fail("--graph runs arm 4 of the coding workflow on the given graph: pass --arms arm4 "
             "alone, and no --solver", EXIT_USAGE, as_json)
    try:
        graph = load_graph(graph_file)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    verdict = check(graph)
    if not verdict.ok:
        failed = [k for k, q in verdict.queries.items() if not q.ok]
        fail(f"{graph_file} fails the model checker ({', '.join(failed)}); `frostline graph "
             f"check {graph_file}` shows the counterexample", EXIT_USAGE, as_json)
    return graph


def _with_graph(solve: Any, graph_file: str | None, names: list[str], solver: str | None,
                as_json: bool) -> tuple[Any, dict[str, str] | None]:
    """`solve` with arm 4's graph replaced by the --graph file's (its settings in force), and
    what the report says of that graph; `solve` as it is without --graph."""
    if graph_file is None or solve is None:
        return solve, None
    graph = _given_graph(graph_file, names, solver, as_json)

    def on_graph(task: Any, arm: Any, faults: Any, *, model: Any = None, workdir: Path) -> Any:
        return solve(task, arm, faults, model=model, workdir=workdir, graph=graph)
    return on_graph, {"file": graph_file, "name": graph.name, "digest": graph.content_digest}


@click.command("ab", cls=Command)
@click.option("--tasks", "tasks_dir", required=True, metavar="DIR",
              help="A folder built by `frostline tasks build`.")
@click.option("--split", default="heldout", show_default=True,
              help="heldout (sealed), tuning or all.")
@click.option("--limit", type=int, default=None,
              help="N tasks of the split only, taken round-robin over its packages.")
@click.option("--arms", "arms", multiple=True, metavar="NAME[,NAME…]",
              help="Arms and ablations to run (default: all of them).")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--faults", "fault_rate", type=float, default=0.0, show_default=True,
              help="Rate of injected tool faults (0..1), the same in every arm.")
@click.option("--fault-seed", type=int, default=0, show_default=True)
@click.option("--task-timeout", type=float, default=900.0, show_default=True, metavar="SECONDS",
              help="A task still running after this long is killed and rejected.")
@click.option("--out", "out", default=None, metavar="DIR",
              help="Results folder (default: DIR/results/ab-<UTC time>).")
@click.option("--model", "model_name", default=None, metavar="NAME",
              help="The configured [models.NAME] for the arms that need one.")
@click.option("--solver", default=None, metavar="MODULE:FUNC",
              help="The solve function (default: the coding workflow's).")
@click.option("--graph", "graph_file", default=None, metavar="FILE",
              help="Run arm 4 on this graph file (a tuned graph) instead of the declared one; "
                   "needs --arms arm4 (the held-out figures `frostline graph adopt` reads).")
@click.option("--no-figures", is_flag=True, help="Skip the matplotlib figures.")
@click.option("--record", "record_name", default=None, metavar="NAME",
              help="Also keep the report in the store as the A/B run NAME (API and web UI).")
@click.option("--owner", default=None, metavar="NAME",
              help="The principal the recorded run belongs to (default: local).")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the report object as JSON.")
@config_option
def ab(tasks_dir: str, split: str, limit: int | None, arms: tuple[str, ...], jobs: int,
       fault_rate: float, fault_seed: int, task_timeout: float, out: str | None, model_name: str | None,
       solver: str | None, graph_file: str | None, no_figures: bool, record_name: str | None,
       owner: str | None, store_url: str | None, as_json: bool, config_file: str | None) -> None:
    """Run the coding workflow's arms and ablations on the same tasks.

    Writes report.md, report.json and the figures, and applies the decision and ablation rules
    of "Build Spec 23 — Workflow / State Machine" (its §8.3 and §8.4; docs/coding-workflow.md).
    """
    from frostline.coding.ab.decide import decide_all
    from frostline.coding.ab.driver import DEFAULT_SOLVER, load_solver, run_ab, spread
    from frostline.coding.ab.figures import draw, require_matplotlib
    from frostline.coding.ab.report import build_report, write_report
    from frostline.coding.interface import FaultPlan
    from frostline.coding.tasks.split import digest, load_tasks

    names = _checked(arms, fault_rate, jobs, limit, task_timeout, as_json)
    try:
        if not no_figures:
            require_matplotlib()
        tasks = load_tasks(Path(tasks_dir), split)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    tasks = spread(tasks, limit)
    model, label = chat_model(config_file, model_name, as_json)
    solve, why = load_solver(solver or DEFAULT_SOLVER)
    solve, graph = _with_graph(solve, graph_file, names, solver, as_json)
    results = Path(out) if out else Path(tasks_dir) / "results" / time.strftime(
        "ab-%Y%m%dT%H%M%SZ", time.gmtime())
    err = console(stderr=True)
    faults = FaultPlan(rate=fault_rate, seed=fault_seed)
    journal = _journal(results, {
        "tasks_dir": str(Path(tasks_dir).resolve()), "split": split, "tasks": [t.task_id for t in tasks],
        "tasks_sha256": digest([t.to_dict() for t in tasks]), "arms": names, "model": label,
        "faults": {"rate": fault_rate, "seed": fault_seed, "kinds": list(faults.kinds)},
        "solver": solver or DEFAULT_SOLVER, "task_timeout": task_timeout,
        "graph": None if graph is None else graph["digest"]}, as_json)
    run = run_ab(tasks, names, solve, faults=faults, model=model, model_label=label, jobs=jobs,
                 workdir=results / "work", solver_reason=why, task_timeout=task_timeout,
                 progress=lambda line: err.print(text(line)), journal=journal)
    report = build_report(run, decide_all(run.outcomes, run.not_run, names),
                          tasks_dir=tasks_dir, split=split)
    if graph is not None:
        report["run"]["graph"] = graph
    figures = [] if no_figures else draw(report, results)
    written = write_report(results, report, run, figures)
    recorded = None if record_name is None else _record(
        store_url, record_name, owner, report,
        {"tasks": tasks_dir, "split": split, "limit": limit, "arms": names, "jobs": jobs,
         "faults": fault_rate, "fault_seed": fault_seed, "model": label},
        [*written[:2], *map(Path, figures)], as_json)
    if as_json:
        emit_json({**report, "results": str(results), "recorded": recorded})
    else:
        _print(report, results)
    raise SystemExit(EXIT_OK)
