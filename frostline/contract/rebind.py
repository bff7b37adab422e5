"""The trace check: may a candidate that moved committed calls replay them instead of paying?

The gate is callsite-level: a committed call moved into a helper, wrapped in a block or given
a computed payload (`P` → `{**P}`) is a `removed` or `call_changed` counterexample even when
it would send exactly the request that was already paid for. Under `relocation = "rebind"`
the runtime runs the candidate once in the sandbox with no provider reachable (the *dry
replay*) and feeds every call it makes to a `Matcher`, which decides per call:

    ι at a site the gate kept intact, committed, same (c, h)  → replay (its own slot)
    ι at a site the gate kept intact, committed, other (c, h) → diverged
    otherwise, an unconsumed *pool* slot with equal (c, h)    → rebound to that slot
    otherwise, ι committed (a vanished site's identity)       → diverged
    otherwise                                                 → frontier (new work)

The *pool* is the committed slots of the frozen sites the gate reported (`removed`,
`call_changed`): the sites the candidate no longer reaches intact. Within one (capability,
digest) the pool is consumed in committed order, each slot at most once. A slot of an intact
site is only ever replayed at its own identity: this is not a content cache.

The verdict admits the candidate iff nothing diverged, every pool slot was consumed, none of
them after the first frontier call arrived (a call after new work may depend on the new
result, which the dry replay cannot know, so the committed call would be paid again), and the
matching is unambiguous. Ambiguity is defined conservatively: two pool slots with equal
(capability, digest) but different committed results consumed by calls in concurrent branches
(paths neither of which is a prefix of the other: program order does not pin which branch gets
which result), or a race decided while pool slots were still unconsumed (the winner, and so
what is consumed next, is timing). Each failure is a `TraceCounterexample` naming the
committed call that would be lost or paid again and where the candidate diverged.

The module is pure: it takes slot records and calls, and returns the rebinding (new identity →
committed identity) that the attempt makes durable before it starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from frostline.contract.identity import Identity, Path, digest

if TYPE_CHECKING:
    from frostline.contract.gate import Counterexample
    from frostline.contract.records import SlotRecord

# Gate counterexample kinds the dry replay may be asked to settle; `capability_changed` never.
REBINDABLE_KINDS = frozenset({"removed", "call_changed"})

MatchKind = Literal["replay", "rebound", "frontier", "diverged"]
TraceKind = Literal["lost", "after_frontier", "diverged", "ambiguous"]


@dataclass(frozen=True)
class Match:
    """What the dry replay decided for one call; `slot` is the committed slot it replays."""

    kind: MatchKind
    identity: Identity
    slot: SlotRecord | None = None


@dataclass(frozen=True)
class TraceCounterexample:
    """One reason the trace check stops a candidate, naming the committed call concerned."""

    kind: TraceKind
    committed: str  # the committed identity that would be lost, paid again or contradicted
    capability: str
    digest: str
    attempt: int  # the attempt that committed it
    at: str | None = None  # the candidate call where it diverged (frontier, diverging call)
    other: str | None = None  # for ambiguous: the other committed identity

    @property
    def message(self) -> str:
        call = f"committed call {self.committed} ({self.capability}, attempt {self.attempt})"
        if self.kind == "lost":
            where = (f" before the candidate reached new work at {self.at}" if self.at
                     else "")
            return (f"{call} is not requested again by the candidate{where}: its moved call "
                    "sends a different request or is gone; keep the request unchanged, or it "
                    "would be lost (and paid again if the request comes back later)")
        if self.kind == "after_frontier":
            return (f"{call} is requested again only after new work at {self.at}; a call "
                    "after new work may depend on its result, so it would be paid again — "
                    "move the new work after it")
        if self.kind == "diverged":
            return (f"{call} is reached at {self.at} with another capability or payload; the "
                    "committed request cannot change — revert the payload")
        return (f"{call} and {self.other} are equal requests with different results consumed "
                f"by concurrent branches (at {self.at}); which branch gets which result is "
                "timing — keep their order sequential, or keep the calls at their sites")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "committed": self.committed, "capability": self.capability,
                "digest": self.digest, "attempt": self.attempt, "at": self.at,
                "other": self.other, "message": self.message}


@dataclass(frozen=True)
class TraceVerdict:
    """The trace check's verdict: admitted, the rebinding, and the counterexamples."""

    admitted: bool
    rebinding: Mapping[Identity, Identity] = field(default_factory=dict)
    counterexamples: tuple[TraceCounterexample, ...] = ()
    frontier: str | None = None  # the first call of new work, if any
    replayed: int = 0
    rebound: int = 0
    note: str | None = None  # why the dry replay itself could not decide (a rejected frame)

    def to_dict(self) -> dict[str, Any]:
        return {"admitted": self.admitted,
                "rebinding": rebinding_rows(self.rebinding),
                "counterexamples": [c.to_dict() for c in self.counterexamples],
                "frontier": self.frontier, "replayed": self.replayed,
                "rebound": self.rebound, "note": self.note}


def rebinding_rows(rebinding: Mapping[Identity, Identity]) -> list[dict[str, str]]:
    """The rebinding as JSON rows in new-identity order."""
    return [{"identity": str(new), "bound_to": str(old)}
            for new, old in sorted(rebinding.items())]


def result_key(slot: SlotRecord) -> str:
    """What tells two committed results apart: the digest the store recorded, else computed."""
    return slot.result_digest if slot.result_digest is not None else digest(slot.result)


def _concurrent(a: Path, b: Path) -> bool:
    """Two paths whose calls program order does not order: neither is a prefix of the other."""
    n = min(len(a), len(b))
    return a[:n] != b[:n]


class Matcher:
    """Matches the calls of a dry replay against the prefix and the pool, in arrival order.

    Example::

        m = Matcher(prefix.slots(), vanished={"orchestrate/#0"})
        m.match(Identity("orchestrate.gen/#0", (), 0), "image.generate", h).kind  # "rebound"
        verdict = m.verdict()
    """

    def __init__(self, slots: Iterable[SlotRecord], vanished: Iterable[str]) -> None:
        gone = set(vanished)
        self._committed: dict[Identity, SlotRecord] = {}
        pool: list[SlotRecord] = []
        for slot in slots:
            self._committed[slot.identity] = slot
            if slot.site in gone:
                pool.append(slot)
        self._vanished = gone
        # committed order: the attempt, then the commit time, then the identity
        pool.sort(key=lambda s: (s.attempt, s.committed_at, s.identity))
        self._pool: dict[tuple[str, str], list[SlotRecord]] = {}
        for slot in pool:
            self._pool.setdefault((slot.capability, slot.digest), []).append(slot)
        self._pool_size = len(pool)
        self._consumed: dict[Identity, tuple[Identity, bool]] = {}  # old → (new, after)
        self.rebinding: dict[Identity, Identity] = {}
        self._problems: list[TraceCounterexample] = []
        self._frontier: Identity | None = None
        self._replayed = 0
        # (capability, digest) → [(new identity, slot)] consumed, for the ambiguity rule
        self._takers: dict[tuple[str, str], list[tuple[Identity, SlotRecord]]] = {}

    @property
    def pool_left(self) -> int:
        """Pool slots not consumed yet."""
        return self._pool_size - len(self._consumed)

    def match(self, identity: Identity, capability: str, h: str) -> Match:
        """Decide one call (see the module docstring); calls come in arrival order."""
        slot = self._committed.get(identity)
        if slot is not None and slot.site not in self._vanished:
            if slot.capability == capability and slot.digest == h:
                self._replayed += 1
                return Match("replay", identity, slot)
            return self._diverged(identity, slot)
        queue = self._pool.get((capability, h))
        if queue:
            taken = queue.pop(0)
            self._take(identity, taken)
            return Match("rebound", identity, taken)
        if slot is not None:  # a vanished site's identity, reached with another request
            return self._diverged(identity, slot)
        if self._frontier is None:
            self._frontier = identity
        return Match("frontier", identity)

    def race_decided(self, where: Identity | None = None) -> None:
        """A race was decided during the dry replay: ambiguous while the pool is not empty."""
        if self.pool_left == 0:
            return
        left = [s for q in self._pool.values() for s in q]
        first = left[0]
        self._problems.append(TraceCounterexample(
            "ambiguous", str(first.identity), first.capability, first.digest, first.attempt,
            at=str(where) if where is not None else "a race", other="the race's winner"))

    def _take(self, identity: Identity, slot: SlotRecord) -> None:
        self.rebinding[identity] = slot.identity
        self._consumed[slot.identity] = (identity, self._frontier is not None)
        key = (slot.capability, slot.digest)
        takers = self._takers.setdefault(key, [])
        mine = result_key(slot)
        for other_new, other_slot in takers:
            if _concurrent(other_new.path, identity.path) and result_key(other_slot) != mine:
                self._problems.append(TraceCounterexample(
                    "ambiguous", str(slot.identity), slot.capability, slot.digest,
                    slot.attempt, at=str(identity), other=str(other_slot.identity)))
                break
        takers.append((identity, slot))

    def _diverged(self, identity: Identity, slot: SlotRecord) -> Match:
        self._problems.append(TraceCounterexample(
            "diverged", str(slot.identity), slot.capability, slot.digest, slot.attempt,
            at=str(identity)))
        return Match("diverged", identity, slot)

    def verdict(self) -> TraceVerdict:
        """The verdict over every call matched so far (call once the dry replay ended)."""
        problems = list(self._problems)
        frontier = str(self._frontier) if self._frontier is not None else None
        for queue in self._pool.values():
            for slot in queue:
                problems.append(TraceCounterexample(
                    "lost", str(slot.identity), slot.capability, slot.digest, slot.attempt,
                    at=frontier))
        for old, (_new, after) in sorted(self._consumed.items()):
            if after:
                slot = self._committed[old]
                problems.append(TraceCounterexample(
                    "after_frontier", str(old), slot.capability, slot.digest, slot.attempt,
                    at=frontier))
        return TraceVerdict(not problems, dict(self.rebinding), tuple(problems), frontier,
                            self._replayed, len(self.rebinding))


def vanished_sites(counterexamples: Iterable[Counterexample]) -> set[str] | None:
    """The frozen sites a gate result's counterexamples name, or None when one of them is a
    kind the trace check cannot settle (`capability_changed`)."""
    out: set[str] = set()
    for c in counterexamples:
        if c.kind not in REBINDABLE_KINDS:
            return None
        out.add(c.site)
    return out


def consumed_identities(rebinding: Mapping[Identity, Identity]) -> set[Identity]:
    """The committed identities a rebinding consumes (for orphans: they were invoked)."""
    return set(rebinding.values())
