"""`solve`: one task under one arm, end to end, always returning a TaskOutcome.

    outcome = solve(task, arm("arm4"), FaultPlan(rate=0.1, seed=7), workdir=tmp)

The run lays the task's workspace (base snapshot with the bug injected), runs the arm's graph
(or the free agent) with the coding tools and bodies, then decides resolution by running the
task's hidden tests, which the workflow never saw, on the tree it submitted (an accepted run's,
or the free agent's when it declared itself done). Every instrument is read from counters and
the ledger. Bad input — a tree whose tests do not run, a bug that does not reproduce, a sandbox
that dies, a model that answers garbage — ends in TERMINAL_REJECT with the reason; nothing
raises out of `solve`.

`solve_durable` runs the same graph as a durable graph run in a store: every tool call goes
through the broker, and a run started again with the same run id after a crash replays its
committed calls (the model's included) and re-materialises its workspace from the committed
patches.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from frostline.coding.freeagent import run_free_agent
from frostline.coding.interface import Arm, FaultPlan, Instruments, Task, TaskOutcome
from frostline.coding.setup import (
    ACCEPT,
    NOT_RUN,
    REJECT,
    Setup,
    SolveSettings,
    final_check,
    prepare,
)
from frostline.coding.variants import graph_for
from frostline.errors import FrostlineError
from frostline.graph.allowlist import LocalToolRouter
from frostline.graph.engine import Engine, RunResult, TraversalStatus
from frostline.graph.graph import Graph
from frostline.graph.modelcheck import check
from frostline.repair.completion import ChatClient


def _reason(result: RunResult) -> str:
    """Why a run ended where it did: the termination edge's reason, then the last visit's
    failure, or the forward gates that did not hold there."""
    if result.status is TraversalStatus.ACCEPTED:
        return ""
    events = list(result.ledger.events)
    entered = max((i for i, e in enumerate(events) if e.kind == "state_entered"
                   and e.data["state"] not in ("TERMINAL_ACCEPT", "TERMINAL_REJECT")), default=0)
    last = events[entered:]
    failed = [e.data for e in last if e.kind == "state_failed"]
    if failed:
        why = f"{failed[-1]['state']}: {failed[-1]['reason']}"
    else:
        held_not = [p["predicate"] for e in last if e.kind == "gate"
                    and e.data["edge"]["kind"] == "forward" and e.data.get("gate")
                    for p in e.data["gate"]["predicates"] if not p["holds"]]
        state = events[entered].data["state"] if events else ""
        why = f"{state}: no forward gate held ({'; '.join(held_not[:4])})" if held_not else ""
    head = result.reason or result.status.value
    return f"{head}: {why}" if why else head


def _baseline(result_artifacts: Mapping[str, Any]) -> list[str]:
    loc = result_artifacts.get("LocalizationResult")
    return list(loc.value.get("failing_tests", ())) if loc is not None else []


def outcome_of(setup: Setup, result: RunResult, started: float,
               settings: SolveSettings, extra: Mapping[str, Any] | None = None) -> TaskOutcome:
    """The TaskOutcome of a finished graph run, with the hidden tests' verdict."""
    accepted = result.status is TraversalStatus.ACCEPTED
    resolved, slipped, note = final_check(setup, accepted, _baseline(result.artifacts), settings)
    c = result.counters
    inst = Instruments(
        resolved=resolved, tokens=setup.chat.tokens if setup.chat else 0,
        wall_s=round(time.monotonic() - started, 3),
        llm_calls=setup.chat.calls if setup.chat else 0,
        illegal_actions=c.illegal_tools + c.illegal_transitions,
        redundant_actions=setup.observer.redundant,
        repeated_work=setup.bodies.repeated_work,
        regressions=setup.bodies.regressions_caught + slipped,
        stale_context=setup.observer.stale_context)
    details = {"path": list(result.path), "visits": dict(c.visits), "steps": c.steps,
               "tool_calls": c.tool_calls, "faults": list(setup.faults.injected),
               "tried": len(setup.bodies.tried), "reused": setup.bodies.reused,
               "replans": setup.bodies.replans,
               "tool_seconds": dict(setup.tools.seconds),
               "regressions_slipped": slipped, "stale_events": setup.observer.stale_events[:20],
               **_patch_summary(setup.task, result.artifacts),
               **({"note": note} if note else {}), **dict(extra or {})}
    return TaskOutcome(setup.task.task_id, setup.arm.name, ACCEPT if accepted else REJECT,
                       _reason(result), inst, details)


def _patch_summary(task: Task, artifacts: Mapping[str, Any]) -> dict[str, Any]:
    """Where the patch in force changed the code, for the report (read after the run: the
    workflow never sees the mutation)."""
    art = artifacts.get("Patch")
    if art is None:
        return {}
    patch = art.value
    edits = list(patch.get("edits", ()))
    site = str(patch.get("site", ""))
    injected = f"{task.mutation.file}:{task.mutation.line}"
    return {"patch": {"site": site, "operator": patch.get("operator", ""),
                      "edits": len(edits), "at_injected_line": site == injected}}


def _rejected(task: Task, arm: Arm, reason: str, started: float) -> TaskOutcome:
    return TaskOutcome(task.task_id, arm.name, REJECT, reason,
                       Instruments(wall_s=round(time.monotonic() - started, 3)))


def solve(task: Task, arm: Arm, faults: FaultPlan, *, model: ChatClient | None = None,
          workdir: Path | str, settings: SolveSettings | None = None,
          graph: Graph | None = None) -> TaskOutcome:
    """Run `task` under `arm` with `faults` injected; never raises.

    `model` is any object with ``complete(messages)`` returning ``.text`` and ``.usage``
    (frostline.repair's OpenAIChatClient). Without one, the arms that need a model return
    ``status="not_run"`` and every other arm runs with the template generator (empty L).
    `graph` replaces the arm's graph (a tuned one, say), its settings in force.
    """
    started = time.monotonic()
    settings = settings or SolveSettings()
    if graph is not None:
        settings = settings.with_graph(graph)
    if task.dep_paths:  # the suite imports its test dependencies from where they were unpacked
        settings = replace(settings, sandbox=replace(
            settings.sandbox, ro_binds=(*settings.sandbox.ro_binds, *task.dep_paths)))
    if (arm.needs_model or arm.free_agent) and model is None:
        return TaskOutcome(task.task_id, arm.name, NOT_RUN,
                           f"{arm.name} needs a model endpoint and none is configured")
    try:
        setup = prepare(task, arm, faults, model, Path(workdir), settings)
        if arm.free_agent or not arm.single_l:
            assert setup.chat is not None
            return run_free_agent(setup, settings, started, enforce=not arm.free_agent)
        given = {} if graph is None else {"graph": {"name": graph.name,
                                                    "digest": graph.content_digest}}
        graph = graph if graph is not None else graph_for(arm, settings.guards)
        verdict = check(graph)
        engine = Engine(graph, setup.bodies.bodies(),
                        router=LocalToolRouter(setup.tools.registry()),
                        sinks=[setup.observer], run_id=f"{task.task_id}/{arm.name}",
                        max_steps=settings.max_steps, verify=verdict.ok)
        result = engine.run()
        extra = given if verdict.ok else {**given, "graph_check": "red: " + ", ".join(
            k for k, q in verdict.queries.items() if not q.ok)}
        return outcome_of(setup, result, started, settings, extra)
    except FrostlineError as exc:
        return _rejected(task, arm, f"{exc.code}: {exc.message}", started)
    except Exception as exc:  # a defect must not stop the driver's other tasks
        return _rejected(task, arm, f"internal error: {type(exc).__name__}: {exc}", started)

