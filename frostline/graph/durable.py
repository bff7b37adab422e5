"""Durable graph runs: a graph run is a run in the store, and its tool calls go through the broker.

The engine routes every permitted tool call to a `ToolRouter`. `DurableToolRouter` routes it
through the same broker scripts use, so the runtime rule applies per call:

    ι committed, same tool and payload digest   → replay the stored result (the tool never runs)
    ι committed, other tool or digest           → Divergence: the run stops before any effect
    ι pending from a crashed attempt            → AttemptUnresolved for a side-effecting tool
                                                  (fail closed); a read-only tool runs again
    otherwise                                   → durable attempt record → tool → commit

A tool call's identity is structural: σ = ``graph/<STATE>/v<visit>``, π = (), ω = the call's
ordinal within the visit (text form ``graph/EXECUTE/v0@:1``). The engine is deterministic given
the bodies and the tool results, and a replayed call returns the committed result, so running
the same run id again walks the same states, reaches the same identities, replays every
committed call and continues where the crashed attempt stopped.

The grant set in force is the current state's allowlist: the router hands each call to the
broker (`Broker.call_admitted`) with exactly that allowlist as its grants. The engine's `ToolBoundary` has
already refused an off-list call (ILLEGAL_TOOL, recorded in the ledger, never routed), so the
broker's grant check is a second line, not the first.

The ledger is not written an event at a time. Its events are buffered with the broker's
replay events and written in order, one transaction per batch, and a batch is queued ahead of
the next tool call's durable attempt record: every event is durable before the effect that
follows it (an event before a model call is made durable at once), a commit need not be durable
before the body continues (the next attempt record, queued after it, waits for it), and the
attempt's outcome is recorded only once everything before it has settled. A crash loses at most
the events written since the last effect — never a committed tool result, and never the record
of a call that was dispatched.

A stop (divergence, unresolved attempt, store outage, budget) raises `RunStopped`, a
BaseException, so no state body can swallow it and the engine cannot mistake it for a failed
visit: the attempt ends there and `run_durable` records why.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from frostline.capabilities.catalog import Capability, Catalog
from frostline.capabilities.envelope import Envelope, LedgerPolicy
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.contract.identity import Identity
from frostline.contract.prefix import load_prefix
from frostline.contract.records import run_key
from frostline.contract.status import AttemptStatus, status_of_stop
from frostline.errors import (
    AttemptUnresolved,
    FrostlineError,
    GraphChanged,
    GraphToolsInvalid,
    PrefixConflict,
    ProviderError,
    RunKindMismatch,
    RunStopped,
    StoreUnavailable,
)
from frostline.graph.allowlist import ToolCall
from frostline.graph.engine import Body, Engine, RunResult
from frostline.graph.graph import Graph
from frostline.graph.ledger import LedgerEvent, LedgerSink
from frostline.graph.slot import SlotLimits, SlotModel
from frostline.runtime.broker import Broker, BrokerStats
from frostline.runtime.certificates import current as current_certificate
from frostline.runtime.recovery import close_crashed_attempts, unresolved_calls
from frostline.runtime.spent import catalog_prices, spent_usd
from frostline.store.base import Store
from frostline.store.writes import AppendEvent, FinishAttempt, PutCertificate, SetRunStatus

SITE_PREFIX = "graph"
_PERMISSIVE = {"type": "object"}


def tool_identity(state: str, visit: int, ordinal: int) -> Identity:
    """The store identity of a graph tool call: σ = graph/STATE/v<visit>, π = (), ω = ordinal."""
    return Identity(f"{SITE_PREFIX}/{state}/v{visit}", (), ordinal)


@dataclass(frozen=True)
class GraphTool:
    """A tool a graph state may call: a function of the payload returning JSON data.

    A plain callable in a tool registry counts as side-effecting (the safe assumption: a
    crashed, uncommitted call of it fails closed instead of running again).

    Example: ``GraphTool(lambda p: {"files": 3}, side_effecting=False)``
    """

    fn: Callable[[Mapping[str, Any]], Any]
    side_effecting: bool = True
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(_PERMISSIVE))
    price_usd: float = 0.0
    idempotency_keys: bool = False  # the tool deduplicates on CallContext.idempotency_key


ToolRegistry = Mapping[str, "GraphTool | Callable[[Mapping[str, Any]], Any]"]


def as_tools(registry: ToolRegistry) -> dict[str, GraphTool]:
    """Normalise a registry of name → GraphTool or plain callable."""
    out: dict[str, GraphTool] = {}
    for name, tool in registry.items():
        if isinstance(tool, GraphTool):
            out[name] = tool
        elif callable(tool):
            out[name] = GraphTool(tool)
        else:
            raise GraphToolsInvalid(f"tool {name!r} must be a callable or a GraphTool, not "
                                    f"{type(tool).__name__}", tool=name)
    return out


def tool_catalog(tools: Mapping[str, GraphTool]) -> Catalog:
    """The capability catalog the broker checks graph tools against (names, effects, schemas)."""
    return Catalog(Capability(name, side_effecting=t.side_effecting,
                              input_schema=dict(t.input_schema), price_usd=t.price_usd,
                              idempotency_keys=t.idempotency_keys,
                              description="graph tool") for name, t in sorted(tools.items()))


class ToolProvider:
    """A broker Provider over a graph's tool registry. A tool runs in the calling thread; a
    tool with a second required parameter also receives the `CallContext` (its identity and
    idempotency key)."""

    def __init__(self, tools: Mapping[str, GraphTool]) -> None:
        self.tools = dict(tools)
        self._names = frozenset(self.tools)
        self._wants_ctx = {n: _arity(t.fn) >= 2 for n, t in self.tools.items()}

    def capabilities(self) -> frozenset[str]:
        return self._names

    def honours_idempotency_keys(self, capability: str) -> bool:
        tool = self.tools.get(capability)
        return tool is not None and tool.idempotency_keys

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        tool = self.tools[capability]
        value = tool.fn(payload, ctx) if self._wants_ctx[capability] else tool.fn(payload)  # type: ignore[call-arg]
        if inspect.isawaitable(value):
            value = await value
        return value if isinstance(value, ProviderResult) else ProviderResult(value)


def _arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    # Only required positionals count: `lambda p, name=name: ...` is a one-argument tool.
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params)


class DurableToolRouter:
    """Route each permitted tool call through the broker under its structural identity.

    The router owns a private event loop: the engine is synchronous, the broker asynchronous,
    and one loop for the whole attempt keeps the broker's lazily created primitives valid.
    A call's reply does not wait for its commit (the broker settles it): the next tool call's
    attempt record waits for every write queued before it, `settle()` waits for all of them,
    and the attempt settles before it is finished.
    """

    def __init__(self, broker: Broker, graph: Graph) -> None:
        self.broker = broker
        self.graph = graph
        self.calls: list[ToolCall] = []
        self._loop = asyncio.new_event_loop()

    def call(self, call: ToolCall) -> Any:
        self._check()  # a stopped run makes no further call
        identity = tool_identity(call.state, call.visit, call.ordinal)
        self.calls.append(call)
        # The per-call rule of the broker, driven without a script: the engine has already
        # admitted the call (allowlist) and assigned its occurrence (the visit's ordinal); the
        # grant set in force is the state's allowlist, nothing more.
        reply = self._loop.run_until_complete(self.broker.call_admitted(
            identity, call.tool, dict(call.payload),
            grants=self.graph.contracts[call.state].permitted_tools))
        if reply.get("ok"):
            self._check()  # e.g. an earlier ledger batch that could not be written
            return reply.get("result")
        error = dict(reply.get("error") or {})
        if error.get("kind") == "stop":
            raise RunStopped(error)
        raise _rebuild(error)

    def settle(self) -> None:
        """Wait until every write of the attempt so far is durable (the ledger's buffered
        events included); raise RunStopped if one failed."""
        self._loop.run_until_complete(self.broker.drain())
        self._check()

    def _check(self) -> None:
        if self.broker.stop_error is not None:
            raise RunStopped(self.broker.stop_error.to_dict())

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self.broker.drain())
        finally:
            self._loop.close()


def _rebuild(error: Mapping[str, Any]) -> FrostlineError:
    """A catchable error reply (provider rejection, invalid payload) as the error it was."""
    return FrostlineError.from_dict(error, ProviderError, "tool call failed")


# Ledger kinds an effect outside the broker follows (the slot's model call): durable before
# the append returns. Every other event waits for the next attempt record or the end.
BEFORE_EFFECT = frozenset({"model_call"})


class AttemptSink:
    """Ledger sink into the run's event log as ``graph.<kind>``, tagged with the attempt.

    Events are not written one by one: the broker buffers them with its replay events and
    writes them in order, one transaction per batch, ahead of the next tool call's attempt
    record, so every event is durable before the effect that follows it; a `BEFORE_EFFECT`
    event is made durable at once. A batch that cannot be written stops the run (RunStopped,
    which a state body on the stack cannot catch) at the next call, or at the attempt's end.
    """

    def __init__(self, router: DurableToolRouter, attempt: int) -> None:
        self.router = router
        self.attempt = attempt

    def write(self, event: LedgerEvent) -> None:
        self.router.broker.note(f"graph.{event.kind}",
                                dict(event.data, seq=event.seq, attempt=self.attempt))
        if event.kind in BEFORE_EFFECT:
            self.router.settle()


@dataclass(frozen=True)
class DurableOutcome:
    """How one attempt of a durable graph run ended.

    `status` is the graph's own verdict (accepted, rejected, stuck, step_limit) when the engine
    finished, else why the attempt stopped (diverged, unresolved, failed). `result` is the
    engine's RunResult when it finished.
    """

    run_id: str
    attempt: int | None
    status: str
    result: RunResult | None = None
    executed: int = 0
    replayed: int = 0
    error: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.result is not None

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "attempt": self.attempt, "status": self.status,
                "executed": self.executed, "replayed": self.replayed, "error": self.error,
                "result": self.result.to_dict() if self.result is not None else None}


def default_envelope() -> Envelope:
    """The envelope of a new graph run.

    The occurrence ledger warns instead of denying: a graph's bodies are fixed code, not a
    revised script, so a payload repeated at a new identity is the body's intent.
    """
    return Envelope(ledger_policy=LedgerPolicy.WARN)


def run_durable(store: Store, run_id: str, graph: Graph, bodies: Mapping[str, Body],
                tools: ToolRegistry, *, model: SlotModel | None = None,
                envelope: Envelope | None = None, sinks: Iterable[LedgerSink] = (),
                limits: SlotLimits | None = None, max_steps: int = 10_000,
                owner: str | None = None) -> DurableOutcome:
    """Run (or resume) graph run `run_id` of `owner` (default: the local principal) in
    `store`, every tool call through the broker.

    A new run is created with kind "graph"; an existing one must be a graph run of the same
    graph. Each call opens an attempt: committed tool calls replay, the rest execute once.

    Raises:
        FrostlineError: `run_id` names a script run or a run of another graph.
    """
    registry = as_tools(tools)
    unknown = sorted(set(registry) - set(graph.tools))
    if unknown:
        raise GraphToolsInvalid(f"tool(s) {unknown} are not in graph {graph.name!r}'s "
                                "vocabulary", tools=unknown)
    catalog = tool_catalog(registry)
    # Refuse bad bodies or a red graph before anything is written to the store.
    Engine(graph, bodies, model=model, limits=limits, run_id=run_id, max_steps=max_steps)
    graph_digest = graph.content_digest
    name, run_id = run_id, run_key(owner, run_id)
    try:
        env = _ensure_run(store, run_id, graph, graph_digest, envelope, catalog, owner, name)
        with store.run_lock(run_id):
            close_crashed_attempts(store, run_id)
            return _attempt(store, run_id, graph, graph_digest, bodies, registry, catalog, env,
                            model, list(sinks), limits, max_steps)
    except (PrefixConflict, StoreUnavailable) as exc:
        return DurableOutcome(run_id, None, AttemptStatus.FAILED, error=exc.to_dict())


def _ensure_run(store: Store, run_id: str, graph: Graph, graph_digest: str,
                envelope: Envelope | None, catalog: Catalog, owner: str | None,
                name: str) -> Envelope:
    run = store.get_run(run_id)
    if run is None:
        env = envelope or default_envelope()
        store.create_run(name, env.to_dict(), kind="graph", owner=owner)
        return env
    if run.kind != "graph":
        raise RunKindMismatch(f"run {run_id!r} is a {run.kind} run, not a graph run; pick "
                              "another run id", run_id=run_id, kind=run.kind)
    first = next(iter(store.list_attempts(run_id)), None)
    if first is not None and first.report.get("graph_digest") not in (None, graph_digest):
        raise GraphChanged(
            f"run {run_id!r} was started with graph {first.report.get('graph')!r} "
            f"({str(first.report.get('graph_digest'))[:12]}…); this graph differs, so its "
            "identities would not mean the same calls. Start a new run id",
            run_id=run_id, recorded=first.report.get("graph_digest"), received=graph_digest)
    return Envelope.from_dict(run.envelope, catalog)






def _attempt(store: Store, run_id: str, graph: Graph, graph_digest: str,
             bodies: Mapping[str, Body], registry: Mapping[str, GraphTool], catalog: Catalog,
             env: Envelope, model: SlotModel | None, sinks: list[LedgerSink],
             limits: SlotLimits | None, max_steps: int) -> DurableOutcome:
    prefix = load_prefix(store, run_id)
    attempt = store.start_attempt(run_id, source=graph.dumps(), annotated="", report={
        "graph": graph.name, "graph_digest": graph_digest, "tools": sorted(registry)})
    number = attempt.number
    started = {"attempt": number, "frozen": len(prefix), "kind": "graph"}
    calls = store.list_calls(run_id)
    unresolved = unresolved_calls(calls, prefix)
    provider = ToolProvider(registry)
    # Fail closed before any body runs: a side-effecting tool call that was dispatched and
    # never committed may have had its effect; only an operator can say whether it did.
    blocking = sorted(str(i) for i, c in unresolved.items()
                      if (cap := catalog.get(c.capability)) is None
                      or (cap.side_effecting and not provider.honours_idempotency_keys(c.capability)))
    if blocking:
        err = AttemptUnresolved(
            f"{len(blocking)} side-effecting tool call(s) were dispatched and never committed: "
            f"{', '.join(blocking)}. The tool may have run; reconcile each with "
            f"'frostline reconcile {run_id} IDENTITY --result @FILE' or '--abandon'",
            identities=blocking)
        store.append_events(run_id, [("attempt_started", started),
                                     ("unresolved", {"attempt": number, **err.to_dict()})])
        return _finish(store, run_id, number, AttemptStatus.UNRESOLVED, None, None, err.to_dict())

    prior_spend = spent_usd(prefix.slots(), calls, catalog_prices(catalog))
    broker = Broker(store, run_id, number, envelope=env, providers=provider, allowlist={},
                    prefix=prefix, catalog=catalog, unresolved=unresolved,
                    prior_calls=len(calls), prior_spend_usd=prior_spend)
    broker.note("attempt_started", started)  # buffered with the ledger: see AttemptSink
    router = DurableToolRouter(broker, graph)
    try:
        try:
            engine = Engine(graph, bodies, model=model, router=router, limits=limits,
                            run_id=run_id, max_steps=max_steps,
                            sinks=[AttemptSink(router, number), *sinks])
            result = engine.run()
        finally:
            router.close()  # every commit and ledger event settled before the outcome is
    except RunStopped as stop:
        return _stopped(store, run_id, number, broker.stats, dict(stop.error))
    except FrostlineError as exc:  # not a body's failure (the engine records those): a defect
        _finish(store, run_id, number, AttemptStatus.FAILED, None, broker.stats, exc.to_dict())
        raise
    if broker.stop_error is not None:  # a commit or ledger batch that did not settle
        return _stopped(store, run_id, number, broker.stats, broker.stop_error.to_dict())
    return _finish(store, run_id, number, result.status.value, result, broker.stats, None)


def _stopped(store: Store, run_id: str, number: int, stats: BrokerStats,
             error: dict[str, Any]) -> DurableOutcome:
    # the one table (frostline.contract.status); a graph run does not wait: nothing resumes it
    status = status_of_stop(FrostlineError.from_dict(error))
    if status is AttemptStatus.WAITING:
        status = AttemptStatus.FAILED
    return _finish(store, run_id, number, status, None, stats, error)


def _finish(store: Store, run_id: str, number: int, status: str, result: RunResult | None,
            stats: BrokerStats | None, error: dict[str, Any] | None) -> DurableOutcome:
    executed = stats.executed if stats is not None else 0
    replayed = stats.replayed if stats is not None else 0
    rows = stats.calls if stats is not None else []
    totals: dict[str, Any] = {"executed": executed, "replayed": replayed,
              "provider_calls": stats.provider_calls if stats is not None else 0,
              "divergences": stats.divergences if stats is not None else [],
              "calls": rows}
    # Like a script attempt's: the certificate of what the run has committed so far. It, the
    # attempt's record, the run's status and the event are queued together, in this order:
    # one transaction, each write with its own outcome (the first failure is raised).
    cert = current_certificate(store, run_id, number)
    writes: list[Future[Any]] = [
        store.submit(PutCertificate(run_id, number, cert)),
        store.submit(FinishAttempt(run_id, number, status=status, error=error, stats=totals,
                                   invoked=[str(c["identity"]) for c in rows],
                                   result=result.to_dict() if result is not None else None)),
        store.submit(SetRunStatus(run_id, status)),
        store.submit(AppendEvent(run_id, "attempt_finished", {
            "attempt": number, "status": status, "executed": executed, "replayed": replayed}))]
    for write in writes:
        write.result()
    return DurableOutcome(run_id, number, status, result, executed, replayed, error)


__all__ = ["AttemptSink", "DurableOutcome", "DurableToolRouter", "GraphTool",
           "ToolProvider", "as_tools", "default_envelope", "run_durable", "tool_catalog",
           "tool_identity"]
