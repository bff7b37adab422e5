"""What dispatch does with a wait: deliver its answer, or end the attempt `waiting`.

A call of a wait capability (`human.approve`, `event.wait`, `timer.sleep`) that the rule let
through (not committed: a committed one replays like any call) comes here before its attempt
record is written. The wait is recorded in the store with its first reach; if it has an
answer (given, a kept event, a due timer) dispatch commits that answer as the call's result,
exactly as it commits a provider's; if not, the run stops with `Waiting` and spends nothing
more: no attempt record is left pending, so the next attempt is not blocked by it.

A call of a capability marked ``approval = "required"`` first waits for its implicit approval
at its own identity: approved, it is dispatched; rejected, it fails with `ApprovalRejected`,
which the script may catch. An answer binds the digest of what was asked, so a repair that
changes the payload of an answered wait stops on a `Divergence` before anyone is asked again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from frostline.capabilities.catalog import WAIT_CAPABILITIES, Catalog
from frostline.contract.waits import AnswerRecord, WaitRecord, implicit_wait, iso, wait_of
from frostline.errors import ApprovalRejected, Divergence, Waiting
from frostline.runtime.call import Call, Reply, RunStop, raise_reply, stop_reply
from frostline.store.base import Store

Clock = Callable[[], float]


@dataclass(frozen=True)
class Delivery:
    """The answer a wait received: dispatch commits it as the call's result."""

    result: Any


class WaitDesk:
    """The waits of one attempt.

    Example::

        desk = WaitDesk(store, "run-1", 2, catalog, stop)
        decided = await desk.decide(call)  # Delivery, a reply (stop or raise), or None
    """

    def __init__(self, store: Store, run_id: str, attempt: int, catalog: Catalog,
                 stop: RunStop, *, clock: Clock = time.time) -> None:
        self._store = store
        self._run_id = run_id
        self._attempt = attempt
        self._catalog = catalog
        self._stop = stop
        self._clock = clock
        self.waiting: list[dict[str, Any]] = []  # the waits this attempt stopped on

    def concerns(self, capability: str) -> bool:
        """Whether a call of `capability` waits (itself, or for its approval) first."""
        if capability in WAIT_CAPABILITIES:
            return True
        cap = self._catalog.get(capability)
        return cap is not None and cap.approval_required

    async def decide(self, call: Call) -> Delivery | Reply | None:
        """A wait's answer to deliver, the reply of a call that may not go on (the run waits,
        diverged, or its approval was rejected), or None: dispatch the call as usual."""
        now = self._clock()
        if call.capability in WAIT_CAPABILITIES:
            asked = wait_of(self._run_id, call.text, call.capability, call.payload,
                            call.digest, self._attempt, now)
        else:
            asked = implicit_wait(self._run_id, call.text, call.capability, call.payload,
                                  self._attempt, now)
        wait, answer = await asyncio.to_thread(self._store.settle_wait, asked, now)
        if answer is None:
            return self._wait(call, wait)
        if answer.digest != asked.digest:
            return self._diverged(call, asked, answer)
        if call.capability in WAIT_CAPABILITIES:
            return Delivery(answer.value)
        if isinstance(answer.value, dict) and answer.value.get("approved") is True:
            return None
        return self._rejected(call, asked, answer)

    def _wait(self, call: Call, wait: WaitRecord) -> Reply:
        shown = {"identity": wait.identity, "kind": wait.kind, "capability": wait.capability,
                 "name": wait.name, "due_at": iso(wait.due_at)}
        self.waiting.append(shown)
        resume = f"'frostline resume {self._run_id}'"
        what = {"approval": "an approval", "event": f"the event {wait.name!r}",
                "timer": f"a timer due at {iso(wait.due_at)}"}[wait.kind]
        how = {"approval": f"answer it with 'frostline approve {self._run_id} {wait.identity}' "
                           f"(or --reject), then {resume} goes on from here",
               "event": f"answer it with 'frostline signal {self._run_id} {wait.name} --data "
                        f"JSON', then {resume} goes on from here",
               "timer": f"nothing needs answering: once it is due, {resume} goes on from "
                        "here"}[wait.kind]
        err = Waiting(f"{call.text} waits for {what}; {how} ('frostline serve' and workers "
                      "resume it themselves)", identity=wait.identity, waits=self.waiting)
        call.conclude("waiting")
        self._stop.stop(err)
        return stop_reply(err)

    def _diverged(self, call: Call, asked: WaitRecord, answer: AnswerRecord) -> Reply:
        div = Divergence(
            f"{asked.identity} was answered for a payload with digest {answer.digest[:12]}… "
            f"and is now reached with digest {asked.digest[:12]}…; what was answered cannot "
            "change — revert the payload or start a new run (nobody is asked again)",
            identity=asked.identity, recorded={"digest": answer.digest},
            received={"digest": asked.digest})
        call.conclude("diverged")
        self._stop.stop(div)
        return stop_reply(div)

    def _rejected(self, call: Call, asked: WaitRecord, answer: AnswerRecord) -> Reply:
        value = answer.value if isinstance(answer.value, dict) else {}
        reason = value.get("reason")
        err = ApprovalRejected(
            f"{call.text} ({call.capability}) was rejected by {value.get('by', answer.by)}"
            + (f": {reason}" if reason else "") + "; it was not dispatched",
            identity=call.text, capability=call.capability, approval=asked.identity,
            by=value.get("by", answer.by), reason=reason)
        call.conclude("failed", err.to_dict())
        return raise_reply(err)
