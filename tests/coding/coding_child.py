"""A child process that runs (or resumes) the coding graph as a durable run, for the crash test.

    python coding_child.py STORE_URL RUN_ID TASK_JSON WORKDIR MODE OUT

MODE ``block``: `test.run` never returns (the parent SIGKILLs the process while it is pending).
MODE ``record``: `test.run` first writes the text of the task's mutated file, as the tool sees
it, to OUT.snapshot, then runs; at the end the TaskOutcome is written to OUT as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import frostline.coding.tools as tools_module
from frostline.coding.arms import arm
from frostline.coding.interface import FaultPlan, Task
from frostline.coding.resumable import solve_durable
from frostline.store import open_store


def main(store_url: str, run_id: str, task_json: str, workdir: str, mode: str, out: str) -> None:
    task = Task.from_dict(json.loads(Path(task_json).read_text()))
    original = tools_module.CodingTools.test_run

    def test_run(self: tools_module.CodingTools, payload: Any) -> Any:
        if mode == "block":
            while True:
                time.sleep(1)
        snapshot = Path(out + ".snapshot")
        if not snapshot.exists():
            snapshot.write_text((self.ws.tree / task.mutation.file).read_text())
        return original(self, payload)

    tools_module.CodingTools.test_run = test_run  # type: ignore[method-assign]
    with open_store(store_url) as store:
        durable, outcome = solve_durable(store, run_id, task, arm("arm4"), FaultPlan(),
                                         workdir=workdir)
    Path(out).write_text(json.dumps({"durable": durable.to_dict()["status"],
                                     "executed": durable.executed, "replayed": durable.replayed,
                                     "outcome": outcome.to_dict() if outcome else None}))


if __name__ == "__main__":
    main(*sys.argv[1:7])
