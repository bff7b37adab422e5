"""The A/B run's journal: what a run is and every job it finished, so a stopped run resumes.

`journal.jsonl` in the results folder; its first line says what the run is (the task ids in
order, the arms, the fault plan with its seed, the model, the solver and the task time limit),
each further line one finished job (arm, task, its outcome, and the run's wall time when it
finished, summed over the run's sessions). Each line is appended and flushed to disk before the
driver goes on, so a driver killed at any instant (SIGKILL included) leaves every finished job
on disk, at worst with a torn last line, which is ignored. Starting the same run again in the
same folder runs only the jobs the journal does not hold; a journal of another run is refused
with what differs.

    {"journal": 1, "run": {"tasks": [...], "arms": [...], "faults": {...}, ...}}
    {"arm": "arm4", "task": "t-1", "outcome": {...TaskOutcome...}, "wall_s": 12.5}
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frostline.coding.interface import Instruments, TaskOutcome
from frostline.errors import DefinitionError

__all__ = ["JOURNAL_FILE", "Journal", "outcome_from_dict"]

JOURNAL_FILE = "journal.jsonl"


def outcome_from_dict(data: Mapping[str, Any]) -> TaskOutcome:
    """The TaskOutcome `TaskOutcome.to_dict` wrote."""
    return TaskOutcome(str(data["task_id"]), str(data["arm"]), str(data["status"]),
                       str(data.get("reason", "")), Instruments(**data.get("instruments", {})),
                       dict(data.get("details", {})))


class Journal:
    """The journal of the run `identity` under `folder` (created, or read back to resume).

    Raises:
        DefinitionError: the folder's journal is of another run (`reason`
            ``journal_mismatch``, with the fields that differ).
    """

    def __init__(self, folder: Path, identity: Mapping[str, Any]) -> None:
        self.path = folder / JOURNAL_FILE
        self.identity = json.loads(json.dumps(dict(identity)))  # as it reads back
        self.done: dict[tuple[str, str], TaskOutcome] = {}
        self.wall_s = 0.0  # wall time of the sessions before this one, up to their last job
        self.sessions = 1
        if self.path.is_file():
            self._read()
        else:
            folder.mkdir(parents=True, exist_ok=True)
            self._append({"journal": 1, "run": self.identity})

    def _read(self) -> None:
        lines = self.path.read_bytes().split(b"\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            head = {}
        theirs = head.get("run") if isinstance(head, dict) else None
        if theirs != self.identity:
            differ = sorted(k for k in {*self.identity, *(theirs or {})}
                            if (theirs or {}).get(k) != self.identity.get(k))
            raise DefinitionError(
                f"{self.path.parent} holds another A/B run (it differs in {', '.join(differ)}); "
                "run the same command as before to resume it, or pass another --out",
                reason="journal_mismatch", differ=differ, path=str(self.path))
        last = 1  # the session that wrote the header
        for raw in lines[1:]:
            try:
                row = json.loads(raw)
            except ValueError:
                continue  # the torn last line of a killed driver
            if "outcome" in row:
                self.done[(row["arm"], row["task"])] = outcome_from_dict(row["outcome"])
                self.wall_s = max(self.wall_s, float(row.get("wall_s", 0.0)))
            elif "session" in row:
                last = max(last, int(row["session"]))
        self.sessions = last + 1
        if lines and lines[-1].strip():  # a torn last line: end it so appends start clean
            with open(self.path, "ab") as fh:
                fh.write(b"\n")
        self._append({"session": self.sessions, "resumed_jobs": len(self.done)})

    def _append(self, row: Mapping[str, Any]) -> None:
        data = (json.dumps(row, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def record(self, arm: str, task: str, outcome: TaskOutcome, wall_s: float) -> None:
        """One finished job, with the run's wall time so far (this session's plus earlier)."""
        self.done[(arm, task)] = outcome
        self._append({"arm": arm, "task": task, "outcome": outcome.to_dict(),
                      "wall_s": round(wall_s, 3)})
