"""Durable graph runs: tool calls through the broker under structural identities (state, visit,
ordinal), replayed on a second run of the same run id, fail-closed on divergence and on an
unresolved side-effecting call. Runs on both store backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from durable_bodies import CALLS, LOG_ENV, build, executions, tools, with_calls

from frostline.cli.graph import graph as graph_cli
from frostline.contract.identity import Identity, digest
from frostline.errors import FrostlineError, ProviderError
from frostline.graph.durable import GraphTool, run_durable, tool_identity
from frostline.graph.errors import GraphRejected, IllegalTool
from frostline.graph.graph import Graph, load_graph
from frostline.store import CallStatus, Store
from frostline.testing import FaultyStore

BODIES = Path(__file__).with_name("durable_bodies.py")
HAPPY_PATH = ("INIT", "RECONNAISSANCE", "LOCALIZE", "IMPACT", "DEBUG", "PLAN", "GENERATE", "EDIT",
              "EXECUTE", "TEST", "REGRESSION", "REVIEW", "VALIDATE", "MEMORIZE", "TERMINAL_ACCEPT")


@pytest.fixture(autouse=True)
def tool_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tools.jsonl"
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


def expected_identities() -> set[Identity]:
    return {tool_identity(state, 0, i) for state, calls in CALLS.items() for i in range(len(calls))}


def run(store: Store, run_id: str = "g1", calls=CALLS, registry=None):
    return run_durable(store, run_id, load_graph("canonical"), with_calls(calls),
                       registry if registry is not None else tools())


def test_tool_calls_commit_under_structural_identities(store: Store) -> None:
    out = run(store)
    assert out.status == "accepted" and out.result is not None
    assert out.result.path == HAPPY_PATH
    assert store.get_run("g1").kind == "graph"
    assert store.get_run("g1").status == "accepted"
    slots = store.list_slots("g1")
    assert {s.identity for s in slots} == expected_identities()
    by_id = {str(s.identity): s for s in slots}
    rec = by_id["graph/RECONNAISSANCE/v0@:1"]
    assert (rec.capability, rec.digest) == ("code.graph", digest({"file": "a.py"}))
    assert rec.result == {"tool": "code.graph", "ok": True, "echo": {"file": "a.py"}}
    assert all(c.status is CallStatus.COMMITTED for c in store.list_calls("g1"))
    assert out.executed == len(expected_identities()) == len(executions())
    # the ledger went to the store's event log, tagged with the attempt
    kinds = [e.kind for e in store.list_events("g1")]
    assert kinds.count("graph.tool_call") == len(expected_identities())
    assert "graph.terminal" in kinds and "attempt_finished" in kinds
    assert str(tool_identity("EXECUTE", 0, 0)) == "graph/EXECUTE/v0@:0"


def test_second_run_of_the_same_run_id_executes_no_tool(store: Store) -> None:
    first = run(store)
    n = len(executions())
    assert n == first.executed == 8
    second = run(store)
    assert len(executions()) == n  # the tools' own log: nothing ran again
    assert (second.executed, second.replayed) == (0, n)
    assert second.status == "accepted" and second.result is not None
    assert second.result.path == first.result.path
    assert [a.status for a in store.list_attempts("g1")] == ["accepted", "accepted"]
    assert len(store.list_calls("g1")) == n  # no new attempt record either
    assert sum(e.kind == "replay" for e in store.list_events("g1")) == n


def test_an_off_list_call_is_illegal_recorded_and_never_reaches_the_store(store: Store) -> None:
    seen: list[str] = []
    bodies = with_calls(CALLS)
    inner = bodies["EXECUTE"]

    def execute(ctx):
        try:
            ctx.tool("patch.generate", {"file": "a.py", "sneaky": True})
        except IllegalTool as exc:
            seen.append(exc.fields["tool"])
        return inner(ctx)

    bodies["EXECUTE"] = execute
    out = run_durable(store, "g1", load_graph("canonical"), bodies, tools())
    assert out.status == "accepted" and seen == ["patch.generate"]
    illegal = [e for e in store.list_events("g1") if e.kind == "graph.illegal_tool"]
    assert [(e.data["state"], e.data["tool"], e.data["routed"]) for e in illegal] == \
        [("EXECUTE", "patch.generate", False)]
    assert not [c for c in store.list_calls("g1") if c.site.startswith("graph/EXECUTE")
                and c.capability == "patch.generate"]
    assert [e["payload"] for e in executions() if e["tool"] == "patch.generate"] == \
        [{"file": "a.py"}]  # only GENERATE's own, permitted call ran
    # the off-list call took no ordinal: EXECUTE's permitted call is still ω = 0
    assert tool_identity("EXECUTE", 0, 0) in {s.identity for s in store.list_slots("g1")}


def test_a_retry_loop_gets_one_identity_per_visit_and_resumes_whole(store: Store) -> None:
    graph = load_graph("canonical")
    overrides = {"TEST": [{"failed": 1, "failures": ["x"]}]}
    first = run_durable(store, "g1", graph, with_calls(CALLS, overrides), tools())
    assert first.status == "accepted" and first.result.path.count("EXECUTE") == 2
    idents = {str(s.identity) for s in store.list_slots("g1")}
    assert {"graph/EXECUTE/v0@:0", "graph/EXECUTE/v1@:0", "graph/TEST/v0@:0",
            "graph/TEST/v1@:0", "graph/EDIT/v1@:0"} <= idents
    # the same payload at a new visit is a new identity: it ran again, on purpose
    assert sum(e["tool"] == "sandbox.execute" for e in executions()) == 2
    n = len(executions())
    second = run_durable(store, "g1", graph, with_calls(CALLS, overrides), tools())
    assert (second.executed, second.replayed, len(executions())) == (0, n, n)
    assert second.result.path == first.result.path


def test_a_changed_payload_at_a_committed_identity_diverges(store: Store) -> None:
    run(store)
    before = len(executions())
    changed = {**CALLS, "LOCALIZE": [("code.graph", {"file": "b.py", "depth": 2})]}
    out = run(store, calls=changed)
    assert out.status == "diverged" and out.result is None
    assert out.error is not None and out.error["code"] == "divergence"
    assert out.error["identity"] == "graph/LOCALIZE/v0@:0"
    assert len(executions()) == before  # stopped before any new effect
    assert store.get_run("g1").status == "diverged"
    assert any(e.kind == "divergence" for e in store.list_events("g1"))


def test_a_changed_tool_at_a_committed_identity_diverges(store: Store) -> None:
    run(store)
    changed = {**CALLS, "LOCALIZE": [("trace.read", {"file": "a.py", "depth": 2})]}
    registry = {**tools(), "trace.read": lambda p: {"tool": "trace.read", "echo": dict(p)}}
    out = run(store, calls=changed, registry=registry)
    assert out.status == "diverged"
    assert out.error["recorded"]["capability"] == "code.graph"


def test_a_pending_side_effecting_call_fails_closed(store: Store) -> None:
    # What a crash between the durable attempt record and the commit leaves behind.
    store.create_run("g1", {}, kind="graph")
    attempt = store.start_attempt("g1", source="", annotated="", report={})
    store.begin_call("g1", attempt.number, tool_identity("RECONNAISSANCE", 0, 0),
                     "repo.manifest", digest({"root": "repo"}))
    out = run(store)
    assert out.status == "unresolved"
    assert out.error["identities"] == ["graph/RECONNAISSANCE/v0@:0"]
    assert executions() == []  # no body ran, no tool ran
    assert [a.status for a in store.list_attempts("g1")] == ["failed", "unresolved"]
    # the operator abandons it; the next attempt runs the call once
    store.reconcile_call("g1", tool_identity("RECONNAISSANCE", 0, 0), abandon=True)
    again = run(store)
    assert again.status == "accepted"
    assert len(executions()) == 8


def test_a_pending_read_only_call_runs_again(store: Store) -> None:
    store.create_run("g1", {}, kind="graph")
    attempt = store.start_attempt("g1", source="", annotated="", report={})
    store.begin_call("g1", attempt.number, tool_identity("RECONNAISSANCE", 0, 0),
                     "repo.manifest", digest({"root": "repo"}))
    registry = {**tools(), "repo.manifest": GraphTool(tools()["repo.manifest"],
                                                      side_effecting=False)}
    out = run(store, registry=registry)
    assert out.status == "accepted"
    assert any(e.kind == "unresolved_retry" for e in store.list_events("g1"))


def test_a_failing_tool_is_a_failed_call_never_committed(store: Store) -> None:
    def broken(payload):
        raise ProviderError("the test runner crashed", status=500)

    caught: list[str] = []
    bodies = with_calls({})

    def test_body(ctx):
        try:
            ctx.tool("test.run", {"suite": "unit"})
        except ProviderError as exc:
            caught.append(exc.message)
        return {"passed": 2, "failed": 0, "failures": []}

    bodies["TEST"] = test_body
    out = run_durable(store, "g1", load_graph("canonical"), bodies, {"test.run": broken})
    assert out.status == "accepted" and caught == ["the test runner crashed"]
    [call] = store.list_calls("g1")
    assert call.status is CallStatus.FAILED
    assert store.list_slots("g1") == []


def test_a_script_run_id_or_a_foreign_tool_is_refused(store: Store) -> None:
    store.create_run("s1", {})
    with pytest.raises(FrostlineError, match="script run"):
        run(store, run_id="s1")
    with pytest.raises(FrostlineError, match="vocabulary"):
        run(store, registry={"shell.exec": lambda p: None})


def test_a_run_of_another_graph_is_refused(store: Store) -> None:
    run(store)
    other = {**load_graph("canonical").to_dict(), "budgets": {"retry": 2, "rollback": 2}}
    with pytest.raises(FrostlineError, match="Start a new run id"):
        run_durable(store, "g1", Graph.from_dict(other), with_calls(CALLS), tools())
    with pytest.raises(GraphRejected):  # a red graph never starts
        run_durable(store, "g2", load_graph("seed"), with_calls({}), {})
    assert store.get_run("g2") is None


def test_cli_run_is_durable_with_a_run_id(store_url: str, tool_log: Path) -> None:
    args = ["run", "canonical", "--bodies", str(BODIES), "--run", "cli-1", "--store", store_url,
            "--json"]
    first = CliRunner().invoke(graph_cli, args)
    assert first.exit_code == 0, first.output
    lines = [json.loads(x) for x in first.output.splitlines()]
    durable = next(x["durable"] for x in lines if "durable" in x)
    assert (durable["status"], durable["executed"], durable["replayed"]) == ("accepted", 8, 0)
    second = CliRunner().invoke(graph_cli, args)
    assert second.exit_code == 0, second.output
    durable = next(json.loads(x)["durable"] for x in second.output.splitlines() if "durable" in x)
    assert (durable["executed"], durable["replayed"]) == (0, 8)
    assert len(executions()) == 8


def test_build_is_the_module_the_cli_loads() -> None:
    made = build()
    assert set(made["tools"]) == {t for calls in CALLS.values() for t, _ in calls}


def test_bad_bodies_are_refused_before_anything_is_written(store: Store) -> None:
    bodies = with_calls(CALLS)
    del bodies["PLAN"]
    with pytest.raises(FrostlineError, match="no body for state"):
        run_durable(store, "g1", load_graph("canonical"), bodies, tools())
    assert store.get_run("g1") is None


def test_a_store_outage_stops_the_run_and_fails_closed(store: Store) -> None:
    faulty = FaultyStore(store, fail_reads=False, fail_writes=False)
    registry = tools()
    generate = registry["patch.generate"]

    def generate_then_lose_the_store(payload):
        result = generate(payload)  # the effect happens, then the store goes away
        faulty.fail_writes = True
        return result

    registry["patch.generate"] = generate_then_lose_the_store
    out = run_durable(faulty, "g1", load_graph("canonical"), with_calls(CALLS), registry)
    assert out.status == "failed" and out.error["code"] == "store_unavailable"
    assert [e["tool"] for e in executions()][-1] == "patch.generate"  # nothing after it ran
    assert len(executions()) == 4
    faulty.fail_writes = False
    again = run(store)  # its call is durably pending and side-effecting: fail closed
    assert again.status == "unresolved"
    assert again.error["identities"] == ["graph/GENERATE/v0@:0"]
    assert len(executions()) == 4


def test_the_broker_grants_only_the_current_states_allowlist(store: Store) -> None:
    # Second line of defence: a call that got past the boundary (here, routed by hand) is
    # still checked against the state's allowlist as the broker's grant set, and stops the run.
    from frostline.capabilities.envelope import Envelope
    from frostline.contract.prefix import load_prefix
    from frostline.errors import RunStopped
    from frostline.graph.allowlist import ToolCall
    from frostline.graph.durable import DurableToolRouter, ToolProvider, as_tools, tool_catalog
    from frostline.runtime.broker import Broker

    registry = as_tools(tools())
    store.create_run("g1", {}, kind="graph")
    attempt = store.start_attempt("g1", source="", annotated="", report={})
    broker = Broker(store, "g1", attempt.number, envelope=Envelope(),
                    providers=ToolProvider(registry), allowlist={},
                    prefix=load_prefix(store, "g1"), catalog=tool_catalog(registry))
    router = DurableToolRouter(broker, load_graph("canonical"))
    try:
        ok = router.call(ToolCall("EXECUTE", 0, 0, "sandbox.execute", {"cmd": "x"}))
        assert ok["echo"] == {"cmd": "x"}
        with pytest.raises(RunStopped) as stop:
            router.call(ToolCall("EXECUTE", 0, 1, "patch.generate", {"file": "a.py"}))
        assert stop.value.error["code"] == "grant_denied"
        with pytest.raises(RunStopped):  # a stopped run makes no further call
            router.call(ToolCall("GENERATE", 0, 0, "patch.generate", {"file": "a.py"}))
    finally:
        router.close()
    assert [e["tool"] for e in executions()] == ["sandbox.execute"]
    assert [c.capability for c in store.list_calls("g1")] == ["sandbox.execute"]


def test_a_tool_may_take_the_call_context(store: Store) -> None:
    seen: list[tuple[str, str]] = []

    def with_ctx(payload, ctx):
        seen.append((ctx.run_id, ctx.identity))
        return {"tool": "test.run", "echo": dict(payload)}

    registry = {**tools(), "test.run": with_ctx,
                "memory.write": lambda p, name="memory.write": {"tool": name, "echo": dict(p)}}
    assert run(store, registry=registry).status == "accepted"
    assert seen == [("g1", "graph/TEST/v0@:0")]


def test_a_payload_off_the_tools_schema_is_refused_before_any_effect(store: Store) -> None:
    from frostline.errors import PayloadInvalid

    schema = {"type": "object", "properties": {"suite": {"type": "string"}},
              "required": ["suite"], "additionalProperties": False}
    registry = {**tools(), "test.run": GraphTool(tools()["test.run"], input_schema=schema)}
    caught: list[str] = []
    bodies = with_calls(CALLS)
    inner = bodies["TEST"]

    def test_body(ctx):
        try:
            ctx.tool("test.run", {"suite": 3})
        except PayloadInvalid as exc:
            caught.append(exc.fields["identity"])
        return inner(ctx)  # then the valid call, as the visit's next ordinal

    bodies["TEST"] = test_body
    out = run_durable(store, "g1", load_graph("canonical"), bodies, registry)
    assert out.status == "accepted" and caught == ["graph/TEST/v0@:0"]
    assert [e["payload"] for e in executions() if e["tool"] == "test.run"] == [{"suite": "unit"}]
    assert tool_identity("TEST", 0, 1) in {s.identity for s in store.list_slots("g1")}
