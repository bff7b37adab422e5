"""`frostline tasks …`: build the held-out task population of the coding workflow.

Exit codes (the table of `frostline.cli.common`): 0 built; 1 an archive cannot be fetched or
does not match its pin; 2 bad input (an unknown package, a folder sealed for another split);
8 the sandbox cannot be established here.
"""

from __future__ import annotations

import click
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    Group,
    console,
    emit_json,
    fail,
    fail_with,
    text,
)
from frostline.errors import FrostlineError


@click.group("tasks", cls=Group)
def tasks() -> None:
    """Task populations for the coding workflow's A/B measurement."""


def _names(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


@tasks.command("build", cls=Command)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder for tasks.jsonl, seal.json and build.json.")
@click.option("--packages", "packages", multiple=True, metavar="NAME[,NAME…]",
              help="Pinned packages to build from (default: all pinned ones).")
@click.option("--per-package", "per_package", type=int, default=40, show_default=True,
              help="At most this many tasks per package.")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="Sandboxed suite runs at once.")
@click.option("--cache", "cache", default=None, metavar="DIR",
              help="Archive and tree cache (default: $FROSTLINE_CACHE, else ~/.cache/frostline).")
@click.option("--json", "as_json", is_flag=True, help="Print build.json's figures as JSON.")
def build_cmd(out: str, packages: tuple[str, ...], per_package: int, jobs: int,
              cache: str | None, as_json: bool) -> None:
    """Download the pinned sdists, check their suites green in the sandbox, and keep the
    single-site mutants that the full suite kills the same way under three hash seeds."""
    from pathlib import Path

    from frostline.coding.tasks.build import BuildOptions, build
    from frostline.coding.tasks.errors import FetchError, TaskSetError
    from frostline.coding.tasks.fetch import default_cache
    from frostline.coding.tasks.pins import PACKAGES

    names = _names(packages) or tuple(PACKAGES)
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        fail(f"unknown package(s) {', '.join(unknown)}; pinned: {', '.join(PACKAGES)}",
             EXIT_USAGE, as_json, unknown=unknown)
    if per_package < 1 or jobs < 1:
        fail("--per-package and --jobs must be at least 1", EXIT_USAGE, as_json)
    err = console(stderr=True)
    options = BuildOptions(out=Path(out), cache=default_cache(cache), packages=names,
                           per_package=per_package, jobs=jobs)
    try:
        summary = build(options, lambda line: err.print(text(line)))
    except TaskSetError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    except FetchError as exc:
        fail_with(exc, as_json, EXIT_FAILED)
    except FrostlineError as exc:  # the sandbox: its own row of the table
        fail_with(exc, as_json)
    if as_json:
        emit_json(summary)
        raise SystemExit(EXIT_OK)
    table = Table(title=text(f"{summary['tasks']} tasks ({summary['heldout']} held out) in "
                             f"{summary['wall_s']} s"))
    for column in ("package", "split", "green", "tests", "candidates", "tried", "kill rate",
                   "kept", "wall s"):
        table.add_column(column)
    for p in summary["packages"]:
        table.add_row(text(f"{p['package']} {p['version']}"), p["split"],
                      "yes" if p["green"] else text(f"no: {p['reason']}"), str(p["tests"]),
                      str(p["candidates"]), str(p["tried"]), f"{p['kill_rate']:.0%}",
                      str(p["kept"]), str(p["wall_s"]))
    out_console = console()
    out_console.print(table)
    out_console.print(text(summary["note"]))
