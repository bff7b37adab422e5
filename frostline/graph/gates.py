"""Gate predicates: deterministic boolean conditions over stored artifacts.

A gate is a conjunction of `GatePredicate` records. Each predicate asserts that its artifact is
stored and VALID, then compares one numeric property against a threshold. A STALE artifact
counts as absent: it describes inputs that have since changed, and deciding on it is exactly the
stale-context mistake the freshness lattice exists to prevent. Evaluation is a pure function of
the artifacts passed in; the model never sees a gate and never evaluates one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frostline.graph.records import EXISTS, Freshness, GatePredicate


@dataclass(frozen=True)
class StoredArtifact:
    """One stored version of an artifact: its fields, digest, freshness and provenance."""

    name: str
    value: Mapping[str, Any]
    digest: str
    freshness: Freshness
    version: int
    produced_by: str  # "STATE#visit"

    @property
    def valid(self) -> bool:
        return self.freshness is Freshness.VALID

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "digest": self.digest, "freshness": self.freshness.value,
                "version": self.version, "produced_by": self.produced_by}


#: What the gate engine reads: artifact name -> its current stored version.
Artifacts = Mapping[str, StoredArtifact]


@dataclass(frozen=True)
class PredicateResult:
    """The outcome of one predicate and why: `reason` is one of
    ``compared``, ``missing``, ``stale``, ``not_a_number``."""

    predicate: GatePredicate
    holds: bool
    value: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"predicate": str(self.predicate), "holds": self.holds, "value": self.value,
                "reason": self.reason}


@dataclass(frozen=True)
class GateEvaluation:
    """A whole conjunction: it holds iff every predicate holds (the empty gate always holds)."""

    holds: bool
    results: tuple[PredicateResult, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"holds": self.holds, "predicates": [r.to_dict() for r in self.results]}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def evaluate_predicate(predicate: GatePredicate, artifacts: Artifacts) -> PredicateResult:
    """Evaluate one predicate; ``exists`` reads 1.0 for a stored VALID artifact."""
    stored = artifacts.get(predicate.artifact)
    if stored is None:
        return PredicateResult(predicate, False, None, "missing")
    if not stored.valid:
        return PredicateResult(predicate, False, None, "stale")
    value = 1.0 if predicate.property == EXISTS else _number(stored.value.get(predicate.property))
    if value is None:
        return PredicateResult(predicate, False, None, "not_a_number")
    return PredicateResult(predicate, predicate.operator.compare(value, predicate.threshold), value,
                           "compared")


def evaluate_gate(guard: Sequence[GatePredicate], artifacts: Artifacts) -> GateEvaluation:
    """Evaluate a conjunction; every predicate is evaluated so the ledger can show each one.

    Example: ``evaluate_gate([exists("Plan")], {}).holds is False``
    """
    results = tuple(evaluate_predicate(p, artifacts) for p in guard)
    return GateEvaluation(all(r.holds for r in results), results)
