"""The broker: the host-side gatekeeper every capability call of a script passes through.

A frame from the script names a callsite σ, a fanout path π, a capability and a payload. The
broker admits it (nonce, σ in the host's own annotation with a matching capability, π
plausible), assigns the occurrence ω — a count per (σ, π) in arrival order, which is program
order because one path is sequential — and applies, for ι = (σ, π, ω) and h = digest(payload):

    grants → input schema → runtime rule:
        ι committed, same capability and h   → replay the stored result (no provider call)
        ι committed, other capability or h   → Divergence: stop before any new effect
        ι not committed                      → unresolved check → occurrence ledger →
                                               budget → durable attempt record → provider →
                                               commit → return

Everything that stops the run (divergence, unresolved attempt, store outage, a denial, a
forged frame) is remembered: later calls are refused before any effect, and the script sees
`RunStopped`. A provider rejection is recorded as a failed call (never committed) and reaches
the script as a catchable ProviderError. A call that was dispatched is always completed and
committed, whatever happens to the script afterwards: dispatch runs in a host task that the
script cannot cancel, and `drain()` waits for all of them before the attempt is finished.

Every denial, replay, execution, divergence and semantic repeat is an event in the store. An
execution's event is written in the transaction of its commit. Replay events (and the events
a caller notes with `note`, a graph run's ledger) are buffered and written in batches
(`REPLAY_BATCH`), always before any later event, before the next attempt record and by
`drain()`, so the log still holds one `replay` event per replayed identity, in invocation
order.

Writes go to the store as typed write objects without a thread hand-off (`Store.submit`), and the store makes
them durable in the order they were queued. Only the attempt record is waited for before the
effect it precedes. A commit, a failed-call mark and an audit event are *settled* instead: the
reply goes back to the script while the write becomes durable, and nothing observable may
depend on it until it is — every later dispatch first checks that all writes queued before its
own attempt record succeeded (queue order makes them durable by then), and `drain()` waits for
all of them before the attempt can finish. The script may compute with a result whose commit is
still in flight, but its only way to act is another call, which waits. A crash in that window
leaves the call's attempt record pending, exactly like a crash between the provider's return and
the commit: the next attempt fails closed on it. A settlement that fails is found before the
next dispatch (or by `drain()`) and stops the run.

The broker wires its seams together and owns the attempt's tasks: frame admission and ω in
`frostline.runtime.admission`, the runtime rule (occurrence ledger included) in
`frostline.runtime.rule`, the budget it claims in `frostline.runtime.budget`, dispatch
(attempt record, provider, commit) in `frostline.runtime.dispatch`, write settlement in
`frostline.runtime.settlement`, and the audit events with their replay batches in
`frostline.runtime.audit`. What they share has one owner each: a call's outcome is the
call's (`Call.conclude`), the budget's figures change only through `Spend`'s methods, why the
run stopped is the `RunStop`'s (the settlement only tells it), and each `BrokerStats` field
has one writer.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord
from frostline.errors import FrostlineError, InternalError, StoreUnavailable
from frostline.runtime import tracing
from frostline.runtime.admission import Admission, RaceDecision, Rejection
from frostline.runtime.audit import REPLAY_BATCH, AuditTrail
from frostline.runtime.budget import Spend, usage_tokens
from frostline.runtime.call import BrokerStats, Call, Reply, RunStop, stop_reply
from frostline.runtime.dispatch import Dispatcher, StoreArtifactSink
from frostline.runtime.rule import Rule
from frostline.runtime.settlement import Settlement
from frostline.runtime.waits import WaitDesk
from frostline.store.base import Store
from frostline.store.writes import Decide

__all__ = ["REPLAY_BATCH", "Broker", "BrokerStats", "Reply", "StoreArtifactSink"]

log = logging.getLogger("frostline.broker")


class Broker:
    """Admits, decides and dispatches the calls of one attempt.

    Example::

        broker = Broker(store, "run-1", 1, envelope=env, providers=LocalProviders(),
                        allowlist={"orchestrate/#0": "echo"}, prefix=load_prefix(store, "run-1"))
        reply = await broker.submit({"type": "call", "nonce": broker.nonce, ...})
        await broker.drain()
    """

    def __init__(self, store: Store, run_id: str, attempt: int, *, envelope: Envelope,
                 providers: Provider, allowlist: Mapping[str, str | None], prefix: Prefix,
                 catalog: Catalog = DEFAULT_CATALOG,
                 unresolved: Mapping[Identity, CallRecord] | None = None,
                 prior_calls: int = 0, prior_spend_usd: float = 0.0,
                 nonce: str | None = None, fail_open: bool = False,
                 waits: bool = True,
                 rebinding: Mapping[Identity, Identity] | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.attempt = attempt
        self.envelope = envelope  # a graph state's call narrows its grants (call_admitted)
        self.providers = providers
        self.catalog = catalog
        self.prefix = prefix
        self.nonce = nonce or secrets.token_hex(16)
        self.fail_open = fail_open
        self.stats = BrokerStats()
        self.invoked: list[Identity] = []
        self._stop = RunStop()
        self._admission = Admission(self.nonce, allowlist)
        self.allowlist = self._admission.allowlist
        self._writes = Settlement(store, run_id, self._stop.stop, fail_open=fail_open)
        self._trail = AuditTrail(self._writes, run_id, attempt)
        # Committed usage of earlier attempts counts against the token budget too.
        spend = Spend(prior_calls, prior_spend_usd,
                      sum(usage_tokens(s.usage) for s in prefix.slots()))
        self._rule = Rule(run_id=run_id, prefix=prefix, catalog=catalog, providers=providers,
                          unresolved=unresolved or {}, spend=spend, stats=self.stats,
                          stop=self._stop, trail=self._trail, rebinding=rebinding)
        self.rebinding = self._rule.rebinding
        self.ledger = self._rule.ledger
        self.unresolved = self._rule.unresolved
        # The waits of this attempt (approvals, events, timers); off for a graph run's tools.
        self.waits = WaitDesk(store, run_id, attempt, catalog, self._stop) if waits else None
        self._dispatcher = Dispatcher(store, run_id, attempt, providers=providers,
                                      writes=self._writes, trail=self._trail, spend=spend,
                                      stats=self.stats, stop=self._stop, fail_open=fail_open,
                                      waits=self.waits)
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def stop_error(self) -> FrostlineError | None:
        """Why the run stopped (the first reason), or None while it runs."""
        return self._stop.error

    # admission ------------------------------------------------------------------------
    def submit(self, frame: Mapping[str, Any]) -> asyncio.Future[Reply]:
        """Admit a `call` or `decide` frame and start handling it in a host task.

        Admission and ω assignment happen synchronously, in arrival order; the returned future
        is owned by the broker (the caller may stop waiting; the call still completes). A
        reply decided at admission (a replay, a rejected frame) comes back as a future that is
        already done: awaiting it costs no turn of the event loop.
        """
        reply = self._admit(frame)
        loop = asyncio.get_running_loop()
        if not asyncio.iscoroutine(reply):
            done: asyncio.Future[Reply] = loop.create_future()
            done.set_result(reply)
            return done
        task = loop.create_task(reply)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _admit(self, frame: Mapping[str, Any]) -> Reply | Coroutine[Any, Any, Reply]:
        stopped = self._stop.error
        admitted = self._admission.admit(frame, self.envelope.max_fanout, stopped is not None)
        if isinstance(admitted, Call):
            self.invoked.append(admitted.identity)
            hit = self._rule.replay_hit(admitted, self.envelope)
            if hit is not None:
                self.stats.calls.append(admitted.row)
                tracing.instant("frostline.call", run_id=self.run_id, attempt=self.attempt,
                                identity=admitted.text, capability=admitted.capability,
                                outcome="replayed", replayed=True)
                return hit
            return self._traced(admitted)
        if admitted is None:  # a well-formed call of a stopped run
            assert stopped is not None
            return stop_reply(stopped)
        if isinstance(admitted, RaceDecision):
            return self._decide(admitted.key, admitted.value)
        return self._reject(admitted)

    def _reject(self, rejection: Rejection) -> Reply:
        err = rejection.error()
        self.stats.rejected_frames.append({"reason": rejection.reason, **rejection.shown})
        log.warning("rejected RPC frame for run %s: %s", self.run_id, err.message)
        self._stop.stop(err)
        self._trail.event("rpc_rejected", {"reason": rejection.reason,
                                           "message": rejection.message, **rejection.shown})
        return stop_reply(err)

    # the runtime rule and dispatch --------------------------------------------------------
    def call_admitted(self, identity: Identity, capability: str, payload: dict[str, Any], *,
                      grants: Sequence[str]) -> Coroutine[Any, Any, Reply]:
        """The rule and dispatch of a call admitted outside the broker: a graph state's tool
        call, whose identity (state, visit, ordinal) the graph engine assigned and whose state
        permits exactly `grants`. The call counts as invoked and is decided under the
        envelope with `grants` as its grant set (its other limits unchanged); everything after
        admission (grants, schema, the runtime rule, dispatch) is a script call's.

        Example: ``reply = await broker.call_admitted(ident, "sandbox.execute", {...},
        grants=("sandbox.execute",))``
        """
        self.invoked.append(identity)
        envelope = self.envelope.with_grants(tuple(grants))
        return self._run(Call.of(identity, capability, payload), envelope)

    async def _traced(self, call: Call) -> Reply:
        with tracing.span("frostline.call", run_id=self.run_id, attempt=self.attempt,
                          identity=call.text, capability=call.capability) as span:
            try:
                return await self._run(call, self.envelope)
            finally:
                outcome = call.outcome
                tracing.annotate(span, outcome=None if outcome is None else str(outcome),
                                 replayed=outcome == "replayed")

    async def _run(self, call: Call, envelope: Envelope) -> Reply:
        self.stats.calls.append(call.row)
        try:
            reply = self._rule.decide(call, envelope)
            if reply is not None:
                return reply
            return await self._dispatcher.dispatch(call, envelope.concurrency)
        except StoreUnavailable as exc:
            call.conclude_unless_decided("store_unavailable")
            self._stop.stop(exc)
            return stop_reply(exc)
        except FrostlineError as exc:
            # e.g. the store refused a result it cannot hold: the call stays pending (a crash
            # window the next attempt reports), and this run stops.
            call.conclude_unless_decided("failed")
            self._stop.stop(exc)
            return stop_reply(exc)
        except Exception as exc:
            log.exception("broker failure on %s in run %s", call.identity, self.run_id)
            err = InternalError(f"internal error while handling {call.text}: "
                                f"{type(exc).__name__}: {exc}", identity=call.text)
            call.conclude_unless_decided("failed")
            self._stop.stop(err)
            return stop_reply(err)

    def note(self, kind: str, data: dict[str, Any]) -> None:
        """Append an event that precedes no effect of its own (a graph run's ledger) to the
        run's log, buffered with the replay events: written in order, in batches, and durable
        before the next attempt record (so before the next effect) and by `drain()`. A batch
        that fails stops the run, found before the next dispatch or by `drain()`."""
        self._trail.note(kind, data)

    # decisions ----------------------------------------------------------------------------
    async def _decide(self, key: str, value: int) -> Reply:
        if self._stop.error is not None:
            return stop_reply(self._stop.error)
        try:
            stored = await self._writes.write(Decide(self.run_id, key, value))
        except StoreUnavailable as exc:
            self._stop.stop(exc)
            return stop_reply(exc)
        self._trail.event("race_decided", {"key": key, "proposed": value, "winner": stored})
        return {"ok": True, "result": stored}

    # the end of the attempt -----------------------------------------------------------------
    async def drain(self) -> None:
        """Wait until every admitted call has completed and every write is settled."""
        while self._tasks or self._trail.buffered() or self._writes.pending():
            self._trail.flush()  # the events still buffered
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            await self._writes.settled(self._writes.queued)

    def in_flight(self) -> int:
        return len(self._tasks)
