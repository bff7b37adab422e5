"""Waits and their answers: a call whose result arrives from outside the run.

A wait is reached like any call, at its identity ι. Three capabilities wait
(`frostline.capabilities.catalog.WAIT_CAPABILITIES`); a capability marked
``approval = "required"`` makes each of its calls wait first for an *implicit* approval, at an
identity of its own (`approval_identity`), whose payload is the call it approves.

Each reached wait is recorded once (`WaitRecord`), with the digest of what it asks; an answer
(`AnswerRecord`) is taken once per wait and binds that digest, so a repair that changes what was
approved is a divergence, never a second question. Pure data and pure functions: the clock is
the caller's, times are POSIX seconds, and `iso()` is how they are shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from frostline.contract.identity import digest
from frostline.errors import AnswerInvalid

WaitKind = Literal["approval", "event", "timer"]
KIND_OF: dict[str, WaitKind] = {"human.approve": "approval", "event.wait": "event",
                                "timer.sleep": "timer"}
APPROVAL_SUFFIX = "~approval"
MAX_REASON = 2000
MAX_SIGNAL_BYTES = 256 * 1024
# What one run keeps of the events sent to it, delivered or not (the storage a principal's
# signals can take is bounded per run): this many, and this many bytes of JSON in all.
MAX_SIGNALS_PER_RUN = 1000
MAX_SIGNAL_BYTES_PER_RUN = 4 * 1024 * 1024
MAX_BY = 200


@dataclass(frozen=True)
class WaitRecord:
    """A wait some attempt reached: what it asks, and when it is due (timers, timeouts)."""

    run_id: str
    identity: str  # text form; for an implicit approval, approval_identity(call)
    kind: WaitKind
    capability: str  # the wait's capability, or the capability an implicit approval guards
    name: str | None  # an event's name
    payload: Any  # what is asked (an implicit approval: {"capability", "payload"})
    digest: str
    reached_at: float
    due_at: float | None
    attempt: int

    def to_dict(self) -> dict[str, Any]:
        return {"identity": self.identity, "kind": self.kind, "capability": self.capability,
                "name": self.name, "payload": self.payload, "digest": self.digest,
                "reached_at": iso(self.reached_at), "due_at": iso(self.due_at),
                "attempt": self.attempt}


@dataclass(frozen=True)
class AnswerRecord:
    """The one answer a wait receives: its value (the call's result), and for what digest."""

    run_id: str
    identity: str
    value: Any
    digest: str
    by: str
    at: float

    def to_dict(self) -> dict[str, Any]:
        return {"identity": self.identity, "value": self.value, "digest": self.digest,
                "by": self.by, "at": iso(self.at)}


def iso(t: float | None) -> str | None:
    """POSIX seconds as an ISO 8601 UTC instant (None stays None). Waits are checked on the
    way in (`parse_instant`); an instant stored before that, past the year 9999, still
    shows, as its POSIX seconds, rather than failing every read of its run."""
    if t is None:
        return None
    try:
        return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
    except (ValueError, OverflowError, OSError):
        return f"out of range (POSIX {t:.0f})"


def parse_instant(text: str) -> float:
    """An ISO 8601 instant with a zone (``2030-01-01T00:00:00Z``) as POSIX seconds; AnswerInvalid
    for text that is not one, or an instant outside the years 1-9999 in UTC (which no reader
    could show again)."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise AnswerInvalid(f"{text!r} is not an ISO 8601 instant, e.g. 2030-01-01T00:00:00Z") \
            from None
    if parsed.tzinfo is None:
        raise AnswerInvalid(f"{text!r} has no time zone; add Z or an offset")
    try:
        seconds = parsed.astimezone(UTC).timestamp()
        datetime.fromtimestamp(seconds, UTC)
    except (ValueError, OverflowError, OSError):
        raise AnswerInvalid(f"{text!r} is outside the years 1-9999 in UTC; pick an instant "
                            "within them") from None
    return seconds


def approval_identity(call_identity: str) -> str:
    """The identity of the implicit approval that precedes the call at `call_identity`."""
    return call_identity + APPROVAL_SUFFIX


def implicit_payload(capability: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """What an implicit approval asks: the call, as it would be dispatched."""
    return {"capability": capability, "payload": dict(payload)}


def due_at(kind: WaitKind, payload: Mapping[str, Any], reached_at: float) -> float | None:
    """When a wait answers itself: a timer when it wakes, an event at its timeout."""
    if kind == "timer":
        if "until" in payload:
            return parse_instant(str(payload["until"]))
        return reached_at + float(payload.get("seconds", 0))
    if kind == "event" and payload.get("timeout_s") is not None:
        return reached_at + float(payload["timeout_s"])
    return None


def payload_problem(capability: str, payload: Mapping[str, Any]) -> str | None:
    """Why a wait capability cannot wait on `payload` although its schema accepts it (an
    instant that is not one, or out of range), or None; checked before the wait is stored."""
    kind = KIND_OF.get(capability)
    if kind is None:
        return None
    try:
        due_at(kind, payload, 0.0)
    except AnswerInvalid as exc:
        return exc.message
    return None


def wait_of(run_id: str, identity: str, capability: str, payload: Mapping[str, Any],
            payload_digest: str, attempt: int, now: float) -> WaitRecord:
    """The wait a call of a wait capability makes (due times count from `now`, the first
    reach; the store keeps the first reach, so a restart never moves a timer)."""
    kind = KIND_OF[capability]
    name = str(payload["event"]) if kind == "event" else None
    return WaitRecord(run_id, identity, kind, capability, name, dict(payload), payload_digest,
                      now, due_at(kind, payload, now), attempt)


def implicit_wait(run_id: str, call_identity: str, capability: str,
                  payload: Mapping[str, Any], attempt: int, now: float) -> WaitRecord:
    """The implicit approval before a call of a capability that requires approval."""
    asked = implicit_payload(capability, payload)
    return WaitRecord(run_id, approval_identity(call_identity), "approval", capability, None,
                      asked, digest(asked), now, None, attempt)


def approval_value(approved: bool, by: str, reason: str | None, at: float) -> dict[str, Any]:
    """The result of `human.approve`: ``{"approved", "by", "reason", "at"}``."""
    if not isinstance(approved, bool):
        raise AnswerInvalid("approved must be true or false")
    if not isinstance(by, str) or not by or len(by) > MAX_BY:
        raise AnswerInvalid(f"by must be a principal name of 1..{MAX_BY} characters")
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        raise AnswerInvalid(f"reason must be a string of at most {MAX_REASON} characters")
    return {"approved": approved, "by": by, "reason": reason, "at": iso(at)}


def timer_value(now: float, due: float) -> dict[str, Any]:
    """The result of `timer.sleep`: when it woke, and when it was due."""
    return {"woke_at": iso(now), "due_at": iso(due)}


def timeout_value(name: str, now: float) -> dict[str, Any]:
    """The result of an `event.wait` whose timeout passed before its event arrived."""
    return {"timed_out": True, "event": name, "at": iso(now)}


def check_signal(name: Any, body: Any, size: int) -> None:
    """Refuse a malformed signal: a bad name, a body that is not finite JSON, too large."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}", name):
        raise AnswerInvalid(f"event name {name!r} must be 1..128 letters, digits, _ . : - "
                            "(starting with a letter or digit)")
    if size > MAX_SIGNAL_BYTES:
        raise AnswerInvalid(f"the event body is {size} bytes of JSON; the cap is "
                            f"{MAX_SIGNAL_BYTES}")
    if isinstance(body, float) and not math.isfinite(body):
        raise AnswerInvalid("the event body must be JSON data")
