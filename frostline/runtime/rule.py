"""The runtime rule: whether an admitted call replays, stops the run, or may be dispatched.

For ι = (σ, π, ω) and h = digest(payload):

    grants → input schema → runtime rule:
        ι committed, same capability and h   → replay the stored result (no provider call)
        ι committed, other capability or h   → Divergence: stop before any new effect
        ι not committed                      → unresolved check → occurrence ledger →
                                               rebinding guard → budget → dispatch

An attempt the trace check admitted (relocation = "rebind") carries a rebinding, new identity
→ committed identity: a rebound ι is decided against the slot it is bound to (replayed with
the digest checked, a Divergence otherwise), its slot counts as committed at ι for the
occurrence ledger, and no call is dispatched while a rebound slot with the same (capability,
digest) is still to be replayed — a schedule other than the dry replay's could otherwise pay
for a committed request again (frostline.contract.rebind).

The rule only decides: it records what it found in the call's row, queues the audit
events of its decisions, and stops the run where the contract says so. Dispatch is
`frostline.runtime.dispatch`. The budget is reserved here, when the call is let through, so
that concurrent calls cannot overshoot it together; a call that is never dispatched
releases it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from frostline.capabilities.catalog import WAIT_CAPABILITIES, Capability, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity, digest
from frostline.contract.jsonshape import check_storable
from frostline.contract.ledger import OccurrenceLedger, RepeatAction, SemanticRepeat
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord, SlotRecord
from frostline.contract.waits import payload_problem
from frostline.errors import (
    AttemptUnresolved,
    CallDenied,
    Divergence,
    GrantDenied,
    PayloadInvalid,
    SemanticRepeatDenied,
    ValueNotStorable,
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


class Rule:
    """Decides the calls of one attempt against its frozen prefix.

    Example::

        rule = Rule(run_id="run-1", prefix=prefix, catalog=catalog, providers=providers,
                    unresolved={}, spend=Spend(0, 0.0, 0), stats=stats, stop=stop, trail=trail)
        reply = rule.decide(call, envelope)  # None: dispatch it
    """

    def __init__(self, *, run_id: str, prefix: Prefix, catalog: Catalog, providers: Provider,
                 unresolved: Mapping[Identity, CallRecord], spend: Spend, stats: BrokerStats,
                 stop: RunStop, trail: AuditTrail,
                 rebinding: Mapping[Identity, Identity] | None = None) -> None:
        self._run_id = run_id
        self.prefix = prefix
        self.rebinding = dict(rebinding or {})
        # (capability, digest) → rebound slots of that request not replayed yet
        self._awaited: dict[tuple[str, str], int] = {}
        self.catalog = catalog
        self.providers = providers
        self.unresolved = dict(unresolved)
        self.ledger = OccurrenceLedger(prefix.slots())
        for new, old in self.rebinding.items():
            bound = prefix.get(old)
            if bound is not None:
                self.ledger.add(new, bound.digest)
                request = (bound.capability, bound.digest)
                self._awaited[request] = self._awaited.get(request, 0) + 1
        self.spend = spend
        self._stats = stats
        self._stop = stop
        self._trail = trail
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        # capability → may be replayed, under the envelope it was decided for
        self._servable: dict[str, bool] = {}
        self._servable_under: Envelope | None = None

    def replay_hit(self, call: Call, envelope: Envelope) -> Reply | None:
        """The reply of a replay, decided without waiting for anything; None if not one.

        A replay hit is a granted call, served by this host, whose capability and payload
        digest equal those of the identity's committed slot. Its payload is the committed
        one, which passed the input schema when it executed, so it is not validated again;
        every other call takes the whole rule (schema included) in `decide`.
        """
        slot = self.slot_of(call.identity)
        capability = call.capability
        if slot is None or slot.capability != capability:
            return None
        if self._servable_under is not envelope:  # grants changed (a graph state's)
            self._servable, self._servable_under = {}, envelope
        servable = self._servable.get(capability)
        if servable is None:  # granted, in the catalog, served here
            servable = self._servable[capability] = (
                envelope.granted(capability, self.catalog)
                and self.catalog.get(capability) is not None
                and (capability in self.providers.capabilities()
                     or capability in WAIT_CAPABILITIES))
        if not servable:
            return None
        try:
            h = digest(call.payload)
        except PayloadInvalid:
            return None
        if h != slot.digest:
            return None
        row = call.row
        row["digest"] = h
        moved_from: str | None = None
        if self.rebinding and call.identity in self.rebinding:
            moved_from = row["moved_from"] = str(slot.identity)
            request = (capability, h)
            self._awaited[request] = self._awaited.get(request, 1) - 1
        call.conclude("replayed")
        # No effect happened, so the reply need not wait for the audit write: it joins the
        # next batch. drain() writes it at the latest; a failed write stops the run.
        self._trail.replay(call.text, capability, h, slot.attempt, moved_from)
        return {"ok": True, "result": slot.result}

    def slot_of(self, identity: Identity) -> SlotRecord | None:
        """The committed slot a call at `identity` answers to: the slot it is rebound to, if
        any, else its own."""
        if self.rebinding:
            bound = self.rebinding.get(identity)
            if bound is not None:
                return self.prefix.get(bound)
        return self.prefix.get(identity)

    def decide(self, call: Call, envelope: Envelope) -> Reply | None:
        """The reply the rule gives `call`, or None when it is to be dispatched: then its
        digest, price and idempotency key are set and its budget is reserved."""
        hit = self.replay_hit(call, envelope)
        if hit is not None:
            return hit
        capability = call.capability
        if not envelope.granted(capability, self.catalog):
            return self._deny(call, GrantDenied(
                f"capability {capability} is not granted by this run's envelope; add it to "
                "'grants'", capability=capability, identity=call.text))
        cap = self.catalog.get(capability)
        if cap is None or (capability not in self.providers.capabilities()
                           and capability not in WAIT_CAPABILITIES):  # the host answers waits
            return self._deny(call, GrantDenied(
                f"no provider serves {capability} on this host", capability=capability,
                identity=call.text))
        invalid = self._digest(call, cap)
        if invalid is not None:
            return invalid
        slot = self.slot_of(call.identity)
        if slot is not None:  # committed, but not a replay hit (see replay_hit)
            return self._diverged(call, slot)
        honours = self.providers.honours_idempotency_keys(capability)
        pending = self.unresolved.get(call.identity)
        if pending is not None:
            unresolved = self._pending(call, pending, cap, honours)
            if unresolved is not None:
                return unresolved
        repeat = self.ledger.check(call.identity, capability, call.digest,
                                   policy=envelope.ledger_policy,
                                   side_effecting=cap.side_effecting)
        if repeat is not None:
            denied = self._repeat(call, repeat)
            if denied is not None:
                return denied
        if self._awaited.get((capability, call.digest), 0) > 0:
            return self._diverged(call, None)
        price = float(cap.price_usd)
        # Reserved before the first await, so concurrent calls cannot overshoot together.
        over = self.spend.claim(call, price, envelope.budget)
        if over is not None:
            return self._deny(call, over)
        call.price = price
        call.key = f"{self._run_id}/{call.text}" if honours else None
        call.fails_closed = cap.effect == "side_effecting" and not honours
        # Free and read-only, and no retry of a pending record: nothing a crash before its
        # record is durable could lose (no spend, no effect to reconcile); see dispatch.
        call.overlaps = (cap.effect == "read_only" and price == 0.0 and pending is None
                         and not cap.approval_required)
        return None

    def _digest(self, call: Call, cap: Capability) -> Reply | None:
        """Check the payload against the input schema and digest it; a failure is a
        catchable denial (nothing was spent)."""
        try:  # before anything walks it recursively, and before it reaches a store
            check_storable(call.payload, "it")
            problem: str | None = self._schema_problem(call.capability, cap.input_schema,
                                                       call.payload)
            if problem is None and call.capability in WAIT_CAPABILITIES:
                problem = payload_problem(call.capability, call.payload)
        except ValueNotStorable as exc:
            problem = exc.message
        if problem is not None:
            return self._deny(call, PayloadInvalid(
                f"payload of {call.capability} at {call.text} is invalid: {problem}; fix the "
                "payload (nothing was spent)", capability=call.capability,
                identity=call.text), stop=False)
        try:
            h = digest(call.payload)
        except PayloadInvalid as exc:
            return self._deny(call, exc, stop=False)
        call.digest = call.row["digest"] = h
        return None

    def _diverged(self, call: Call, slot: SlotRecord | None) -> Reply:
        if slot is None:  # the rebinding guard: a rebound request not replayed yet
            div = Divergence(
                f"{call.text} would send {call.capability} with digest {call.digest[:12]}…, a "
                "request committed earlier and rebound in this attempt but not replayed yet; "
                "it would be paid again, so nothing was dispatched — keep the moved call "
                "before new work", identity=call.text,
                received={"capability": call.capability, "digest": call.digest})
        else:
            div = Divergence(
                f"{call.text} was committed as {slot.capability} with digest "
                f"{slot.digest[:12]}… and is now reached as {call.capability} with digest "
                f"{call.digest[:12]}…; the committed payload cannot change — revert the "
                "payload or start a new run", identity=call.text,
                recorded={"capability": slot.capability, "digest": slot.digest},
                received={"capability": call.capability, "digest": call.digest})
        if slot is not None and slot.identity != call.identity:
            div.fields["bound_to"] = str(slot.identity)
        call.conclude("diverged")
        self._stats.divergences.append(div.to_dict())
        self._stop.stop(div)
        self._trail.event("divergence", div.to_dict())
        return stop_reply(div)

    def _pending(self, call: Call, pending: CallRecord, cap: Capability,
                 honours: bool) -> Reply | None:
        """A call an earlier attempt dispatched and never committed: it may be retried only
        if retrying cannot repeat its effect (read-only, retry-safe, or an idempotency key)."""
        if cap.effect == "side_effecting" and not honours:
            err = AttemptUnresolved(
                f"{call.text} ({call.capability}) was dispatched in attempt {pending.attempt} "
                "and never committed; the provider may have run it. Reconcile it with "
                f"'frostline reconcile {self._run_id} {call.text} --result @FILE' or "
                "'--abandon'", identity=call.text, capability=call.capability,
                attempt=pending.attempt)
            call.conclude("unresolved")
            self._stop.stop(err)
            self._trail.event("unresolved", err.to_dict())
            return stop_reply(err)
        call.row["retry_of"] = pending.call_id
        self._trail.event("unresolved_retry", {
            "identity": call.text, "capability": call.capability, "call_id": pending.call_id,
            "reason": "idempotency key" if honours else cap.effect.replace("_", "-")})
        return None

    def _repeat(self, call: Call, repeat: SemanticRepeat) -> Reply | None:
        self._stats.semantic_repeats.append(repeat.to_dict())
        call.row["semantic_repeat"] = repeat.action.value
        self._trail.event("semantic_repeat", repeat.to_dict())
        if repeat.action is not RepeatAction.DENY:
            return None
        return self._deny(call, SemanticRepeatDenied(
            f"{call.text} repeats a payload already committed at occurrence(s) "
            f"{', '.join(map(str, repeat.committed))} of the same site and path; the "
            "ledger policy denies it. Set ledger_policy to 'warn' to allow a second "
            "take", identity=call.text, capability=call.capability,
            committed_occurrences=list(repeat.committed)), event=False)

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

    def _deny(self, call: Call, err: CallDenied, *, stop: bool = True,
              event: bool = True) -> Reply:
        call.conclude("invalid" if isinstance(err, PayloadInvalid) else "denied", err.to_dict())
        self._stats.denials.append(err.to_dict())
        if stop:
            self._stop.stop(err)
        if event:
            self._trail.event("denied", err.to_dict())
        return stop_reply(err) if stop else raise_reply(err)

