"""The held-out split: chosen by package, sealed before any task exists, checked before use.

The split is decided before any task exists, by package: either the held-out packages pinned
in `heldout.HELDOUT` (sealed by their hash when they were pinned; what `frostline tasks build`
uses) or, for a folder built from other packages, a fixed rule over package names alone (a hash
of each name; the first `round(n * fraction)` are held out), so nobody chooses it after seeing
tasks or results. The
build writes `seal.json` with the split and its SHA-256 before it generates a single task;
when the tasks exist it adds the digest of the held-out rows. `load_tasks` refuses a held-out
split whose seal is missing, altered, incomplete, or does not match the rows of tasks.jsonl.

seal.json::

    {"format": 1, "sealed_at": "...", "split": {...}, "split_sha256": "...",
     "tasks": {"heldout_sha256": "...", "heldout": N, "tuning": M}}    # added when built
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from frostline.coding.interface import Task
from frostline.coding.tasks.errors import TaskSetError

__all__ = ["HELDOUT_FRACTION", "SEAL_FILE", "SPLITS", "TASKS_FILE", "choose_heldout",
           "digest", "load_tasks", "read_seal", "rows_digest", "seal_split", "seal_tasks"]

SEAL_FILE = "seal.json"
TASKS_FILE = "tasks.jsonl"
SPLITS = ("heldout", "tuning", "all")
HELDOUT_FRACTION = 0.4
_RULE = "sha256('frostline-split:' + name), ascending; the first round(n * fraction) held out"


def digest(data: Any) -> str:
    """SHA-256 of canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def choose_heldout(packages: Iterable[str], fraction: float = HELDOUT_FRACTION) -> list[str]:
    """The held-out packages: at least one, and at least one left for tuning when n > 1."""
    names = sorted(set(packages),
                   key=lambda n: hashlib.sha256(f"frostline-split:{n}".encode()).hexdigest())
    if not names:
        return []
    k = max(1, round(len(names) * fraction))
    if len(names) > 1:
        k = min(k, len(names) - 1)
    return sorted(names[:k])


def _write(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def seal_split(out: Path, pins: Mapping[str, str], fraction: float = HELDOUT_FRACTION, *,
               heldout: Sequence[str] | None = None, rule: str = "",
               extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write seal.json for the packages of `pins` (name → sha256) and return the split. An
    existing seal for the same split is kept as it is (a build that resumes); one for another
    split is an error.

    `heldout`: the held-out packages chosen beforehand (those of `pins` among them; `rule` says
    where they come from); default: `choose_heldout` under `fraction`. `extra`: more fields the
    split is sealed with (the population, a released pair's two archives)."""
    if heldout is None:
        held, how = choose_heldout(pins, fraction), _RULE
        split: dict[str, Any] = {"rule": how, "fraction": fraction}
    else:
        held = sorted(set(heldout) & set(pins))
        split = {"rule": rule or "the held-out packages pinned beforehand"}
    split.update({"pins": dict(sorted(pins.items())), "heldout": held,
                  "tuning": sorted(set(pins) - set(held)), **dict(extra or {})})
    out.mkdir(parents=True, exist_ok=True)
    path = out / SEAL_FILE
    if path.exists():
        seal = read_seal(out)
        if seal.get("split_sha256") != digest(split):
            raise TaskSetError(f"{path} seals another split (other packages, versions or "
                               "fraction); build into a new --out folder", path=str(path))
        return split
    _write(path, {"format": 1, "sealed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "split": split, "split_sha256": digest(split)})
    return split


def rows_digest(rows: Sequence[Mapping[str, Any]]) -> str:
    return digest(sorted(rows, key=lambda r: str(r["task_id"])))


def seal_tasks(out: Path, rows: Sequence[Mapping[str, Any]], *, finished: bool = True) -> None:
    """Record the held-out rows' digest in the seal, once every held-out package is built.

    A build seals its held-out rows as soon as they are all built (`finished=False` while
    tuning packages remain), so the held-out split can be measured before the tuning split
    exists; the digest never changes afterwards, since held-out packages are built first."""
    seal = read_seal(out)
    held = [r for r in rows if r["split"] == "heldout"]
    seal["tasks"] = {"heldout_sha256": rows_digest(held), "heldout": len(held),
                     "tuning": len(rows) - len(held), "finished": finished}
    _write(out / SEAL_FILE, seal)


def read_seal(out: Path) -> dict[str, Any]:
    path = out / SEAL_FILE
    try:
        seal = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskSetError(f"{out} has no {SEAL_FILE}: it was not built by `frostline tasks "
                           "build`, or the build never started", path=str(path)) from None
    except (OSError, ValueError) as exc:
        raise TaskSetError(f"{path} cannot be read as JSON: {exc}", path=str(path)) from None
    if not isinstance(seal, dict) or not isinstance(seal.get("split"), dict):
        raise TaskSetError(f"{path} is not a seal", path=str(path))
    return seal


def _read_rows(out: Path) -> list[dict[str, Any]]:
    path = out / TASKS_FILE
    if not out.is_dir():
        raise TaskSetError(f"tasks folder {str(out)!r} does not exist; build one with "
                           "`frostline tasks build --out DIR`", path=str(out))
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskSetError(f"{out} has no {TASKS_FILE}; the build has not finished",
                           path=str(path)) from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
                Task.from_dict(row)
            except (ValueError, TypeError, KeyError) as exc:
                raise TaskSetError(f"{path}:{number} is not a task: {exc}", path=str(path),
                                   line=number) from None
            rows.append(row)
    return rows


def _verify(out: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    seal = read_seal(out)
    where = str(out / SEAL_FILE)
    if seal.get("split_sha256") != digest(seal["split"]):
        raise TaskSetError(f"the seal {where} is broken: its split no longer hashes to the "
                           "recorded split_sha256", path=where, reason="split_altered")
    heldout = set(seal["split"].get("heldout", ()))
    held = [r for r in rows if r["split"] == "heldout"]
    wrong = sorted({str(r["package"]) for r in rows if (r["split"] == "heldout")
                    != (r["package"] in heldout)})
    if wrong:
        raise TaskSetError(f"the seal {where} does not match tasks.jsonl: rows of {wrong} are in "
                           "the wrong split", path=where, reason="split_mismatch", packages=wrong)
    recorded = seal.get("tasks", {}).get("heldout_sha256")
    if recorded is None:
        raise TaskSetError(f"the seal {where} has no digest of held-out tasks: the build did "
                           "not finish", path=where, reason="unfinished")
    if recorded != rows_digest(held):
        raise TaskSetError(f"the seal {where} is broken: the held-out rows of tasks.jsonl were "
                           "changed after sealing", path=where, reason="tasks_altered")


def load_tasks(out: Path, split: str = "heldout") -> list[Task]:
    """The tasks of `split` in file order; a held-out split only under a matching seal.

    Raises:
        TaskSetError: a missing folder or file, a malformed row, an unknown split, a broken seal.
    """
    if split not in SPLITS:
        raise TaskSetError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}",
                           split=split)
    rows = _read_rows(out)
    if split in ("heldout", "all"):
        _verify(out, rows)
    if split in ("tuning", "all") and not read_seal(out).get("tasks", {}).get("finished", True):
        raise TaskSetError(f"{out} is still being built: its held-out split is sealed but the "
                           f"tuning packages are not all built; finish the build (run `frostline "
                           f"tasks build` again with the same options) or use --split heldout",
                           path=str(out), reason="unfinished")
    return [Task.from_dict(r) for r in rows if split == "all" or r["split"] == split]
