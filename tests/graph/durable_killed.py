"""A child process for the SIGKILL tests: a durable graph run that kills itself with SIGKILL.

    python durable_killed.py STORE_URL RUN_ID KILL_AT_EVENT KILL_AFTER_EFFECT

It runs the canonical graph with the bodies and tools of `durable_bodies` (every tool
side-effecting), and sends itself SIGKILL either when the ledger appends event number
KILL_AT_EVENT (the event is then in the ledger's buffer, and whatever the store was writing is
in flight), or right after the KILL_AFTER_EFFECT-th tool execution has had its effect (before
the tool returns). -1 disables a trigger. The tools log each real execution to
$FROSTLINE_TOOL_LOG, which outlives the process.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from durable_bodies import CALLS, tools, with_calls

from frostline.graph.durable import GraphTool, run_durable
from frostline.graph.graph import load_graph
from frostline.graph.ledger import CallbackSink, LedgerEvent
from frostline.store import open_store


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def side_effecting(kill_after_effect: int) -> dict[str, GraphTool]:
    """Every tool side-effecting; the kill_after_effect-th execution dies after its effect."""
    executed = [0]

    def wrap(fn: Callable[[Mapping[str, Any]], Any]) -> GraphTool:
        def run(payload: Mapping[str, Any]) -> Any:
            result = fn(payload)  # the effect: logged durably by the tool itself
            if executed[0] == kill_after_effect:
                die()
            executed[0] += 1
            return result
        return GraphTool(run, side_effecting=True)

    return {name: wrap(t.fn if isinstance(t, GraphTool) else t) for name, t in tools().items()}


def registry() -> dict[str, GraphTool]:
    """The tools a resume uses: the same, side-effecting, never killing."""
    return side_effecting(-1)


def main(url: str, run_id: str, kill_at_event: int, kill_after_effect: int) -> int:
    def on_event(event: LedgerEvent) -> None:
        if event.seq == kill_at_event:
            die()

    with open_store(url) as store:
        out = run_durable(store, run_id, load_graph("canonical"), with_calls(CALLS),
                          side_effecting(kill_after_effect), sinks=[CallbackSink(on_event)])
    print(out.status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
