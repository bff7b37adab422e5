"""What a store holds, from the command line: `frostline runs` lists the runs (of every
principal, or of one) and `frostline artifacts RUN` lists and exports the artifacts a run
produced, i.e. the content-addressed bytes its committed slots refer to.

Both only read: neither creates a store. Exit codes: the table of `frostline.cli.common`
(0 ok, 1 an artifact could not be written, 2 usage or an unknown store or run, 7 the store
cannot be reached).
"""

from __future__ import annotations

import mimetypes
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from frostline.cli.common import (
    EXIT_FAILED,
    Command,
    console,
    emit_json,
    fail,
    guarded,
    json_option,
    opened_run,
    opened_store,
    store_option,
    text,
)
from frostline.store import Store

_REF = re.compile(r"sha256:[0-9a-f]{64}")


# ---------------------------------------------------------------------------------------- runs
@click.command("runs", cls=Command)
@click.option("--owner", default=None, metavar="NAME",
              help="Only the runs of principal NAME (default: every principal's).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 100_000),
              help="At most this many runs, newest first.")
@store_option
@json_option
def runs_command(owner: str | None, limit: int, store_url: str | None, as_json: bool) -> None:
    """List the runs in the store, newest first: key, owner, kind and status."""
    with opened_store(store_url, as_json, create=False) as store:
        runs = guarded(as_json, lambda: store.list_runs(owner=owner, limit=limit))
    rows: list[dict[str, Any]] = [
        {"run_id": r.run_id, "name": r.name, "owner": r.owner, "kind": r.kind,
         "status": r.status, "created_at": r.created_at} for r in runs]
    if as_json:
        emit_json({"runs": rows})
        return
    out = console()
    if not rows:
        out.print("no runs" + (f" of {text(owner)}" if owner else "") + " in this store")
        return
    table = Table(title="runs (newest first)", title_justify="left")
    for col in ("run", "owner", "kind", "status", "created"):
        table.add_column(col)
    for r in rows:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["created_at"]))
        table.add_row(text(r["run_id"]), text(r["owner"] or "-"), text(r["kind"]),
                      text(r["status"]), created)
    out.print(table)


# ----------------------------------------------------------------------------------- artifacts
def artifact_refs(value: Any) -> Iterator[str]:
    """Every artifact ref (`sha256:<64 hex>`) named anywhere in a JSON value."""
    if isinstance(value, str):
        if _REF.fullmatch(value):
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from artifact_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from artifact_refs(item)


def run_artifacts(store: Store, run_id: str) -> dict[str, list[str]]:
    """ref -> the committed identities whose results name it, in prefix order."""
    found: dict[str, list[str]] = {}
    for slot in store.list_slots(run_id):
        for ref in dict.fromkeys(artifact_refs(slot.result)):
            found.setdefault(ref, []).append(str(slot.identity))
    return found


def _file_name(ref: str, mime: str) -> str:
    extension = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
    return ref.removeprefix("sha256:") + extension


@click.command("artifacts", cls=Command)
@click.argument("run_id")
@click.option("-o", "--out", "out_dir", default=None,
              type=click.Path(file_okay=False, path_type=Path),
              help="Write each artifact to DIR (created when missing) as <sha256>.<ext>.")
@store_option
@json_option
def artifacts_command(run_id: str, out_dir: Path | None, store_url: str | None,
                      as_json: bool) -> None:
    """List the artifacts RUN_ID produced (named by its committed results); -o exports them."""
    with opened_run(store_url, run_id, as_json) as store:
        items = guarded(as_json, lambda: _collect(store, run_id, out_dir, as_json))
    if as_json:
        emit_json({"run_id": run_id, "artifacts": items,
                   "out_dir": str(out_dir) if out_dir is not None else None})
        return
    _print_artifacts(run_id, items, out_dir)


def _collect(store: Store, run_id: str, out_dir: Path | None,
             as_json: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ref, identities in run_artifacts(store, run_id).items():
        got = store.get_artifact(ref)
        item: dict[str, Any] = {"ref": ref, "identities": identities, "mime": None,
                                "bytes": None}
        if got is not None:
            data, mime = got
            item.update(mime=mime, bytes=len(data))
            if out_dir is not None:
                item["path"] = str(_write(out_dir, _file_name(ref, mime), data, as_json))
        items.append(item)
    return items


def _write(out_dir: Path, name: str, data: bytes, as_json: bool) -> Path:
    path = out_dir / name
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        fail(f"cannot write {str(path)!r}: {exc.strerror or exc}", EXIT_FAILED, as_json)
    return path


def _print_artifacts(run_id: str, items: list[dict[str, Any]], out_dir: Path | None) -> None:
    out = console()
    if not items:
        out.print(f"run {text(run_id)} has no artifacts in its committed results")
        return
    table = Table(title=text(f"artifacts of run {run_id}"), title_justify="left")
    for col in ("ref", "mime", "bytes", "identities", *(("file",) if out_dir else ())):
        table.add_column(col)
    for item in items:
        missing = item["mime"] is None
        row = [text(item["ref"]), "[red]missing from the store[/]" if missing
               else text(item["mime"]), "" if missing else str(item["bytes"]),
               text("\n".join(item["identities"]))]
        if out_dir is not None:
            row.append(text(item.get("path", "-")))
        table.add_row(*row)
    out.print(table)
    if out_dir is not None:
        written = sum(1 for item in items if "path" in item)
        out.print(f"{written} file(s) written to {text(out_dir)}")
