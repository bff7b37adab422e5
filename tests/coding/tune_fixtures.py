"""A sealed tasks folder of real textkit tasks (coding_repo) for the graph-tuning tests.

Tuning rows are package "textkit"; held-out rows are package "alpha" (the split rule holds it
out), built over the same textkit source with other injected bugs. Every row is a real task:
its workspace is the textkit tree with the bug injected, its tests run under bubblewrap.
"""

from __future__ import annotations

import json
from pathlib import Path

from coding_repo import make_task

from frostline.coding.tasks.split import TASKS_FILE, seal_split, seal_tasks

T = "tests/test_core.py::"
#: bug -> (visible failing tests, hidden tests)
BUGS = {"clamp_gt": ((f"{T}test_clamp_inside",), (f"{T}test_clamp_above", f"{T}test_clamp_edges")),
        "clamp_lt": ((f"{T}test_clamp_below",), (f"{T}test_clamp_edges",)),
        "palindrome_not": ((f"{T}test_palindrome",), ()),
        "chunk_slice": ((f"{T}test_chunk",), ())}
PINS = {"textkit": "0" * 64, "alpha": "1" * 64}


def tasks_folder(root: Path, tuning: tuple[str, ...] = ("clamp_gt", "clamp_lt"),
                 heldout: tuple[str, ...] = ("palindrome_not",)) -> Path:
    """A folder as `frostline tasks build` leaves it: seal.json and tasks.jsonl."""
    out = root / "tasks"
    out.mkdir(parents=True)
    split = seal_split(out, PINS)
    assert split["heldout"] == ["alpha"], split  # the name rule holds "alpha" out
    rows = []
    for package, bugs, name in (("textkit", tuning, "tuning"), ("alpha", heldout, "heldout")):
        for bug in bugs:
            visible, hidden = BUGS[bug]
            task = make_task(root / "src", bug, visible=visible, hidden=hidden,
                             task_id=f"{package}-{bug}")
            row = task.to_dict()
            row.update(package=package, sha256=PINS[package], split=name)
            rows.append(row)
    (out / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    seal_tasks(out, rows)
    return out
