"""A sealed task folder of synthetic tasks for the A/B driver's tests (no package behind it)."""

from __future__ import annotations

import json
from pathlib import Path

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks.split import TASKS_FILE, seal_split, seal_tasks

PINS = {"alpha": "a" * 64, "beta": "b" * 64, "gamma": "c" * 64}


def sealed_tasks(out: Path, per_package: int = 8, extra_ids: tuple[str, ...] = ()) -> Path:
    """A folder as `frostline tasks build` leaves it, with synthetic rows; `extra_ids` are
    appended to the first held-out package's tasks (to script failures)."""
    split = seal_split(out, PINS)
    rows = []
    for package in sorted(PINS):
        ids = [f"{package}-{n}" for n in range(per_package)]
        if package == split["heldout"][0]:
            ids += [f"{package}{x}" for x in extra_ids]
        for tid in ids:
            rows.append(Task(task_id=tid, package=package, version="1", sha256=PINS[package],
                             source_dir="/nowhere",
                             mutation=Mutation("m.py", 3, "compare", "a < b", "a <= b"),
                             visible_failing=("t::a",), hidden=("t::b",),
                             split="heldout" if package in split["heldout"] else "tuning"
                             ).to_dict())
    (out / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    seal_tasks(out, rows)
    return out
