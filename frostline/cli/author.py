"""`frostline author` and `frostline do`: a model writes the first script of a run.

`author TASK|@FILE --model NAME` drives the authoring loop (frostline.repair.author): the
model reads the skill document, the configuration's catalog as typed stubs and the envelope;
each draft the checker refuses goes back with its findings, at most --max-rewrites times. An
accepted script is written to --out and, with --run, executed as the run's first attempt.
Nothing is stored unless a script was accepted and --run asks for it.

`do TASK --model NAME --run RUN_ID` goes from a task to a result: author, run, and on a failed
attempt repair (frostline.repair.loop) and run the repair, until the run succeeds or
--max-repairs is spent. Each repair replays what the run committed: nothing is paid twice.

Exit codes (the table of `frostline.cli.common`): 0 a script was accepted (with --run / `do`:
the last attempt's own exit code), 1 the model failed, 2 bad input (an empty task, a run id
that is taken, a bad --args), 3 no draft was accepted (or no repair candidate), 7 the store
cannot be reached, 8 the sandbox cannot be established.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.syntax import Syntax
from rich.table import Table

from frostline.cli.common import (
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    Command,
    config_option,
    console,
    emit_json,
    fail_with,
    guarded,
    json_arg_text,
    json_option,
    make_runner,
    opened_capabilities,
    opened_store,
    read_json_arg,
    read_text_file,
    store_option,
    text,
)
from frostline.contract.status import AttemptStatus
from frostline.errors import DefinitionError, FrostlineError
from frostline.repair.author import DEFAULT_MAX_REWRITES, AuthorResult, AuthorTask, author

MODEL_HELP = ("NAME of a configured [models.NAME] endpoint, openai:MODEL (the endpoint of "
              "FROSTLINE_MODEL_BASE_URL) or replay:FILE (stored replies, read from the working "
              "directory or $FROSTLINE_REPLAY_DIRS).")


def model_options(fn: Any) -> Any:
    """--model and the per-request settings `author`, `do` and `repair` share."""
    fn = click.option("--max-retries", default=None, type=click.IntRange(0, 10),
                      help="Retries per model request (openai: models only).")(fn)
    fn = click.option("--timeout", "timeout_s", default=None,
                      type=click.FloatRange(min=0, min_open=True),
                      help="Seconds per model request (openai: models only).")(fn)
    return click.option("--model", "spec", required=True, metavar="NAME", help=MODEL_HELP)(fn)


def runner_options(fn: Any) -> Any:
    fn = click.option("--script-timeout", default=600.0, show_default=True,
                      type=click.FloatRange(min=0, min_open=True),
                      help="Wall-clock limit of an executed script in seconds.")(fn)
    return click.option("--runner", "runner_kind", type=click.Choice(["sandbox", "process"]),
                        envvar="FROSTLINE_RUNNER", default="sandbox", show_default=True,
                        help="Where the script runs; 'process' reduces isolation.")(fn)


@click.command("author", cls=Command)
@click.argument("task_text", metavar="TASK|@FILE")
@model_options
@click.option("--run", "run_id", default=None,
              help="Execute the accepted script as the first attempt of this new run.")
@click.option("--args", "args_json", default=None, metavar="JSON|@FILE",
              help="Arguments of orchestrate(ctx, args): a JSON object (shown to the model).")
@click.option("--envelope", "envelope_file", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Envelope JSON file: the grants and budget shown to the model and given to "
                   "the run (default: every capability, the default budget).")
@click.option("--max-rewrites", default=DEFAULT_MAX_REWRITES, show_default=True,
              type=click.IntRange(0, 20), help="Rewrites after the first draft.")
@click.option("--out", "out_path", default=None, type=click.Path(dir_okay=False),
              help="Write the accepted script to this file.")
@runner_options
@store_option
@config_option
@json_option
def author_command(task_text: str, spec: str, timeout_s: float | None, max_retries: int | None,
                   run_id: str | None, args_json: str | None, envelope_file: Path | None,
                   max_rewrites: int, out_path: str | None, runner_kind: str,
                   script_timeout: float, store_url: str | None, config_file: str | None,
                   as_json: bool) -> None:
    """Ask a model to write the script for TASK (text, or @FILE holding it).

    The model reads the skill document, the catalog (`frostline catalog --python`) and the
    envelope; the checker's findings on a refused draft go back to it. Example:

    \b
        frostline author "a storyboard and one image per shot for args.brief"
        --model openai:gpt-4o-mini --args '{"brief": "a fox"}' --out fox.py --run fox
    """
    session = _Session(spec, timeout_s, max_retries, config_file, as_json)
    task_body = _task_text(task_text, as_json)
    args = (read_json_arg(args_json, "--args", as_json, want_object=True)
            if args_json is not None else None)
    runner = make_runner(runner_kind, script_timeout, as_json) if run_id is not None else None
    with opened_capabilities(config_file, as_json) as registry:
        envelope = _read_envelope(envelope_file, registry.catalog, as_json)
        task = guarded(as_json, lambda: AuthorTask(task_body, catalog=registry.catalog,
                                                   envelope=envelope, args=args,
                                                   max_rewrites=max_rewrites))
        if run_id is None:
            result = session.author(registry, task)
            _write(out_path, result)
            _report(as_json, {"run_id": None, **result.to_dict()}, result, [])
            sys.exit(EXIT_OK if result.accepted is not None else EXIT_STOPPED)
        with opened_store(store_url, as_json) as store:
            session.store_files = list(store.local_files())
            _require_new_run(store, run_id, as_json)
            result = session.author(registry, task)
            _write(out_path, result)
            outcome = None
            if result.accepted is not None:
                outcome = guarded(as_json, lambda: _execute(
                    store, run_id, result.accepted, args, envelope, runner, registry))
                store.append_event(run_id, "author", _event(spec, result))
    data = {"run_id": run_id, **result.to_dict()}
    if outcome is not None:
        data["execution"] = outcome.to_dict()
    _report(as_json, data, result, [outcome] if outcome is not None else [])
    if result.accepted is None:
        sys.exit(EXIT_STOPPED)
    sys.exit(outcome.exit_code if outcome is not None else EXIT_OK)


@click.command("do", cls=Command)
@click.argument("task_text", metavar="TASK|@FILE")
@model_options
@click.option("--run", "run_id", required=True, help="The new run the task runs as.")
@click.option("--args", "args_json", default=None, metavar="JSON|@FILE",
              help="Arguments of orchestrate(ctx, args): a JSON object.")
@click.option("--envelope", "envelope_file", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Envelope JSON file (default: every capability, the default budget).")
@click.option("--max-rewrites", default=DEFAULT_MAX_REWRITES, show_default=True,
              type=click.IntRange(0, 20),
              help="Rewrites after the first draft, for the script and for each repair.")
@click.option("--max-repairs", default=2, show_default=True, type=click.IntRange(0, 20),
              help="Repairs of a failed attempt before giving up.")
@runner_options
@store_option
@config_option
@json_option
def do_command(task_text: str, spec: str, timeout_s: float | None, max_retries: int | None,
               run_id: str, args_json: str | None, envelope_file: Path | None,
               max_rewrites: int, max_repairs: int, runner_kind: str, script_timeout: float,
               store_url: str | None, config_file: str | None, as_json: bool) -> None:
    """From TASK to a result: author a script, run it, repair a failed attempt, run again.

    Every repair replays the calls the run already committed, so nothing is paid twice.
    Example: ``frostline do @task.txt --model fast --run r1 --max-repairs 2``
    """
    session = _Session(spec, timeout_s, max_retries, config_file, as_json)
    task_body = _task_text(task_text, as_json)
    args = (read_json_arg(args_json, "--args", as_json, want_object=True)
            if args_json is not None else None)
    runner = make_runner(runner_kind, script_timeout, as_json)
    repairs: list[dict[str, Any]] = []
    outcomes: list[Any] = []
    with opened_capabilities(config_file, as_json) as registry, \
            opened_store(store_url, as_json) as store:
        envelope = _read_envelope(envelope_file, registry.catalog, as_json)
        task = guarded(as_json, lambda: AuthorTask(task_body, catalog=registry.catalog,
                                                   envelope=envelope, args=args,
                                                   max_rewrites=max_rewrites))
        session.store_files = list(store.local_files())
        _require_new_run(store, run_id, as_json)
        result = session.author(registry, task)
        if result.accepted is not None:
            outcomes.append(guarded(as_json, lambda: _execute(
                store, run_id, result.accepted, args, envelope, runner, registry)))
            store.append_event(run_id, "author", _event(spec, result))
        while outcomes and outcomes[-1].status == AttemptStatus.FAILED and len(repairs) < max_repairs:
            fixed, outcome = _repair_once(session, registry, store, run_id, spec,
                                          max_rewrites + 1, runner, as_json)
            repairs.append(fixed)
            if outcome is None:
                break
            outcomes.append(outcome)
    last = outcomes[-1] if outcomes else None
    data = {"run_id": run_id, "status": last.status if last is not None else "not_authored",
            "author": result.to_dict(), "attempts": [o.to_dict() for o in outcomes],
            "repairs": repairs}
    _report(as_json, data, result, outcomes)
    if last is None or (last.status == AttemptStatus.FAILED and repairs and
                        repairs[-1]["accepted"] is None):
        sys.exit(EXIT_STOPPED)
    sys.exit(last.exit_code)


def _repair_once(session: _Session, registry: Any, store: Any, run_id: str, spec: str,
                 max_rewrites: int, runner: Any, as_json: bool) -> tuple[dict[str, Any], Any]:
    """One repair of the run's failed attempt and, when a candidate is accepted, its run (on
    the run's own args and envelope; committed calls replay)."""
    from frostline.repair.loop import repair, task_from_store

    task = guarded(as_json, lambda: task_from_store(store, run_id, catalog=registry.catalog,
                                                    max_rewrites=max_rewrites))
    client = session.client(registry)
    fixed = guarded(as_json, lambda: repair(client, task))
    store.append_event(run_id, "repair", {
        "model": spec, "accepted": fixed.accepted is not None,
        "rewrites": [{"n": r.n, "ok": r.ok, "reason": r.reason} for r in fixed.rewrites],
        "usage": fixed.usage_total})
    if fixed.accepted is None:
        return fixed.to_dict(), None
    outcome = guarded(as_json, lambda: _execute(store, run_id, fixed.accepted, None, None,
                                                runner, registry))
    return fixed.to_dict(), outcome


class _Session:
    """The model client of one command, built once from --model and the configuration."""

    def __init__(self, spec: str, timeout_s: float | None, max_retries: int | None,
                 config_file: str | None, as_json: bool) -> None:
        self.spec, self.as_json = spec, as_json
        self.options: dict[str, Any] = {}
        if timeout_s is not None:
            self.options["timeout"] = timeout_s
        if max_retries is not None:
            self.options["max_retries"] = max_retries
        self._client: Any = None
        self.store_files: list[Any] = []  # a replay file may never be the store's own file

    def client(self, registry: Any) -> Any:
        if self._client is None:
            from frostline.repair.endpoints import model_client
            from frostline.repair.replay import ReplayPolicy

            replay = ReplayPolicy.for_cli(store_files=self.store_files)
            self._client = guarded(self.as_json, lambda: model_client(
                self.spec, registry.config, replay=replay, **self.options))
        return self._client

    def author(self, registry: Any, task: AuthorTask) -> AuthorResult:
        client = self.client(registry)
        return guarded(self.as_json, lambda: author(client, task))


def _task_text(value: str, as_json: bool) -> str:
    if value.startswith("@"):
        return read_text_file(Path(value[1:]), "task file", as_json)
    return json_arg_text(value)


def _read_envelope(envelope_file: Path | None, catalog: Any, as_json: bool) -> Any:
    """The --envelope file, its grants checked against the configured catalog."""
    from frostline.capabilities.envelope import Envelope

    if envelope_file is None:
        return None
    raw = read_text_file(envelope_file, "envelope", as_json)
    try:
        return Envelope.from_json(raw, catalog)
    except FrostlineError as err:
        fail_with(err, as_json, EXIT_USAGE)


def _require_new_run(store: Any, run_id: str, as_json: bool) -> None:
    """A written script is a run's *first* attempt: an existing run is refused before any
    model call is paid for."""
    try:
        exists = store.get_run(run_id) is not None
    except FrostlineError as err:
        fail_with(err, as_json)
    if exists:
        fail_with(DefinitionError(
            f"run {run_id!r} already exists; an authored script is a run's first attempt. "
            f"Pick a new run id, or repair it with `frostline repair {run_id} --model ...`",
            run_id=run_id), as_json, EXIT_USAGE)


def _execute(store: Any, run_id: str, source: str | None, args: Any, envelope: Any,
             runner: Any, registry: Any) -> Any:
    from frostline.runtime.execute import execute

    assert source is not None
    return execute(store, run_id, source, args=args, envelope=envelope, providers=registry,
                   runner=runner, catalog=registry.catalog)


def _event(spec: str, result: AuthorResult) -> dict[str, Any]:
    return {"model": spec, "accepted": result.accepted is not None,
            "rewrites": [{"n": d.n, "ok": d.ok, "reason": d.reason,
                          "rules": sorted({str(v["rule"]) for v in d.violations}),
                          "wall_s": d.wall_s} for d in result.rewrites],
            "usage": result.usage_total}


def _write(out_path: str | None, result: AuthorResult) -> None:
    if result.accepted is not None and out_path is not None:
        Path(out_path).write_text(result.accepted, encoding="utf-8")


def _report(as_json: bool, data: dict[str, Any], result: AuthorResult,
            outcomes: list[Any]) -> None:
    if as_json:
        emit_json(data)
        return
    out = console()
    table = Table(title="drafts")
    for col in ("#", "verdict", "reason", "tokens", "wall s"):
        table.add_column(col)
    for d in result.rewrites:
        table.add_row(str(d.n), "[green]accepted[/]" if d.ok else "[red]refused[/]",
                      text(d.reason), str(d.usage.get("total_tokens", "-")),
                      "-" if d.wall_s is None else f"{d.wall_s:.2f}")
    out.print(table)
    if result.accepted is None:
        out.print(f"[red]no draft was accepted[/] in {len(result.rewrites)} draft(s)")
        return
    out.print(Syntax(result.accepted, "python", line_numbers=True))
    for o in outcomes:
        out.print(f"attempt {o.attempt}: [bold]{text(o.status)}[/] (replayed {o.replayed}, "
                  f"executed {o.executed}, ${o.spend_usd:.4f})")
    for r in data.get("repairs", []):
        verdict = "accepted" if r["accepted"] is not None else "no candidate"
        out.print(f"repair: {verdict} after {len(r['rewrites'])} rewrite(s)")


__all__ = ["author_command", "do_command"]
