"""A call on its way through the broker, and what became of it and of the run.

The broker's seams (admission, the runtime rule, dispatch, write settlement) hand one `Call`
along: admission creates it with its identity, the rule fills in what it decided (digest,
price, idempotency key), dispatch executes it. What became of the call is its `CallRow`,
which outlives the call in the attempt's `BrokerStats` (the payload does not: a long run
keeps one small row per identity, not every payload it sent). The row is a typed dict, not
an object, because it is the attempt record's JSON as it is, and because every replayed
identity makes one: it costs what the JSON needs and nothing more.

The call owns its outcome: whichever seam decides it says so through `Call.conclude`, which
refuses a transition `OUTCOME_TRANSITIONS` does not allow (an outcome is decided once; only a
commit that fails to settle turns `executed` into `failed` or `store_unavailable`). The
attempt's counts of executed and replayed calls are read from the rows, so they cannot
disagree with them.

The `RunStop` is the one record of why the run stopped: every seam asks it whether the run
stopped and tells it when it must, and whichever stops the run first is the reason the
script sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict, get_args

from frostline.contract.identity import Identity
from frostline.errors import FrostlineError, InternalError

Reply = dict[str, Any]


def stop_reply(err: FrostlineError) -> Reply:
    """The reply of a call the run stopped on: `RunStopped` in the script."""
    return {"ok": False, "error": {**err.to_dict(), "kind": "stop"}}


def raise_reply(err: FrostlineError) -> Reply:
    """The reply of a call that failed on its own: an error the script may catch."""
    return {"ok": False, "error": {**err.to_dict(), "kind": "raise"}}


# What became of one invoked identity. `denied`: refused before dispatch (grant, budget,
# ledger); `invalid`: the payload failed its schema or has no digest; `stopped`: the run
# stopped before its dispatch; `store_unavailable`: the store failed while it was handled;
# `waiting`: a wait with no answer yet ended the attempt.
Outcome = Literal["replayed", "executed", "denied", "invalid", "diverged", "unresolved",
                  "failed", "stopped", "store_unavailable", "waiting"]


#: The outcomes a call's recorded outcome may change to (None: no outcome yet). Every outcome
#: is final except `executed`, whose commit may still fail to settle.
OUTCOME_TRANSITIONS: Mapping[Outcome | None, frozenset[Outcome]] = {
    None: frozenset(get_args(Outcome)),
    "executed": frozenset({"failed", "store_unavailable"}),
}


class CallRow(TypedDict, total=False):
    """One invoked identity in the attempt record's `calls`, in this key order.

    A key is added when the call gets that far, so the row is the JSON the record holds. Its
    outcome may change once after the reply: a commit that fails to settle turns `executed`
    into `failed` (or `store_unavailable`).
    """

    identity: Required[str]
    capability: Required[str]
    digest: str
    moved_from: str  # a rebound replay: the committed identity it replays (issue 30)
    retry_of: int  # the pending call record this call retries
    semantic_repeat: str  # the ledger's action on a repeated payload
    outcome: Outcome
    error: dict[str, Any]


@dataclass(slots=True)
class Call:
    """The call being decided: its identity (with the text form, computed once), what it
    asks for, its row, and what the rule decided for its dispatch."""

    identity: Identity
    text: str  # str(identity)
    capability: str
    payload: dict[str, Any]
    row: CallRow
    digest: str = ""  # set by the rule once the payload is admissible
    price: float = 0.0  # reserved from the budget, released if never dispatched
    key: str | None = None  # idempotency key, for providers that honour one
    fails_closed: bool = True  # an unknown outcome leaves it unresolved (set by the rule)
    # may be sent while its attempt record becomes durable: read-only and free (the rule;
    # see frostline.runtime.dispatch)
    overlaps: bool = False

    @classmethod
    def of(cls, identity: Identity, capability: str, payload: dict[str, Any]) -> Call:
        text = str(identity)
        return cls(identity, text, capability, payload,
                   {"identity": text, "capability": capability})

    @property
    def outcome(self) -> Outcome | None:
        """What became of the call so far (None while it is being decided)."""
        return self.row.get("outcome")

    def conclude(self, outcome: Outcome, error: dict[str, Any] | None = None) -> None:
        """Record what became of the call (and the error it ended with, if any).

        Raises InternalError for a transition `OUTCOME_TRANSITIONS` does not allow: a seam
        that decides a call another seam already decided is a defect in the broker.
        """
        current = self.row.get("outcome")
        if outcome not in OUTCOME_TRANSITIONS.get(current, frozenset()):
            raise InternalError(f"{self.text}: its outcome cannot go from {current!r} to "
                                f"{outcome!r}", identity=self.text)
        self.row["outcome"] = outcome
        if error is not None:
            self.row["error"] = error

    def conclude_unless_decided(self, outcome: Outcome) -> None:
        """Record `outcome` unless the call already has one (a failure that interrupts a
        call after its outcome was decided does not change it)."""
        if "outcome" not in self.row:
            self.row["outcome"] = outcome


@dataclass
class BrokerStats:
    """Counters of one attempt, and one row per invoked identity in invocation order.

    Each field has one writer: the broker (or the dry replay) appends `calls` and
    `rejected_frames`, the rule (frostline.runtime.rule) `divergences`, `semantic_repeats`
    and `denials`, dispatch (frostline.runtime.dispatch) counts `provider_calls` and
    `spend_usd`. `executed` and `replayed` are counted from the rows' outcomes.
    """

    provider_calls: int = 0  # dispatches, including those the provider rejected
    spend_usd: float = 0.0  # what its dispatches cost (frostline.capabilities.costs)
    divergences: list[dict[str, Any]] = field(default_factory=list)
    semantic_repeats: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    rejected_frames: list[dict[str, Any]] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)

    @property
    def executed(self) -> int:
        """Calls executed and committed (or being committed) in this attempt."""
        return sum(1 for row in self.calls if row.get("outcome") == "executed")

    @property
    def replayed(self) -> int:
        """Calls served from the frozen prefix in this attempt."""
        return sum(1 for row in self.calls if row.get("outcome") == "replayed")


class RunStop:
    """Why the run stopped, if it did; the first reason is kept.

    Example: ``stop.stop(err)``; ``if stop.error is not None: return stop_reply(stop.error)``
    """

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: FrostlineError | None = None

    def stop(self, err: FrostlineError) -> None:
        if self.error is None:
            self.error = err
