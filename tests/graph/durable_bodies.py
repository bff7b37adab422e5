"""Bodies and tools for durable graph runs, importable in-process and by a child process.

Every tool appends one JSON line to the file named by $FROSTLINE_TOOL_LOG when it really runs,
so a test counts executions from the tools' own append-only log, not from frostline's records.
`sandbox.execute` (the EXECUTE state's tool) first waits until the file named by
$FROSTLINE_TOOL_BARRIER exists, when that variable is set: a test can hold a run there.
$FROSTLINE_BLOCKING_EFFECT=1 makes that tool side-effecting (it is read-only otherwise).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from graph_helpers import scripted_bodies

from frostline.graph.durable import GraphTool
from frostline.graph.engine import StateContext

LOG_ENV = "FROSTLINE_TOOL_LOG"
BARRIER_ENV = "FROSTLINE_TOOL_BARRIER"
EFFECT_ENV = "FROSTLINE_BLOCKING_EFFECT"

# state -> the tool calls its body makes, in order (all on the state's allowlist)
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "RECONNAISSANCE": [("repo.manifest", {"root": "repo"}), ("code.graph", {"file": "a.py"})],
    "LOCALIZE": [("code.graph", {"file": "a.py", "depth": 2})],
    "GENERATE": [("patch.generate", {"file": "a.py"})],
    "EDIT": [("edit.apply", {"diff": "d1"})],
    "EXECUTE": [("sandbox.execute", {"cmd": "python -m pytest"})],
    "TEST": [("test.run", {"suite": "unit"})],
    "MEMORIZE": [("memory.write", {"key": "k"})],
}


def log_path() -> Path:
    return Path(os.environ[LOG_ENV])


def executions() -> list[dict[str, Any]]:
    """The tool log: one entry per real execution."""
    p = log_path()
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line]


def counting(name: str) -> Callable[[Mapping[str, Any]], Any]:
    def run(payload: Mapping[str, Any]) -> Any:
        if name == "sandbox.execute" and os.environ.get(BARRIER_ENV):
            barrier = Path(os.environ[BARRIER_ENV])
            while not barrier.exists():  # held here until the test releases (or kills) us
                time.sleep(0.005)
        with log_path().open("a") as f:
            f.write(json.dumps({"tool": name, "payload": dict(payload), "pid": os.getpid()}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return {"tool": name, "ok": True, "echo": dict(payload)}
    return run


def tools() -> dict[str, Any]:
    names = {t for calls in CALLS.values() for t, _ in calls}
    out: dict[str, Any] = {n: counting(n) for n in sorted(names)}
    out["sandbox.execute"] = GraphTool(counting("sandbox.execute"),
                                       side_effecting=os.environ.get(EFFECT_ENV) == "1")
    return out


def with_calls(calls: Mapping[str, list[tuple[str, dict[str, Any]]]],
               overrides: Mapping[str, list[Any]] | None = None) -> dict[str, Any]:
    """Scripted bodies (happy path unless `overrides`) whose states first make `calls`."""
    base = scripted_bodies(overrides)

    def wrap(state: str, body: Callable[[StateContext], Any]) -> Callable[[StateContext], Any]:
        def run(ctx: StateContext) -> Any:
            for tool, payload in calls.get(state, []):
                result = ctx.tool(tool, payload)
                assert result["echo"] == payload
            return body(ctx)
        return run

    return {s: wrap(s, b) for s, b in base.items()}


def build() -> dict[str, Any]:
    return {"bodies": with_calls(CALLS), "tools": tools()}
