"""Dispatch: a call the rule let through is recorded, executed by its provider, and committed.

Output commit holds here. The durable attempt record (`begin_call`) is waited for before the
provider sees the call, and so is every write queued before it — the audit trail's buffered
events are queued just ahead of it — (queue order makes them durable by then; each must have
succeeded, and nothing may have stopped the run meanwhile).
The commit is *settled* instead: the reply goes back while it becomes durable, and the next
dispatch, or the broker's drain, finds out whether it did. A crash in that window leaves the
attempt record pending, as a crash between the provider's return and the commit would; the
next attempt fails closed on it. A wait (`frostline.runtime.waits`) is decided before its
attempt record: its answer is committed as its result, or the run stops waiting with no record
left pending. A provider rejection is recorded as a failed call (never
committed) and reaches the script as a catchable `ProviderError`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any

from frostline.capabilities.costs import call_cost, rejected_cost
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.jsonshape import storable_copy, storable_json
from frostline.contract.records import LOCAL_PRINCIPAL, SlotRecord
from frostline.errors import (
    AttemptUnresolved,
    CommittedElsewhere,
    FrostlineError,
    ProviderCrashed,
    ProviderError,
    ResultTooDeep,
    StoreUnavailable,
)
from frostline.runtime.audit import AuditTrail
from frostline.runtime.budget import Spend
from frostline.runtime.call import (
    BrokerStats,
    Call,
    Reply,
    RunStop,
    raise_reply,
    stop_reply,
)
from frostline.runtime.settlement import OnDone, Settlement
from frostline.runtime.waits import Delivery, WaitDesk
from frostline.store.base import Store
from frostline.store.writes import BeginCall, CommitCall, FailCall

log = logging.getLogger("frostline.broker")
_decode = json.JSONDecoder().decode


class StoreArtifactSink:
    """ArtifactSink over the run store, scoped to the run's owner: artifacts are
    content-addressed (a replay returns byte-identical bytes), and a provider reads only what
    the owner's runs produced, so another principal's ref reads exactly like a missing one."""

    def __init__(self, store: Store, run_id: str) -> None:
        self._store = store
        self._run_id = run_id
        self._owner: str | None = None

    @property
    def owner(self) -> str:
        if self._owner is None:  # once per attempt, at the first artifact it touches
            run = self._store.get_run(self._run_id)
            self._owner = run.owner if run is not None and run.owner else LOCAL_PRINCIPAL
        return self._owner

    def put(self, data: bytes, mime: str) -> str:
        return self._store.put_artifact(data, mime, owner=self.owner)

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return self._store.get_artifact(ref, owner=self.owner)


class Dispatcher:
    """Dispatches the calls of one attempt, at most `concurrency` at a time.

    Example::

        dispatcher = Dispatcher(store, "run-1", 1, providers=providers, writes=writes,
                                trail=trail, spend=spend, stats=stats, stop=stop)
        reply = await dispatcher.dispatch(call, concurrency=8)
    """

    def __init__(self, store: Store, run_id: str, attempt: int, *, providers: Provider,
                 writes: Settlement, trail: AuditTrail, spend: Spend, stats: BrokerStats,
                 stop: RunStop, fail_open: bool = False, waits: WaitDesk | None = None) -> None:
        self._run_id = run_id
        self._attempt = attempt
        self.providers = providers
        self._writes = writes
        self._trail = trail
        self._spend = spend
        self._stats = stats
        self._stop = stop
        self._fail_open = fail_open
        self._waits = waits
        self._sink = StoreArtifactSink(store, run_id)
        self._slots: asyncio.Semaphore | None = None  # created in the running loop

    async def dispatch(self, call: Call, concurrency: int) -> Reply:
        """Record, execute and commit `call`; its budget is already reserved."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(concurrency)
        async with self._slots:
            if self._stop.error is not None:  # stopped while this call waited for a slot
                return self._undispatched(call, None)
            delivered: Delivery | None = None
            if self._waits is not None and self._waits.concerns(call.capability):
                decided = await self._waits.decide(call)
                if isinstance(decided, dict):  # waiting, diverged or rejected: not dispatched
                    self._spend.release(call.price)
                    return decided
                delivered = decided
            # Buffered events (replays, a graph's ledger) go ahead of the attempt record, so
            # they are durable, and checked, before the effect it precedes.
            self._trail.flush()
            earlier = self._writes.queued  # writes queued before this attempt record
            if call.overlaps and delivered is None:
                return await self._overlapped(call, earlier)
            call_id = await self._begin(call)
            # Queue order makes those writes durable by now; each must have succeeded, and
            # nothing may have stopped the run meanwhile, before this effect may happen.
            await self._writes.settled(earlier)
            if self._stop.error is not None:
                return self._undispatched(call, call_id)
            if delivered is not None:  # a wait's answer is its result; no provider runs
                produced = ProviderResult(delivered.result)
            else:
                self._stats.provider_calls += 1
                try:
                    produced = await self._invoke(call)
                except Exception as exc:
                    return self._failed(call, call_id, exc)
            return await self._produced(call, call_id, produced)

    async def _overlapped(self, call: Call, earlier: int) -> Reply:
        """A free read-only call, sent while its attempt record becomes durable. Its result
        reaches the script only once the record is durable, every write queued before it
        succeeded, and nothing stopped the run: exactly as if it had been sent after."""
        begun = self._writes.start(BeginCall(self._run_id, self._attempt, call.identity,
                                             call.capability, call.digest, call.key))
        self._stats.provider_calls += 1
        try:
            produced: ProviderResult | Exception = await self._invoke(call)
        except Exception as exc:
            produced = exc
        call_id = await self._begun(call, begun)
        await self._writes.settled(earlier)
        if self._stop.error is not None:  # its result is not delivered, nor committed
            return self._undispatched(call, call_id, sent=True)
        if isinstance(produced, Exception):
            return self._failed(call, call_id, produced)
        return await self._produced(call, call_id, produced)

    def _invoke(self, call: Call) -> Coroutine[Any, Any, ProviderResult]:
        return self.providers.invoke(call.capability, call.payload,
                                     CallContext(self._run_id, call.text, call.key, self._sink))

    async def _produced(self, call: Call, call_id: int | None,
                        produced: ProviderResult) -> Reply:
        self._spend.use_tokens(produced.usage)
        if call_id is None:  # fail-open: the attempt write failed; try once more now
            call_id = await self._begin(call)
        return self._commit(call, call_id, produced)

    def _settle_cost(self, call: Call, cost: float) -> None:
        """The call cost `cost` (frostline.capabilities.costs): it replaces the catalog price
        reserved from the budget when the rule let the call through."""
        self._stats.spend_usd += cost
        self._spend.settle(call.price, cost)

    def _commit(self, call: Call, call_id: int | None, produced: ProviderResult) -> Reply:
        """Queue the commit of a result (its audit event in the same transaction) and
        reply with the result as the store will hold it."""
        identity, row = call.identity, call.row
        cost = call_cost(produced.usage, call.price)
        slot = SlotRecord(self._run_id, identity.site, identity.path, identity.occurrence,
                          call.capability, call.digest, produced.result, dict(produced.usage),
                          self._attempt)
        audit = {"identity": call.text, "capability": call.capability, "digest": call.digest,
                 "price_usd": call.price, "cost_usd": cost, "usage": dict(produced.usage),
                 "idempotency_key": call.key}
        # The script receives the result as the store will hold it (its JSON form).
        try:
            result = _decode(storable_json(produced.result, f"the result of {call.text}",
                                           too_deep=ResultTooDeep, identity=call.text))
        except FrostlineError as exc:  # cannot be committed: the call stays pending
            self._settle_cost(call, call.price)  # pending: counted at its catalog price
            call.conclude("failed")
            self._stop.stop(exc)
            return stop_reply(exc)
        self._settle_cost(call, cost)
        call.conclude("executed")
        if call_id is not None:
            # The audit row rides in the commit's transaction: no fsync of its own, and
            # it exists exactly when the commit does. Buffered replays go first. The
            # reply does not wait for durability (see the module docstring).
            self._trail.flush()
            self._writes.settle(self._commit_checker(call, slot, result), CommitCall(
                call_id, slot, event=("executed", {"attempt": self._attempt, **audit}),
                resolve_pending="retry_of" in row))
        else:  # fail-open with no attempt record: nothing to commit, audit on its own
            self._trail.event("executed", audit)
        return {"ok": True, "result": result}

    def _failed(self, call: Call, call_id: int | None, exc: Exception) -> Reply:
        """A provider that rejected or failed the call: a failed call, never committed."""
        err = exc if isinstance(exc, ProviderError) else ProviderCrashed(
            f"provider for {call.capability} failed: {type(exc).__name__}: {exc}")
        err.fields.setdefault("identity", call.text)
        err.fields.setdefault("capability", call.capability)
        if err.outcome_unknown and call.fails_closed:
            self._settle_cost(call, call.price)  # it may have run: its catalog price
            return self._outcome_unknown(call, err)
        # What a provider said is quoted as it came, except what no store can hold.
        shown = storable_copy(err.to_dict())
        self._settle_cost(call, rejected_cost(shown))
        call.conclude("failed", shown)
        if call_id is not None:
            self._writes.settle(self._writes.stops_on_failure("fail_call"),
                                FailCall(call_id, shown))
        self._trail.event("provider_error", shown)
        return raise_reply(err)

    def _outcome_unknown(self, call: Call, err: ProviderError) -> Reply:
        """The provider may have executed the call and cannot say (a connection lost in the
        middle of it): its attempt record stays pending, so this run stops as unresolved now
        and every later attempt fails closed on it until an operator reconciles it."""
        call.conclude("unresolved", err.to_dict())
        stop = AttemptUnresolved(
            f"{call.text} ({call.capability}) was dispatched and its outcome is unknown: "
            f"{err.message}. The provider may have run it; reconcile it with 'frostline "
            f"reconcile {self._run_id} {call.text} --result @FILE' or '--abandon'",
            identity=call.text, capability=call.capability, attempt=self._attempt,
            cause=err.to_dict())
        self._stop.stop(stop)
        self._trail.event("unresolved", stop.to_dict())
        return stop_reply(stop)

    def _undispatched(self, call: Call, call_id: int | None, *, sent: bool = False) -> Reply:
        """A call the run stopped before its dispatch: release its budget, and mark its
        attempt record (if written) failed, since the provider never saw it. A free read-only
        call that was `sent` meanwhile is marked failed too: it changed nothing, and its
        result was neither delivered nor committed."""
        stopped = self._stop.error
        assert stopped is not None
        self._spend.release(call.price)
        call.conclude("stopped")
        if call_id is not None:
            what = ("sent (read-only, free) but its result was discarded, because the run "
                    "stopped before its attempt record was settled: " if sent else
                    "the run stopped before this call was dispatched: ")
            self._writes.settle(self._writes.stops_on_failure("fail_call"), FailCall(
                call_id, {"code": "not_delivered" if sent else "not_dispatched",
                          "message": what + stopped.message}))
        return stop_reply(stopped)

    def _commit_checker(self, call: Call, slot: SlotRecord, result: Any) -> OnDone:
        def check(exc: BaseException | None, stored: Any) -> None:
            if exc is None and (stored.digest != slot.digest or stored.result != result):
                # The identity was committed by someone else meanwhile, with another result:
                # the script saw a value that is not the committed one. Stop before it acts.
                exc = CommittedElsewhere(
                    f"{call.text} was committed by another writer while this attempt "
                    "ran it; the result this attempt saw is not the committed one. Start a "
                    "new attempt", identity=call.text)
            if exc is None:
                return
            call.conclude("store_unavailable" if isinstance(exc, StoreUnavailable)
                          else "failed")
            self._stop.stop(self._writes.unavailable("commit_call", exc))
        return check

    async def _begin(self, call: Call) -> int | None:
        """Write the durable attempt record; None only when fail-open let a failure pass."""
        return await self._begun(call, self._writes.start(BeginCall(
            self._run_id, self._attempt, call.identity, call.capability, call.digest,
            call.key)))

    async def _begun(self, call: Call, begun: Future[Any]) -> int | None:
        """The attempt record `begun` once durable; None only when fail-open let a failure
        pass."""
        try:
            return int(await self._writes.durable("begin_call", begun))
        except StoreUnavailable:
            if not self._fail_open:
                raise
            log.error("FAIL-OPEN: the attempt record for %s in run %s could not be written; "
                      "dispatching anyway because fail-open was requested. A crash now can "
                      "repeat this effect undetected.", call.identity, self._run_id)
            return None
