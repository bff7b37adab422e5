"""A call on its way through the broker, and what became of it and of the run.

The broker's seams (admission, the runtime rule, dispatch, write settlement) hand one `Call`
along: admission creates it with its identity, the rule fills in what it decided (digest,
price, idempotency key), dispatch executes it. What became of the call is its `CallReport`,
which outlives the call in the attempt's `BrokerStats` (the payload does not: a long run
keeps one small record per identity, not every payload it sent). The `RunStop` is shared by
every seam: whichever stops the run first is the reason the script sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from frostline.contract.identity import Identity
from frostline.errors import FrostlineError

Reply = dict[str, Any]


def stop_reply(err: FrostlineError) -> Reply:
    """The reply of a call the run stopped on: `RunStopped` in the script."""
    return {"ok": False, "error": {**err.to_dict(), "kind": "stop"}}


def raise_reply(err: FrostlineError) -> Reply:
    """The reply of a call that failed on its own: an error the script may catch."""
    return {"ok": False, "error": {**err.to_dict(), "kind": "raise"}}


class Outcome(StrEnum):
    """What became of one invoked identity."""

    REPLAYED = "replayed"
    EXECUTED = "executed"
    DENIED = "denied"  # refused before dispatch (grant, budget, ledger)
    INVALID = "invalid"  # the payload failed the input schema or cannot be digested
    DIVERGED = "diverged"
    UNRESOLVED = "unresolved"
    FAILED = "failed"
    STOPPED = "stopped"  # the run stopped before its dispatch
    STORE_UNAVAILABLE = "store_unavailable"


@dataclass(slots=True)
class CallReport:
    """One invoked identity in the attempt's statistics; `as_row()` is its JSON shape.

    A field stays None until the call gets that far. The outcome may change once after the
    reply: a commit that fails to settle turns `executed` into `failed` (or
    `store_unavailable`).
    """

    identity: str
    capability: str
    digest: str | None = None
    retry_of: int | None = None  # the pending call record this call retries
    semantic_repeat: str | None = None  # the ledger's action on a repeated payload
    outcome: Outcome | None = None
    error: dict[str, Any] | None = None

    def as_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"identity": self.identity, "capability": self.capability}
        if self.digest is not None:
            row["digest"] = self.digest
        if self.retry_of is not None:
            row["retry_of"] = self.retry_of
        if self.semantic_repeat is not None:
            row["semantic_repeat"] = self.semantic_repeat
        if self.outcome is not None:
            row["outcome"] = self.outcome.value
        if self.error is not None:
            row["error"] = self.error
        return row


@dataclass(slots=True)
class Call:
    """The call being decided: its identity (with the text form, computed once), what it
    asks for, and what the rule decided for its dispatch."""

    identity: Identity
    text: str  # str(identity)
    capability: str
    payload: dict[str, Any]
    report: CallReport
    digest: str = ""  # set by the rule once the payload is admissible
    price: float = 0.0  # reserved from the budget, released if never dispatched
    key: str | None = None  # idempotency key, for providers that honour one
    fails_closed: bool = True  # an unknown outcome leaves it unresolved (set by the rule)

    @classmethod
    def of(cls, identity: Identity, capability: str, payload: dict[str, Any], *,
           text: str | None = None) -> Call:
        text = str(identity) if text is None else text
        return cls(identity, text, capability, payload, CallReport(text, capability))


@dataclass
class BrokerStats:
    """Counters of one attempt, and one report per invoked identity in invocation order."""

    executed: int = 0
    replayed: int = 0
    provider_calls: int = 0  # dispatches, including those the provider rejected
    spend_usd: float = 0.0  # at catalog price, per dispatch
    divergences: list[dict[str, Any]] = field(default_factory=list)
    semantic_repeats: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    rejected_frames: list[dict[str, Any]] = field(default_factory=list)
    reports: list[CallReport] = field(default_factory=list)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The reports as JSON rows, in invocation order (the attempt record's `calls`)."""
        return [report.as_row() for report in self.reports]


class RunStop:
    """Why the run stopped, if it did; the first reason is kept."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: FrostlineError | None = None

    def stop(self, err: FrostlineError) -> None:
        if self.error is None:
            self.error = err
