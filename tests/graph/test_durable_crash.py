"""Property: wherever a durable graph run crashes — before a tool's effect or after it, before
the commit — resuming it (with an operator reconciling what fails closed) ends with every tool
call's effect happening exactly once and the run accepted.

The crash is a BaseException raised inside the tool, in-process: it leaves exactly what a killed
process leaves (a durable attempt record without a commit, an attempt still `running`). The
SIGKILL test in test_durable_kill.py covers the real process death.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from durable_bodies import CALLS, LOG_ENV, executions, tools, with_calls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.contract.identity import Identity
from frostline.graph.durable import GraphTool, run_durable, tool_identity
from frostline.graph.graph import load_graph
from frostline.store import open_store

CALL_LIST = [(tool_identity(s, 0, i), t, p) for s, calls in CALLS.items()
             for i, (t, p) in enumerate(calls)]


class Crash(BaseException):
    """The process dies here."""


def crashing(registry: Mapping[str, GraphTool], at: int, after_effect: bool) -> dict[str, Any]:
    """The registry, except that the `at`-th real execution crashes (before or after its effect)."""
    seen = [0]

    def wrap(tool: GraphTool) -> GraphTool:
        def fn(payload: Mapping[str, Any]) -> Any:
            n = seen[0]
            seen[0] += 1
            if n == at and not after_effect:
                raise Crash
            result = tool.fn(payload)
            if n == at:
                raise Crash
            return result
        return GraphTool(fn, side_effecting=tool.side_effecting)

    return {name: wrap(t) for name, t in registry.items()}


def identity_of(tool: str, payload: Mapping[str, Any]) -> Identity:
    return next(i for i, t, p in CALL_LIST if (t, p) == (tool, dict(payload)))


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, len(CALL_LIST) - 1), after_effect=st.booleans(),
       read_only=st.sets(st.sampled_from(sorted({t for _, t, _ in CALL_LIST}))))
def test_a_crash_anywhere_then_resume_runs_every_effect_once(
        tmp_path_factory: Any, monkeypatch: Any, at: int, after_effect: bool,
        read_only: set[str]) -> None:
    root: Path = tmp_path_factory.mktemp("crash")
    monkeypatch.setenv(LOG_ENV, str(root / "tools.jsonl"))
    registry = {n: GraphTool(f.fn if isinstance(f, GraphTool) else f,
                             side_effecting=n not in read_only) for n, f in tools().items()}
    graph = load_graph("canonical")
    with open_store(f"sqlite:///{root}/s.db") as store:
        try:
            run_durable(store, "r", graph, with_calls(CALLS), crashing(registry, at, after_effect))
            raise AssertionError("the crash did not happen")
        except Crash:
            pass
        crashed = CALL_LIST[at]
        assert {s.identity for s in store.list_slots("r")} == {i for i, _, _ in CALL_LIST[:at]}

        outcome = run_durable(store, "r", graph, with_calls(CALLS), registry)
        if outcome.status == "unresolved":
            # only a side-effecting tool fails closed; the operator checks the tool's own log
            assert crashed[1] not in read_only
            assert outcome.error is not None
            assert outcome.error["identities"] == [str(crashed[0])]
            if any(identity_of(e["tool"], e["payload"]) == crashed[0] for e in executions()):
                store.reconcile_call("r", crashed[0], abandon=False,
                                     result={"tool": crashed[1], "ok": True, "echo": crashed[2]})
            else:
                store.reconcile_call("r", crashed[0], abandon=True)
            outcome = run_durable(store, "r", graph, with_calls(CALLS), registry)
        else:
            # a read-only tool is simply run again (its effect may then happen twice: it has none)
            assert crashed[1] in read_only
        assert outcome.status == "accepted", outcome.error
        ran = [identity_of(e["tool"], e["payload"]) for e in executions()]
        if crashed[1] in read_only and after_effect:
            ran.remove(crashed[0])  # the read-only tool's first, crashed run
        assert sorted(ran) == sorted(i for i, _, _ in CALL_LIST)
        assert {s.identity for s in store.list_slots("r")} == {i for i, _, _ in CALL_LIST}
