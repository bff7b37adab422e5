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
execution's event is written in the transaction of its commit. Replay events are buffered and
written in batches (`REPLAY_BATCH`), always before any later event and by `drain()`, so the
log still holds one `replay` event per replayed identity, in invocation order.

Writes go to the store without a thread hand-off (`Store.write_nowait`), and the store makes
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
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import Counter, deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import CallContext, Provider
from frostline.contract.identity import Identity, digest, path_text
from frostline.contract.ledger import OccurrenceLedger, RepeatAction
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord, SlotRecord
from frostline.errors import (
    AttemptUnresolved,
    BudgetExceeded,
    CallDenied,
    Divergence,
    FrostlineError,
    GrantDenied,
    PayloadInvalid,
    ProviderError,
    SemanticRepeatDenied,
    StoreUnavailable,
)
from frostline.runtime import tracing
from frostline.store.base import Store
from frostline.store.jsontext import json_text

log = logging.getLogger("frostline.broker")

MAX_PATH_DEPTH = 32
# Replay events written per transaction at most. A replay has no effect to make durable, so
# its audit row may wait for company; it never waits past the next other event or drain().
REPLAY_BATCH = 256
Reply = dict[str, Any]
OnDone = Callable[[BaseException | None, Any], None]  # (error, value) of a settled write
_decode = json.JSONDecoder().decode


class FrameRejected(CallDenied):
    """A frame failed admission: wrong nonce, unknown site, mismatched capability, bad shape."""

    code = "rpc_rejected"


def stop_reply(err: FrostlineError) -> Reply:
    return {"ok": False, "error": {**err.to_dict(), "kind": "stop"}}


def raise_reply(err: FrostlineError) -> Reply:
    return {"ok": False, "error": {**err.to_dict(), "kind": "raise"}}


class StoreSink:
    """ArtifactSink over the run store: artifacts are content-addressed, so a replay returns
    byte-identical bytes."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def put(self, data: bytes, mime: str) -> str:
        return self._store.put_artifact(data, mime)

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return self._store.get_artifact(ref)


@dataclass
class BrokerStats:
    """Counters of one attempt, and one row per invoked identity in invocation order."""

    executed: int = 0
    replayed: int = 0
    provider_calls: int = 0  # dispatches, including those the provider rejected
    spend_usd: float = 0.0  # at catalog price, per dispatch
    divergences: list[dict[str, Any]] = field(default_factory=list)
    semantic_repeats: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    rejected_frames: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)


class Broker:
    """Admits, decides and dispatches the calls of one attempt.

    Example::

        broker = Broker(store, "run-1", 1, envelope=env, providers=LocalProviders(),
                        whitelist={"orchestrate/#0": "echo"}, prefix=load_prefix(store, "run-1"))
        reply = await broker.submit({"type": "call", "nonce": broker.nonce, ...})
        await broker.drain()
    """

    def __init__(self, store: Store, run_id: str, attempt: int, *, envelope: Envelope,
                 providers: Provider, whitelist: Mapping[str, str | None], prefix: Prefix,
                 catalog: Catalog = DEFAULT_CATALOG,
                 unresolved: Mapping[Identity, CallRecord] | None = None,
                 prior_calls: int = 0, prior_spend_usd: float = 0.0,
                 nonce: str | None = None, fail_open: bool = False) -> None:
        self.store = store
        self.run_id = run_id
        self.attempt = attempt
        self.envelope = envelope
        self.providers = providers
        self.catalog = catalog
        self.whitelist = dict(whitelist)
        self.prefix = prefix
        self.ledger = OccurrenceLedger(prefix.slots())
        self.unresolved = dict(unresolved or {})
        self.nonce = nonce or secrets.token_hex(16)
        self.fail_open = fail_open
        self.stats = BrokerStats()
        self.invoked: list[Identity] = []
        self.stop_error: FrostlineError | None = None
        self._occurrences: Counter[tuple[str, tuple[int, ...]]] = Counter()
        self._races: Counter[tuple[int, ...]] = Counter()
        self._calls_used = prior_calls
        self._spend_used = prior_spend_usd
        # Tokens are only known after a call returns, so the token budget stops the calls
        # that would start once it is spent (committed usage of earlier attempts included).
        self._tokens_used = sum(_tokens(s.usage) for s in prefix.slots())
        self._tasks: set[asyncio.Task[Any]] = set()
        self._dispatch: asyncio.Semaphore | None = None
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        # capability → may be replayed, under the envelope it was decided for
        self._servable: dict[str, bool] = {}
        self._servable_under: Envelope | None = None
        self._replays: list[tuple[str, dict[str, Any]]] = []  # buffered replay events
        # Writes queued and not yet checked, in queue order: (number, future, method, on_done).
        self._settling: deque[tuple[int, Future[Any], str, OnDone]] = deque()
        self._queued = 0  # settling writes queued so far
        self._sink = StoreSink(store)

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

    def _admit(self, frame: Mapping[str, Any]) -> Any:
        if not secrets.compare_digest(str(frame.get("nonce", "")), self.nonce):
            return self._reject("nonce", "frame nonce does not match this attempt", frame)
        kind = frame.get("type")
        path = frame.get("path")
        if (not isinstance(path, list) or len(path) > MAX_PATH_DEPTH
                or not all(type(i) is int and 0 <= i < self.envelope.max_fanout for i in path)):
            return self._reject("path", f"implausible fanout path {path!r} (indexes must be "
                                f"< max_fanout {self.envelope.max_fanout})", frame)
        steps = tuple(path)
        if kind == "decide":
            value = frame.get("value")
            if type(value) is not int or not 0 <= value < self.envelope.max_fanout:
                return self._reject("decide", f"implausible race winner {value!r}", frame)
            ordinal = self._races[steps]
            self._races[steps] += 1
            return self._decide(f"race:{path_text(steps)}#{ordinal}", value)
        if kind != "call":
            return self._reject("type", f"unexpected frame type {kind!r}", frame)
        site, capability, payload = frame.get("site"), frame.get("capability"), frame.get("payload")
        if not isinstance(site, str) or site not in self.whitelist:
            return self._reject("site", f"callsite {site!r} is not in the host's annotation",
                                frame)
        if capability != self.whitelist[site]:
            return self._reject("capability", f"callsite {site} is annotated for "
                                f"{self.whitelist[site]!r}, the frame asks for {capability!r}",
                                frame)
        if not isinstance(payload, dict):
            return self._reject("payload", "the payload must be a JSON object", frame)
        if self.stop_error is not None:
            return stop_reply(self.stop_error)
        occurrence = self._occurrences[(site, steps)]
        self._occurrences[(site, steps)] += 1
        identity = Identity(site, steps, occurrence)
        self.invoked.append(identity)
        # str(identity), spelled out: this runs for every frame of a replayed prefix.
        ident = f"{site}@{'.'.join(map(str, steps)) if steps else ''}:{occurrence}"
        cap_name = str(capability)
        row: dict[str, Any] = {"identity": ident, "capability": cap_name}
        hit = self._replay_hit(identity, ident, cap_name, payload, row)
        if hit is not None:
            self.stats.calls.append(row)
            tracing.instant("frostline.call", run_id=self.run_id, attempt=self.attempt,
                            identity=ident, capability=cap_name, outcome="replayed",
                            replayed=True)
            return hit
        return self._call(identity, cap_name, payload, ident=ident)

    def _reject(self, reason: str, message: str, frame: Mapping[str, Any]) -> Reply:
        shown = {k: frame.get(k) for k in ("type", "site", "path", "capability") if k in frame}
        err = FrameRejected(f"rejected frame ({reason}): {message}", reason=reason, frame=shown)
        self.stats.rejected_frames.append({"reason": reason, **shown})
        log.warning("rejected RPC frame for run %s: %s", self.run_id, err.message)
        self._stop(err)
        self._event("rpc_rejected", {"reason": reason, "message": message, **shown})
        return stop_reply(err)

    # the runtime rule -------------------------------------------------------------------
    async def _call(self, identity: Identity, capability: str, payload: dict[str, Any], *,
                    ident: str | None = None) -> Reply:
        ident = str(identity) if ident is None else ident
        row: dict[str, Any] = {"identity": ident, "capability": capability}
        self.stats.calls.append(row)
        with tracing.span("frostline.call", run_id=self.run_id, attempt=self.attempt,
                          identity=ident, capability=capability) as span:
            try:
                return await self._guarded_rule(identity, ident, capability, payload, row)
            finally:
                tracing.annotate(span, outcome=row.get("outcome"),
                                 replayed=row.get("outcome") == "replayed")

    async def _guarded_rule(self, identity: Identity, ident: str, capability: str,
                            payload: dict[str, Any], row: dict[str, Any]) -> Reply:
        try:
            return await self._rule(identity, ident, capability, payload, row)
        except StoreUnavailable as exc:
            row.setdefault("outcome", "store_unavailable")
            self._stop(exc)
            return stop_reply(exc)
        except FrostlineError as exc:
            # e.g. the store refused a result it cannot hold: the call stays pending (a crash
            # window the next attempt reports), and this run stops.
            row.setdefault("outcome", "failed")
            self._stop(exc)
            return stop_reply(exc)
        except Exception as exc:
            log.exception("broker failure on %s in run %s", identity, self.run_id)
            err = FrostlineError(f"internal error while handling {identity}: "
                                 f"{type(exc).__name__}: {exc}", identity=str(identity))
            row.setdefault("outcome", "failed")
            self._stop(err)
            return stop_reply(err)

    def _replay_hit(self, identity: Identity, ident: str, capability: str,
                    payload: dict[str, Any], row: dict[str, Any]) -> Reply | None:
        """The reply of a replay, decided without waiting for anything; None if not one.

        A replay hit is a granted call, served by this host, whose capability and payload
        digest equal those of the identity's committed slot. Its payload is the committed
        one, which passed the input schema when it executed, so it is not validated again;
        every other call takes the whole rule (schema included) in `_rule`.
        """
        slot = self.prefix.get(identity)
        if slot is None or slot.capability != capability:
            return None
        if self._servable_under is not self.envelope:  # grants changed (a graph state's)
            self._servable, self._servable_under = {}, self.envelope
        servable = self._servable.get(capability)
        if servable is None:  # granted, in the catalog, served here
            servable = self._servable[capability] = (
                self.envelope.granted(capability, self.catalog)
                and self.catalog.get(capability) is not None
                and capability in self.providers.capabilities())
        if not servable:
            return None
        try:
            h = digest(payload)
        except PayloadInvalid:
            return None
        if h != slot.digest:
            return None
        self.stats.replayed += 1
        row["digest"] = h
        row["outcome"] = "replayed"
        # No effect happened, so the reply need not wait for the audit write: it joins the
        # next batch. drain() writes it at the latest; a failed write stops the run.
        self._replays.append(("replay", {"attempt": self.attempt, "identity": ident,
                                         "capability": capability, "digest": h,
                                         "committed_in": slot.attempt}))
        if len(self._replays) >= REPLAY_BATCH:
            self._queue_replays()
        return {"ok": True, "result": slot.result}

    async def _rule(self, identity: Identity, ident: str, capability: str,
                    payload: dict[str, Any], row: dict[str, Any]) -> Reply:
        hit = self._replay_hit(identity, ident, capability, payload, row)
        if hit is not None:
            return hit
        if not self.envelope.granted(capability, self.catalog):
            return self._deny(row, GrantDenied(
                f"capability {capability} is not granted by this run's envelope; add it to "
                "'grants'", capability=capability, identity=ident))
        cap = self.catalog.get(capability)
        if cap is None or capability not in self.providers.capabilities():
            return self._deny(row, GrantDenied(
                f"no provider serves {capability} on this host", capability=capability,
                identity=ident))
        problem = self._schema_problem(capability, cap.input_schema, payload)
        if problem is not None:
            return self._deny(row, PayloadInvalid(
                f"payload of {capability} at {ident} is invalid: {problem}; fix the payload "
                "(nothing was spent)", capability=capability, identity=ident), stop=False)
        try:
            h = digest(payload)
        except PayloadInvalid as exc:
            return self._deny(row, exc, stop=False)
        row["digest"] = h

        slot = self.prefix.get(identity)
        if slot is not None:  # committed, but not a replay hit (see _replay_hit)
            div = Divergence(
                f"{ident} was committed as {slot.capability} with digest {slot.digest[:12]}… "
                f"and is now reached as {capability} with digest {h[:12]}…; the committed "
                "payload cannot change — revert the payload or start a new run",
                identity=ident, recorded={"capability": slot.capability, "digest": slot.digest},
                received={"capability": capability, "digest": h})
            row["outcome"] = "diverged"
            self.stats.divergences.append(div.to_dict())
            self._stop(div)
            self._event("divergence", div.to_dict())
            return stop_reply(div)

        honours = self.providers.honours_idempotency_keys(capability)
        pending = self.unresolved.get(identity)
        if pending is not None:
            if cap.side_effecting and not honours:
                err = AttemptUnresolved(
                    f"{ident} ({capability}) was dispatched in attempt {pending.attempt} and "
                    "never committed; the provider may have run it. Reconcile it with "
                    f"'frostline reconcile {self.run_id} {ident} --result @FILE' or "
                    "'--abandon'", identity=ident, capability=capability,
                    attempt=pending.attempt)
                row["outcome"] = "unresolved"
                self._stop(err)
                self._event("unresolved", err.to_dict())
                return stop_reply(err)
            row["retry_of"] = pending.call_id
            self._event("unresolved_retry", {
                "identity": ident, "capability": capability, "call_id": pending.call_id,
                "reason": "idempotency key" if honours else "read-only"})

        repeat = self.ledger.check(identity, capability, h, policy=self.envelope.ledger_policy,
                                   side_effecting=cap.side_effecting)
        if repeat is not None:
            self.stats.semantic_repeats.append(repeat.to_dict())
            row["semantic_repeat"] = repeat.action.value
            self._event("semantic_repeat", repeat.to_dict())
            if repeat.action is RepeatAction.DENY:
                return self._deny(row, SemanticRepeatDenied(
                    f"{ident} repeats a payload already committed at occurrence(s) "
                    f"{', '.join(map(str, repeat.committed))} of the same site and path; the "
                    "ledger policy denies it. Set ledger_policy to 'warn' to allow a second "
                    "take", identity=ident, capability=capability,
                    committed_occurrences=list(repeat.committed)), event=False)

        budget = self.envelope.budget
        price = float(cap.price_usd)
        if self._calls_used + 1 > budget.calls:
            return self._deny(row, _budget(f"{ident} would be call {self._calls_used + 1} "
                                           f"of a budget of {budget.calls} calls", ident))
        if self._spend_used + price > budget.usd + 1e-12:
            return self._deny(row, _budget(
                f"{ident} ({capability}, ${price:.4f}) would bring spend to "
                f"${self._spend_used + price:.4f}, over the budget of ${budget.usd:.4f}", ident))
        if budget.tokens is not None and self._tokens_used >= budget.tokens:
            return self._deny(row, _budget(
                f"{ident} would start after {self._tokens_used} tokens were used, with a "
                f"budget of {budget.tokens} tokens", ident))
        # Reserve before the first await so concurrent calls cannot overshoot together.
        self._calls_used += 1
        self._spend_used += price
        key = f"{self.run_id}/{ident}" if honours else None
        return await self._dispatch_call(identity, ident, capability, payload, h, price, key,
                                         row)

    async def _dispatch_call(self, identity: Identity, ident: str, capability: str,
                             payload: dict[str, Any], h: str, price: float, key: str | None,
                             row: dict[str, Any]) -> Reply:
        if self._dispatch is None:
            self._dispatch = asyncio.Semaphore(self.envelope.concurrency)
        async with self._dispatch:
            if self.stop_error is not None:  # stopped while this call waited for a slot
                return self._undispatched(row, price, None)
            earlier = self._queued  # writes queued before this attempt record
            call_id = await self._begin(identity, capability, h, key)
            # Queue order makes those writes durable by now; each must have succeeded, and
            # nothing may have stopped the run meanwhile, before this effect may happen.
            await self._settled(earlier)
            if self.stop_error is not None:
                return self._undispatched(row, price, call_id)
            self.stats.provider_calls += 1
            self.stats.spend_usd += price
            try:
                produced = await self.providers.invoke(
                    capability, payload, CallContext(self.run_id, ident, key, self._sink))
            except Exception as exc:
                err = exc if isinstance(exc, ProviderError) else ProviderError(
                    f"provider for {capability} failed: {type(exc).__name__}: {exc}",
                    code="provider_exception")
                err.fields.setdefault("identity", ident)
                err.fields.setdefault("capability", capability)
                row["outcome"] = "failed"
                row["error"] = err.to_dict()
                if call_id is not None:
                    self._settle_write(self._stop_on_failure("fail_call"),
                                       "fail_call", call_id, err.to_dict())
                self._event("provider_error", err.to_dict())
                return raise_reply(err)
            slot = SlotRecord(self.run_id, identity.site, identity.path, identity.occurrence,
                              capability, h, produced.result, dict(produced.usage), self.attempt)
            self._tokens_used += _tokens(produced.usage)
            if call_id is None:  # fail-open: the attempt write failed; try once more now
                call_id = await self._begin(identity, capability, h, key)
            audit = {"identity": ident, "capability": capability, "digest": h,
                     "price_usd": price, "usage": dict(produced.usage), "idempotency_key": key}
            # The script receives the result as the store will hold it (its JSON form).
            try:
                result = _decode(json_text(produced.result, f"the result of {ident}"))
            except FrostlineError as exc:  # cannot be committed: the call stays pending
                row["outcome"] = "failed"
                self._stop(exc)
                return stop_reply(exc)
            self.stats.executed += 1
            row["outcome"] = "executed"
            if call_id is not None:
                # The audit row rides in the commit's transaction: no fsync of its own, and
                # it exists exactly when the commit does. Buffered replays go first. The
                # reply does not wait for durability (see the module docstring).
                self._queue_replays()
                self._settle_write(self._commit_checker(row, slot, result), "commit_call",
                                   call_id, slot,
                                   event=("executed", {"attempt": self.attempt, **audit}),
                                   resolve_pending="retry_of" in row)
            else:  # fail-open with no attempt record: nothing to commit, audit on its own
                self._event("executed", audit)
            return {"ok": True, "result": result}

    def _undispatched(self, row: dict[str, Any], price: float, call_id: int | None) -> Reply:
        """A call the run stopped before its dispatch: release its budget, and mark its
        attempt record (if written) failed, since the provider never saw it."""
        assert self.stop_error is not None
        self._calls_used -= 1
        self._spend_used -= price
        row["outcome"] = "stopped"
        if call_id is not None:
            self._settle_write(self._stop_on_failure("fail_call"), "fail_call", call_id, {
                "code": "not_dispatched", "message": "the run stopped before this call was "
                "dispatched: " + self.stop_error.message})
        return stop_reply(self.stop_error)

    def _commit_checker(self, row: dict[str, Any], slot: SlotRecord, result: Any) -> OnDone:
        def check(exc: BaseException | None, stored: Any) -> None:
            if exc is None and (stored.digest != slot.digest or stored.result != result):
                # The identity was committed by someone else meanwhile, with another result:
                # the script saw a value that is not the committed one. Stop before it acts.
                exc = FrostlineError(
                    f"{row['identity']} was committed by another writer while this attempt ran "
                    "it; the result this attempt saw is not the committed one. Start a new "
                    "attempt", identity=row["identity"])
            if exc is None:
                return
            row["outcome"] = "store_unavailable" if isinstance(exc, StoreUnavailable) else "failed"
            self.stats.executed -= 1
            self._stop(self._unavailable("commit_call", exc))
        return check

    async def _begin(self, identity: Identity, capability: str, h: str,
                     key: str | None) -> int | None:
        try:
            return int(await self._store_write("begin_call", self.run_id, self.attempt,
                                               identity, capability, h, key))
        except StoreUnavailable:
            if not self.fail_open:
                raise
            log.error("FAIL-OPEN: the attempt record for %s in run %s could not be written; "
                      "dispatching anyway because fail-open was requested. A crash now can "
                      "repeat this effect undetected.", identity, self.run_id)
            return None

    # decisions ----------------------------------------------------------------------------
    async def _decide(self, key: str, value: int) -> Reply:
        if self.stop_error is not None:
            return stop_reply(self.stop_error)
        try:
            stored = await self._store_write("decide", self.run_id, key, value)
        except StoreUnavailable as exc:
            self._stop(exc)
            return stop_reply(exc)
        self._event("race_decided", {"key": key, "proposed": value, "winner": stored})
        return {"ok": True, "result": stored}

    # helpers --------------------------------------------------------------------------
    def _schema_problem(self, capability: str, schema: Mapping[str, Any],
                        payload: dict[str, Any]) -> str | None:
        validator = self._validators.get(capability)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            validator = cls(dict(schema))
            self._validators[capability] = validator
        problems = sorted(validator.iter_errors(payload), key=lambda e: list(e.path))
        if not problems:
            return None
        first = problems[0]
        where = "/".join(str(p) for p in first.path) or "(payload)"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"{where}: {first.message}{more}"

    def _deny(self, row: dict[str, Any], err: CallDenied, *, stop: bool = True,
              event: bool = True) -> Reply:
        row["outcome"] = "invalid" if isinstance(err, PayloadInvalid) else "denied"
        row["error"] = err.to_dict()
        self.stats.denials.append(err.to_dict())
        if stop:
            self._stop(err)
        if event:
            self._event("denied", err.to_dict())
        return stop_reply(err) if stop else raise_reply(err)

    def _stop(self, err: FrostlineError) -> None:
        if self.stop_error is None:
            self.stop_error = err

    # writes ---------------------------------------------------------------------------------
    def _unavailable(self, operation: str, exc: BaseException) -> FrostlineError:
        if isinstance(exc, FrostlineError):
            return exc
        err = StoreUnavailable(f"store failed during {operation}: {type(exc).__name__}: {exc}",
                               run_id=self.run_id)
        err.__cause__ = exc
        return err

    async def _store_write(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Queue a write and wait until it is durable; any failure becomes StoreUnavailable
        (a FrostlineError the store raised on purpose passes through)."""
        try:
            return await asyncio.wrap_future(self.store.write_nowait(method, *args, **kwargs))
        except Exception as exc:
            raise self._unavailable(method, exc) from exc

    def _settle_write(self, on_done: OnDone, method: str, *args: Any, **kwargs: Any) -> None:
        """Queue a write whose durability no reply waits for; `on_done(error, value)` runs
        once it is settled and checked — before the next dispatch, or in drain()."""
        future = self.store.write_nowait(method, *args, **kwargs)
        self._queued += 1
        self._settling.append((self._queued, future, method, on_done))

    async def _settled(self, upto: int) -> None:
        """Check, in queue order, every settling write numbered up to `upto`.

        The store makes writes durable in queue order, so once a later write is durable these
        are done and this costs no wait; each write is checked once. A failure stops the run.
        """
        while self._settling and self._settling[0][0] <= upto:
            _, future, method, on_done = self._settling[0]
            if not future.done():
                await asyncio.wait([asyncio.wrap_future(future)])
                continue  # another waiter may have checked it meanwhile
            self._settling.popleft()
            if future.cancelled():
                on_done(StoreUnavailable(f"the store write {method} was cancelled",
                                         run_id=self.run_id), None)
            elif (exc := future.exception()) is not None:
                on_done(self._unavailable(method, exc), None)
            else:
                on_done(None, future.result())

    def _stop_on_failure(self, operation: str) -> OnDone:
        def check(exc: BaseException | None, _: Any) -> None:
            if exc is not None:
                self._event_failed(operation, self._unavailable(operation, exc))
        return check

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        """Append an audit event after the replays buffered before it (queue order)."""
        self._queue_replays()
        self._settle_write(self._stop_on_failure(f"event {kind}"), "append_event",
                           self.run_id, kind, {"attempt": self.attempt, **data})

    def _event_failed(self, kind: str, exc: FrostlineError) -> None:
        if self.fail_open:
            log.error("FAIL-OPEN: could not record %s for run %s: %s", kind, self.run_id, exc)
            return
        # The audit trail is part of the contract: stop before anything else happens.
        self._stop(exc if isinstance(exc, StoreUnavailable) else StoreUnavailable(
            f"could not record {kind}: {exc}", run_id=self.run_id))

    def _queue_replays(self) -> None:
        """Queue the buffered replay events, in order, ahead of any write queued after."""
        if self._replays:
            batch, self._replays = self._replays, []
            self._settle_write(self._stop_on_failure("replay events"), "append_events",
                               self.run_id, batch)

    async def drain(self) -> None:
        """Wait until every admitted call has completed and every write is settled."""
        while self._tasks or self._replays or self._settling:
            self._queue_replays()  # the replay events still buffered
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            await self._settled(self._queued)

    def in_flight(self) -> int:
        return len(self._tasks)


def _tokens(usage: Mapping[str, Any]) -> int:
    value = usage.get("tokens", 0)
    return value if type(value) is int and value > 0 else 0


def _budget(message: str, ident: str) -> CallDenied:
    return BudgetExceeded(message + "; nothing was dispatched. Raise the envelope's budget or "
                          "reduce the work", identity=ident)
