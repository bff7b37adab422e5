"""The records of a phase graph: the four the specification pins, and the graph's invariants.

`StateContract`, `GatePredicate`, `Transition` and `ArtifactFreshness` are the graph's JSON
contracts, with exactly the fields the specification pins; `SafetyInvariant` is the one record a
graph file may add, a safety fact the model checker proves beyond the contracts. Each is a
frozen dataclass with `to_dict()` / `from_dict()`; reading is strict: a
missing or an extra field, a wrong type or an unknown enum value is a `GraphLoadError` whose
`field` names the offending path (e.g. ``transitions[3].kind``), so a malformed file says
exactly what to fix.

`Transition.from` is a Python keyword, so the attribute is spelled `from_`; the JSON key stays
``"from"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from frostline.errors import GraphLoadError


class Operator(StrEnum):
    """Comparison of a GatePredicate's artifact property against its threshold."""

    GT = "GT"
    GTE = "GTE"
    LT = "LT"
    LTE = "LTE"
    EQ = "EQ"
    NEQ = "NEQ"

    def compare(self, value: float, threshold: float) -> bool:
        """Apply the operator: ``Operator.GT.compare(0.9, 0.5) is True``."""
        match self:
            case Operator.GT:
                return value > threshold
            case Operator.GTE:
                return value >= threshold
            case Operator.LT:
                return value < threshold
            case Operator.LTE:
                return value <= threshold
            case Operator.EQ:
                return value == threshold
            case Operator.NEQ:
                return value != threshold
        raise AssertionError(self)  # pragma: no cover - the match is exhaustive


class TransitionKind(StrEnum):
    """The four classes of edge. Retry and rollback edges consume their budget."""

    FORWARD = "forward"
    RETRY = "retry"
    ROLLBACK = "rollback"
    TERMINATION = "termination"


class Freshness(StrEnum):
    VALID = "VALID"
    STALE = "STALE"


class TerminationReason(StrEnum):
    OUT_OF_BUDGET = "out_of_budget"
    CONTRADICTION_IN_SPECIFICATION = "contradiction_in_specification"
    UNRECOVERABLE_SANDBOX_FAILURE = "unrecoverable_sandbox_failure"


#: The pseudo-property that reads 1.0 when the artifact is stored and VALID: a predicate
#: ``{"property": "exists", "operator": "EQ", "threshold": 1}`` is a pure existence test.
EXISTS = "exists"


_E = TypeVar("_E", bound=StrEnum)


# -- strict JSON readers ----------------------------------------------------------------------


def _obj(data: Any, where: str, fields: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise GraphLoadError(f"{where} must be a JSON object with fields {list(fields)}", field=where)
    missing = [f for f in fields if f not in data]
    extra = sorted(k for k in data if k not in fields)
    if missing:
        raise GraphLoadError(f"{where}: missing field {missing[0]!r} (fields are exactly {list(fields)})",
                             field=f"{where}.{missing[0]}")
    if extra:
        raise GraphLoadError(f"{where}: unknown field {extra[0]!r} (fields are exactly {list(fields)})",
                             field=f"{where}.{extra[0]}")
    return data


def _str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise GraphLoadError(f"{where}.{key} must be a string, got {type(value).__name__}",
                             field=f"{where}.{key}")
    return value


def _str_list(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GraphLoadError(f"{where}.{key} must be a list of strings", field=f"{where}.{key}")
    if len(set(value)) != len(value):
        raise GraphLoadError(f"{where}.{key} lists a name twice", field=f"{where}.{key}")
    return tuple(value)


def _enum(cls: type[_E], value: Any, where: str) -> _E:
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(m.value for m in cls)
        raise GraphLoadError(f"{where} is {value!r}; allowed values: {allowed}", field=where) from None


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise GraphLoadError(f"{where}.{key} must be a list", field=f"{where}.{key}")
    return value


# -- records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GatePredicate:
    """One existence assertion plus one threshold test over a stored artifact.

    Example: ``GatePredicate("LocalizationResult", "top_candidate_confidence", Operator.GT, 0.5)``
    """

    artifact: str
    property: str
    operator: Operator
    threshold: float

    FIELDS = ("artifact", "property", "operator", "threshold")

    def to_dict(self) -> dict[str, Any]:
        return {"artifact": self.artifact, "property": self.property,
                "operator": self.operator.value, "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: Any, where: str = "predicate") -> GatePredicate:
        d = _obj(data, where, cls.FIELDS)
        threshold = d["threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
                or not math.isfinite(threshold):
            raise GraphLoadError(f"{where}.threshold must be a finite number", field=f"{where}.threshold")
        return cls(_str(d, "artifact", where), _str(d, "property", where),
                   _enum(Operator, d["operator"], f"{where}.operator"), float(threshold))

    def __str__(self) -> str:
        if self.property == EXISTS:
            return f"{self.artifact} exists"
        return f"{self.artifact}.{self.property} {self.operator.value} {self.threshold:g}"


def exists(artifact: str) -> GatePredicate:
    """The pure existence predicate: ``exists("Plan")``."""
    return GatePredicate(artifact, EXISTS, Operator.EQ, 1.0)


def _guard_from_dict(data: Any, where: str) -> tuple[GatePredicate, ...]:
    if not isinstance(data, list):
        raise GraphLoadError(f"{where} must be a list of GatePredicate objects", field=where)
    return tuple(GatePredicate.from_dict(p, f"{where}[{i}]") for i, p in enumerate(data))


@dataclass(frozen=True)
class Transition:
    """One enumerated edge. `reason` is a TerminationReason on termination edges, else ""."""

    from_: str
    to: str
    kind: TransitionKind
    guard: tuple[GatePredicate, ...] = ()
    reason: str = ""

    FIELDS = ("from", "to", "kind", "guard", "reason")

    def __post_init__(self) -> None:
        if self.kind is TransitionKind.TERMINATION:
            _enum(TerminationReason, self.reason, f"transition {self.from_}->{self.to} reason")
        elif self.reason != "":
            raise GraphLoadError(
                f"transition {self.from_}->{self.to} ({self.kind.value}) has reason {self.reason!r}; "
                "only termination edges carry a reason (use \"\")", field="reason")

    @property
    def key(self) -> tuple[str, str, TransitionKind]:
        """A pair may carry two kinds (the seed's EDIT->EXECUTE); the kind completes the key."""
        return (self.from_, self.to, self.kind)

    @property
    def consumes(self) -> str | None:
        """The budget this edge draws from on each traversal, if any."""
        if self.kind is TransitionKind.RETRY:
            return "retry"
        if self.kind is TransitionKind.ROLLBACK:
            return "rollback"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.from_, "to": self.to, "kind": self.kind.value,
                "guard": [p.to_dict() for p in self.guard], "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Any, where: str = "transition") -> Transition:
        d = _obj(data, where, cls.FIELDS)
        kind = _enum(TransitionKind, d["kind"], f"{where}.kind")
        reason = _str(d, "reason", where)
        if kind is TransitionKind.TERMINATION:
            _enum(TerminationReason, reason, f"{where}.reason")
        elif reason:
            raise GraphLoadError(f"{where}.reason must be \"\" on a {kind.value} edge "
                                 "(only termination edges carry a reason)", field=f"{where}.reason")
        return cls(_str(d, "from", where), _str(d, "to", where), kind,
                   _guard_from_dict(d["guard"], f"{where}.guard"), reason)

    def __str__(self) -> str:
        return f"{self.from_}->{self.to} [{self.kind.value}]"


@dataclass(frozen=True)
class ArtifactFreshness:
    """A lattice node: an artifact, its freshness, and the artifacts it was computed from."""

    artifact: str
    freshness: Freshness
    depends_on: tuple[str, ...] = ()

    FIELDS = ("artifact", "freshness", "depends_on")

    def to_dict(self) -> dict[str, Any]:
        return {"artifact": self.artifact, "freshness": self.freshness.value,
                "depends_on": list(self.depends_on)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "lattice") -> ArtifactFreshness:
        d = _obj(data, where, cls.FIELDS)
        return cls(_str(d, "artifact", where), _enum(Freshness, d["freshness"], f"{where}.freshness"),
                   _str_list(d, "depends_on", where))


@dataclass(frozen=True)
class StateContract:
    """What a state needs, may call, must emit, and how it may be left.

    `output_schema` is ``{"name": artifact, "required": [field, ...]}``, or ``{}`` for a state
    that emits nothing. `transition_guards` holds the guards of the state's forward edges in
    declared order; `failure_transitions` its retry, rollback and termination edges in order.
    """

    required_inputs: tuple[str, ...]
    permitted_tools: tuple[str, ...]
    output_schema: Mapping[str, Any]
    transition_guards: tuple[tuple[GatePredicate, ...], ...]
    failure_transitions: tuple[Transition, ...]

    FIELDS = ("required_inputs", "permitted_tools", "output_schema", "transition_guards",
              "failure_transitions")

    @property
    def output(self) -> str | None:
        """The artifact this state emits, or None."""
        name = self.output_schema.get("name")
        return name if isinstance(name, str) else None

    @property
    def output_fields(self) -> tuple[str, ...]:
        return tuple(self.output_schema.get("required", ()))

    def to_dict(self) -> dict[str, Any]:
        schema: dict[str, Any] = {}
        if self.output is not None:
            schema = {"name": self.output, "required": list(self.output_fields)}
        return {
            "required_inputs": list(self.required_inputs),
            "permitted_tools": list(self.permitted_tools),
            "output_schema": schema,
            "transition_guards": [[p.to_dict() for p in g] for g in self.transition_guards],
            "failure_transitions": [t.to_dict() for t in self.failure_transitions],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "contract") -> StateContract:
        d = _obj(data, where, cls.FIELDS)
        schema = d["output_schema"]
        if not isinstance(schema, Mapping):
            raise GraphLoadError(f"{where}.output_schema must be an object", field=f"{where}.output_schema")
        if schema:
            s = _obj(schema, f"{where}.output_schema", ("name", "required"))
            name = _str(s, "name", f"{where}.output_schema")
            required = _str_list(s, "required", f"{where}.output_schema")
            schema = {"name": name, "required": list(required)}
        guards = _list(d, "transition_guards", where)
        failures = _list(d, "failure_transitions", where)
        return cls(
            _str_list(d, "required_inputs", where),
            _str_list(d, "permitted_tools", where),
            dict(schema),
            tuple(_guard_from_dict(g, f"{where}.transition_guards[{i}]") for i, g in enumerate(guards)),
            tuple(Transition.from_dict(t, f"{where}.failure_transitions[{i}]")
                  for i, t in enumerate(failures)),
        )

    def __hash__(self) -> int:  # output_schema is a dict; hash the JSON shape instead
        return hash(repr(self.to_dict()))


@dataclass(frozen=True)
class SafetyInvariant:
    """A safety fact of the graph beyond its contracts: `state` is never entered unless the
    artifact `requires` is stored and VALID, whether or not the state's contract lists it.

    The model checker proves it and the engine fails closed on it, like a required input.
    Example: ``SafetyInvariant("GENERATE", "Diagnosis")``.
    """

    state: str
    requires: str

    FIELDS = ("state", "requires")

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "requires": self.requires}

    @classmethod
    def from_dict(cls, data: Any, where: str = "invariant") -> SafetyInvariant:
        d = _obj(data, where, cls.FIELDS)
        return cls(_str(d, "state", where), _str(d, "requires", where))

    def __str__(self) -> str:
        return f"{self.state} needs a VALID {self.requires}"
