"""`frostline ab`: the A/B driver of the coding workflow on a task population (the measurement
of "Build Spec 23 — Workflow / State Machine", its §8; see docs/background.md).

Exit codes (the table of `frostline.cli.common`): 0 the report was written (whatever it
decides); 2 bad input: a missing tasks folder, an unknown split, a broken seal, an unknown arm,
a bad --faults/--jobs/--limit/--task-timeout, an unknown --model, matplotlib missing without --no-figures, a
--record NAME taken by a run of another kind; 7 the store for --record cannot be reached.
"""

from __future__ import annotations

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


def _model(config_file: str | None, name: str | None, as_json: bool) -> tuple[Any, str | None]:
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


def _print(report: dict[str, Any], out: Path) -> None:
    c = console()
    table = Table(title=text(f"A/B on {report['run']['tasks']} {report['run']['split']} tasks"))
    table.add_column("arm")
    for key in ("tasks", *INSTRUMENT_KEYS):
        table.add_column(key)
    for name, entry in report["arms"].items():
        if "not_run" in entry:
            table.add_row(text(name), text(f"not run: {entry['not_run']}"))
        else:
            table.add_row(text(name), *(text(entry[k]) for k in ("tasks", *INSTRUMENT_KEYS)))
    c.print(table)
    for d in report["decisions"]:
        c.print(f"[bold]{text(d['verdict'].upper())}[/] {text(d['subject'])} vs "
                f"{text(d['against'])} ({text(d['rule'])}): {text(d['reason'])}")
    c.print(text(f"report: {out / 'report.md'}"))


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
       solver: str | None, no_figures: bool, record_name: str | None, owner: str | None,
       store_url: str | None, as_json: bool, config_file: str | None) -> None:
    """Run the coding workflow's arms and ablations on the same tasks.

    Writes report.md, report.json and the figures, and applies the decision and ablation rules
    of "Build Spec 23 — Workflow / State Machine" (its §8.3 and §8.4; docs/coding-workflow.md).
    """
    from frostline.coding import arms as arm_table
    from frostline.coding.ab.decide import decide_all
    from frostline.coding.ab.driver import DEFAULT_SOLVER, load_solver, run_ab, spread
    from frostline.coding.ab.figures import draw, require_matplotlib
    from frostline.coding.ab.report import build_report, write_report
    from frostline.coding.interface import FaultPlan
    from frostline.coding.tasks.split import load_tasks

    names, unknown = arm_table.parse_names(arms)
    if unknown:
        fail(f"unknown arm(s) {', '.join(unknown)}; known: {', '.join(arm_table.ALL_NAMES)}",
             EXIT_USAGE, as_json, unknown=unknown)
    if not 0.0 <= fault_rate <= 1.0 or jobs < 1 or (limit is not None and limit < 1) \
            or not task_timeout > 0:
        fail("--faults must be within 0..1, --jobs and --limit at least 1, --task-timeout "
             "above 0", EXIT_USAGE, as_json)
    try:
        if not no_figures:
            require_matplotlib()
        tasks = load_tasks(Path(tasks_dir), split)
    except FrostlineError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    tasks = spread(tasks, limit)
    model, label = _model(config_file, model_name, as_json)
    solve, why = load_solver(solver or DEFAULT_SOLVER)
    results = Path(out) if out else Path(tasks_dir) / "results" / time.strftime(
        "ab-%Y%m%dT%H%M%SZ", time.gmtime())
    err = console(stderr=True)
    run = run_ab(tasks, names, solve, faults=FaultPlan(rate=fault_rate, seed=fault_seed),
                 model=model, model_label=label, jobs=jobs, workdir=results / "work",
                 solver_reason=why, task_timeout=task_timeout, progress=lambda line: err.print(text(line)))
    report = build_report(run, decide_all(run.outcomes, run.not_run, names),
                          tasks_dir=tasks_dir, split=split)
    figures = [] if no_figures else draw(report, results)
    written = write_report(results, report, run, figures)
    recorded = None
    if record_name is not None:
        config = {"tasks": tasks_dir, "split": split, "limit": limit, "arms": names,
                  "jobs": jobs, "faults": fault_rate, "fault_seed": fault_seed, "model": label}
        recorded = _record(store_url, record_name, owner, report, config,
                           [*written[:2], *map(Path, figures)], as_json)
    if as_json:
        emit_json({**report, "results": str(results), "recorded": recorded})
    else:
        _print(report, results)
    raise SystemExit(EXIT_OK)
