"""The coding graph as a durable graph run: crash it, start it again, and it carries on.

Every tool call goes through the broker under its structural identity
(``graph/<STATE>/v<visit>@:<ordinal>``), so a run started again with the same run id replays its
committed calls — the model's samples in `patch.generate` included, which are never asked for
again — and executes only what had not committed.

The workspace is part of the durable state: a run's tree is its base snapshot plus its committed
patches. Each attempt lays the tree anew from the base snapshot, and the EDIT body
re-materialises the patch of each `edit.apply` call as the replay reaches it (executed or
replayed alike; applying a patch is idempotent), so when the first call that did not commit runs
again, the tree is exactly what it was when that call first ran.

Effects: `edit.apply` and `memory.write` change files and are side-effecting, with idempotency
keys honoured (applying the same patch or writing the same memory key twice leaves the same
state), so an attempt that crashed while one of them was in flight may simply run it again. The
other tools are read-only: a crashed, uncommitted test run is run again.
"""

from __future__ import annotations

import time
from pathlib import Path

from frostline.coding.interface import Arm, FaultPlan, Task, TaskOutcome
from frostline.coding.setup import SolveSettings, prepare
from frostline.coding.solve import outcome_of
from frostline.coding.variants import graph_for
from frostline.errors import NotAGraphArm
from frostline.graph.durable import DurableOutcome, GraphTool, run_durable
from frostline.repair.completion import ChatClient
from frostline.store.base import Store

#: Tools that change the workspace or the memory file (idempotent by construction).
EFFECTS = frozenset({"edit.apply", "memory.write"})


def solve_durable(store: Store, run_id: str, task: Task, arm: Arm, faults: FaultPlan, *,
                  model: ChatClient | None = None, workdir: Path | str,
                  settings: SolveSettings | None = None
                  ) -> tuple[DurableOutcome, TaskOutcome | None]:
    """Run (or resume) `task` under `arm` as durable graph run `run_id` in `store`.

    Returns the attempt's DurableOutcome and, when the graph finished, the TaskOutcome (the
    hidden tests decide resolution, as in `solve`). Use the same `workdir` to resume: its base
    snapshot is reused and its tree re-materialised.

    Raises:
        FrostlineError: the arm has no graph (the free agent) or `run_id` is another run's.
    """
    started = time.monotonic()
    settings = settings or SolveSettings()
    if arm.free_agent or not arm.single_l:
        raise NotAGraphArm(f"{arm.name} is not a graph arm; run it with solve()", arm=arm.name)
    setup = prepare(task, arm, faults, model, Path(workdir), settings)
    setup.bodies.on_applied = setup.workspace.materialise
    tools = {name: GraphTool(fn, side_effecting=name in EFFECTS,
                             idempotency_keys=name in EFFECTS)
             for name, fn in setup.tools.registry().items()}
    outcome = run_durable(store, run_id, graph_for(arm, settings.guards), setup.bodies.bodies(), tools,
                          sinks=[setup.observer], max_steps=settings.max_steps)
    if outcome.result is None:
        return outcome, None
    return outcome, outcome_of(setup, outcome.result, started, settings,
                               {"run_id": run_id, "attempt": outcome.attempt,
                                "executed": outcome.executed, "replayed": outcome.replayed})
