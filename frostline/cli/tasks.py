"""`frostline tasks …`: build the task populations of the coding workflow.

`--bugs injected` (the default): single-site mutants injected into pinned packages, an upper
bound. `--bugs released`: bugs fixed upstream between consecutive pinned releases.
`frostline tasks search` screens a package's releases for such pairs (design time).

Exit codes (the table of `frostline.cli.common`): 0 built; 1 an archive cannot be fetched or
does not match its pin; 2 bad input (an unknown package, a folder sealed for another split);
8 the sandbox cannot be established here.
"""

from __future__ import annotations

from typing import Any

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
@click.option("--bugs", "bugs", type=click.Choice(["injected", "released"]),
              default="injected", show_default=True,
              help="injected: single-site mutants of the pinned packages (an upper bound); "
                   "released: bugs fixed upstream between consecutive pinned releases.")
@click.option("--json", "as_json", is_flag=True, help="Print build.json's figures as JSON.")
def build_cmd(out: str, packages: tuple[str, ...], per_package: int, jobs: int,
              cache: str | None, bugs: str, as_json: bool) -> None:
    """Download the pinned sdists and check their suites in the sandbox; keep the single-site
    mutants the full suite kills the same way under three hash seeds (--bugs injected), or the
    release pairs whose new tests fail on N and pass on N+1 (--bugs released)."""
    from pathlib import Path

    from frostline.coding.tasks.build import BuildOptions, build
    from frostline.coding.tasks.errors import FetchError, TaskSetError
    from frostline.coding.tasks.fetch import default_cache
    from frostline.coding.tasks.pins import PACKAGES
    from frostline.coding.tasks.release_pins import RELEASE_PAIRS
    from frostline.coding.tasks.released import ReleasedOptions, build_released

    known = tuple(PACKAGES) if bugs == "injected" else tuple(
        dict.fromkeys(p.name for p in RELEASE_PAIRS))
    names = _names(packages) or known
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"unknown package(s) {', '.join(unknown)} for --bugs {bugs}; pinned: "
             f"{', '.join(known)}", EXIT_USAGE, as_json, unknown=unknown)
    if per_package < 1 or jobs < 1:
        fail("--per-package and --jobs must be at least 1", EXIT_USAGE, as_json)
    err = console(stderr=True)
    try:
        if bugs == "released":
            summary = build_released(ReleasedOptions(
                out=Path(out), cache=default_cache(cache),
                pairs=tuple(p for p in RELEASE_PAIRS if p.name in names)),
                lambda line: err.print(text(line)))
        else:
            summary = build(BuildOptions(out=Path(out), cache=default_cache(cache),
                                         packages=names, per_package=per_package, jobs=jobs),
                            lambda line: err.print(text(line)))
    except TaskSetError as exc:
        fail_with(exc, as_json, EXIT_USAGE)
    except FetchError as exc:
        fail_with(exc, as_json, EXIT_FAILED)
    except FrostlineError as exc:  # the sandbox: its own row of the table
        fail_with(exc, as_json)
    if as_json:
        emit_json(summary)
        raise SystemExit(EXIT_OK)
    if bugs == "released":
        _released_table(summary)
        return
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


def _released_table(summary: dict[str, Any]) -> None:
    table = Table(title=text(f"{summary['tasks']} released-bug tasks ({summary['heldout']} held "
                             f"out) from {summary['pairs_examined']} release pairs in "
                             f"{summary['wall_s']} s"))
    for column in ("pair", "split", "fix", "verdict", "wall s"):
        table.add_column(column)
    for p in summary["pairs"]:
        table.add_row(text(p["pair"]), p["split"],
                      text(f"{p['fix_file']} ({p['fix_lines']} lines)" if p["fix_file"] else ""),
                      text(p["verdict"]), str(p["wall_s"]))
    out_console = console()
    out_console.print(table)
    out_console.print(text(summary["note"]))


@tasks.command("search", cls=Command)
@click.option("--packages", "packages", multiple=True, required=True, metavar="NAME[,NAME…]",
              help="Packages on the index whose releases are compared.")
@click.option("--last", type=int, default=25, show_default=True,
              help="Compare the consecutive pairs among this many latest final releases.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="JSONL file: one record per pair compared, kept or not, with the reason.")
@click.option("--cache", "cache", default=None, metavar="DIR",
              help="Archive and tree cache (default: $FROSTLINE_CACHE, else ~/.cache/frostline).")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def search_cmd(packages: tuple[str, ...], last: int, out: str, cache: str | None,
               as_json: bool) -> None:
    """Screen consecutive releases for a one-file fix of a few lines with a changed test (the
    search the pinned release pairs came from; the build then runs both trees' suites)."""
    import json
    from collections import Counter
    from pathlib import Path

    from frostline.coding.tasks.errors import FetchError
    from frostline.coding.tasks.fetch import default_cache
    from frostline.coding.tasks.search import search

    if last < 2:
        fail("--last must be at least 2 (a pair needs two releases)", EXIT_USAGE, as_json)
    err = console(stderr=True)
    records = []
    try:
        for name in _names(packages):
            records += search(name, default_cache(cache), last,
                              lambda line: err.print(text(line)))
    except FetchError as exc:
        fail_with(exc, as_json, EXIT_FAILED)
    Path(out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records),
                         encoding="utf-8")
    counts = {"pairs": len(records),
              "screened": sum(r["verdict"] == "screened" for r in records),
              "verdicts": dict(Counter(str(r["verdict"]).split(":")[0]
                                       for r in records).most_common())}
    if as_json:
        emit_json(counts)
        raise SystemExit(EXIT_OK)
    console().print(text(f"{counts['screened']} of {counts['pairs']} pairs screened in; "
                         f"reasons: {counts['verdicts']} (written to {out})"))
