"""The gate's verdict on a candidate before any spend: the callsite gate's result and, where it
ran, the dry replay's.

The callsite gate (frostline.contract.gate) decides alone when it accepts. When it stops a
candidate only because committed calls moved and the relocation policy is `rebind`, the dry
replay (frostline.runtime.dry_replay) runs it once against the prefix; its trace verdict
(frostline.contract.rebind) joins this one and, when it admits, the candidate is accepted
*by the trace*. A dry replay that could not run at all (the sandbox cannot start) is a
`TraceFailure`: the gate's stop stands.

`GateVerdict` is what the runtime, the repair loop and the Python API pass around; its
`to_dict()` is the JSON `frostline gate --json`, the gate route, the MCP tool and an attempt's
record carry, and `GateVerdict.from_dict` reads that JSON back (the HTTP client).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from frostline.contract.gate import Counterexample, GateResult, NearestSite
from frostline.contract.identity import Identity
from frostline.contract.rebind import TraceCounterexample, TraceVerdict

AcceptedBy = Literal["trace"]


@dataclass(frozen=True)
class TraceFailure:
    """A dry replay that could not decide (e.g. the sandbox cannot start): never admits."""

    note: str
    admitted: bool = False
    counterexamples: tuple[TraceCounterexample, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"admitted": False, "note": self.note, "counterexamples": []}


@dataclass(frozen=True)
class GateVerdict:
    """What the gate decides before any spend. `static` is the callsite gate's result (its
    counterexamples stay reported when the trace admits the candidate); `trace` the dry
    replay's verdict when it ran; `relocation` the policy decided under, when reported (the
    gate command and route say it, an attempt's record does not)."""

    static: GateResult
    trace: TraceVerdict | TraceFailure | None = None
    relocation: str | None = None

    @property
    def accepted(self) -> bool:
        return self.static.accepted or (self.trace is not None and self.trace.admitted)

    @property
    def accepted_by(self) -> AcceptedBy | None:
        """`trace` when the callsite gate stopped the candidate and the dry replay admitted it."""
        if not self.static.accepted and self.trace is not None and self.trace.admitted:
            return "trace"
        return None

    @property
    def counterexamples(self) -> tuple[Counterexample, ...]:
        return self.static.counterexamples

    @property
    def rebinding(self) -> Mapping[Identity, Identity]:
        """The rebinding an admitted candidate runs with (empty otherwise)."""
        if isinstance(self.trace, TraceVerdict) and self.accepted_by == "trace":
            return self.trace.rebinding
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The verdict's JSON: `accepted`, `counterexamples`, then `relocation`, `trace` and
        `accepted_by` where they apply."""
        out: dict[str, Any] = self.static.to_dict()
        out["accepted"] = self.accepted
        if self.relocation is not None:
            out["relocation"] = self.relocation
        if self.trace is not None:
            out["trace"] = self.trace.to_dict()
        if self.accepted_by is not None:
            out["accepted_by"] = self.accepted_by
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateVerdict:
        """The verdict a `to_dict()` JSON describes (extra keys, e.g. a route's
        `frozen_sites`, are ignored)."""
        examples = tuple(_counterexample(c) for c in data.get("counterexamples") or [])
        trace = data.get("trace")
        relocation = data.get("relocation")
        return cls(GateResult(not examples, examples),
                   _trace(trace) if isinstance(trace, Mapping) else None,
                   str(relocation) if relocation is not None else None)


def _counterexample(c: Mapping[str, Any]) -> Counterexample:
    near = c.get("nearest")
    return Counterexample(
        c["kind"], c["site"], c["capability"], c["line"], c["source_line"],
        NearestSite(near["site"], near.get("capability"), near["line"], near["match"])
        if isinstance(near, Mapping) else None, c.get("found_capability"))


def _trace(t: Mapping[str, Any]) -> TraceVerdict | TraceFailure:
    if "rebinding" not in t:  # the short form only a failed dry replay has
        return TraceFailure(str(t.get("note")))
    return TraceVerdict(
        bool(t["admitted"]),
        {Identity.parse(r["identity"]): Identity.parse(r["bound_to"]) for r in t["rebinding"]},
        tuple(TraceCounterexample(c["kind"], c["committed"], c["capability"], c["digest"],
                                  c["attempt"], c.get("at"), c.get("other"))
              for c in t.get("counterexamples") or []),
        t.get("frontier"), int(t.get("replayed", 0)), int(t.get("rebound", 0)), t.get("note"))
