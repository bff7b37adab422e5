"""What a graph declares tunable at design time, and the graph each choice of values makes.

A graph file may carry three optional keys beside its records:

- `settings`: the application's own parameters (name -> number), carried by the graph so that
  a tuned graph is one file; the engine never reads them (the coding workflow reads
  ``samples``, ``screen_limit`` and ``test_timeout``).
- `tunables`: the parameters an offline search may change, each with the values it may take::

      {"kind": "budget",    "target": "retry",                   "values": [1, 2, 3, 4]}
      {"kind": "threshold", "target": "LOCALIZE->IMPACT:forward",
       "predicate": "LocalizationResult.top_candidate_confidence", "values": [0.3, 0.5]}
      {"kind": "edge",      "target": "VALIDATE->LOCALIZE:rollback", "values": [true, false]}
      {"kind": "state",     "target": "REFLECT",                 "values": [true, false]}
      {"kind": "setting",   "target": "samples",                 "values": [1, 3, 5]}

  An `edge` tunable may drop a declared edge; a `state` tunable may drop every edge into and
  out of a state (it stays declared, unreachable). The graph's own value of each tunable must
  be one of its values, so the declared graph is a point of the space it declares.
- `provenance`: where a graph came from (a tuned graph names its base graph's digest, the
  split and tasks it was tuned on, the budget and the seed); free-form, never interpreted.

Loading validates the tunables against the graph they are declared in (so a graph derived by
removing an edge a tunable names must drop that tunable); whether a choice of
values gives a *correct* graph is the model checker's question, asked of every candidate.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from frostline.errors import GraphLoadError
from frostline.graph.records import EXISTS, Transition, TransitionKind

KINDS = ("budget", "threshold", "edge", "state", "setting")
Value = bool | int | float
Issues = list[tuple[str, str]]
#: The checker counts budgets in a byte.
MAX_BUDGET = 255


@dataclass(frozen=True)
class Tunable:
    """One declared parameter: its `kind`, what it names (`target`, and for a threshold the
    guard's `predicate` ``Artifact.property``) and the `values` it may take."""

    kind: str
    target: str
    values: tuple[Value, ...]
    predicate: str = ""

    @property
    def name(self) -> str:
        """A stable name, e.g. ``threshold:LOCALIZE->IMPACT:forward:LocalizationResult.x``."""
        return f"{self.kind}:{self.target}" + (f":{self.predicate}" if self.predicate else "")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "target": self.target}
        if self.predicate:
            out["predicate"] = self.predicate
        out["values"] = list(self.values)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Tunable:
        if not isinstance(data, Mapping):
            raise GraphLoadError(f"{where} must be an object like {{\"kind\": \"budget\", "
                                 "\"target\": \"retry\", \"values\": [1, 2, 3]}", field=where)
        allowed = {"kind", "target", "values", "predicate"}
        extra = sorted(set(data) - allowed)
        missing = sorted({"kind", "target", "values"} - set(data))
        if extra or missing:
            raise GraphLoadError(f"{where} has {'unknown' if extra else 'no'} field "
                                 f"{(extra or missing)[0]!r} (fields: kind, target, values, "
                                 "and predicate for a threshold)", field=where)
        kind, target, values = data["kind"], data["target"], data["values"]
        if kind not in KINDS:
            raise GraphLoadError(f"{where}.kind must be one of {list(KINDS)}, not {kind!r}",
                                 field=f"{where}.kind")
        if not isinstance(target, str) or not target:
            raise GraphLoadError(f"{where}.target must be a non-empty string", field=f"{where}.target")
        predicate = data.get("predicate", "")
        if (kind == "threshold") != bool(predicate) or not isinstance(predicate, str):
            raise GraphLoadError(f"{where}.predicate ('Artifact.property') is required for a "
                                 "threshold and only there", field=f"{where}.predicate")
        if not isinstance(values, list) or not values:
            raise GraphLoadError(f"{where}.values must be a non-empty list", field=f"{where}.values")
        return cls(kind, target, tuple(_value(kind, v, f"{where}.values") for v in values),
                   predicate)


def _value(kind: str, v: Any, where: str) -> Value:
    if kind in ("edge", "state"):
        if not isinstance(v, bool):
            raise GraphLoadError(f"{where}: an {kind} tunable takes true (kept) or false "
                                 f"(dropped), not {v!r}", field=where)
        return v
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise GraphLoadError(f"{where}: {v!r} is not a finite number", field=where)
    if kind == "budget" and (not isinstance(v, int) or not 0 <= v <= MAX_BUDGET):
        raise GraphLoadError(f"{where}: a budget is an integer in 0..{MAX_BUDGET}, not {v!r}",
                             field=where)
    return float(v) if kind == "threshold" else v


def parse_extras(data: Mapping[str, Any]
                 ) -> tuple[dict[str, int | float], tuple[Tunable, ...], dict[str, Any] | None]:
    """A graph file's `settings`, `tunables` and `provenance` (each optional)."""
    provenance = data.get("provenance")
    if provenance is not None and not isinstance(provenance, Mapping):
        raise GraphLoadError("provenance must be an object", field="provenance")
    return (parse_settings(data.get("settings", {})), parse_tunables(data.get("tunables", [])),
            None if provenance is None else dict(provenance))


def parse_settings(value: Any) -> dict[str, int | float]:
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and k and not isinstance(v, bool) and isinstance(v, int | float)
            and math.isfinite(v) for k, v in value.items()):
        raise GraphLoadError("settings must map names to finite numbers, e.g. "
                             '{"samples": 3}', field="settings")
    return dict(value)


def parse_tunables(value: Any) -> tuple[Tunable, ...]:
    if not isinstance(value, list):
        raise GraphLoadError("tunables must be a list of tunable objects", field="tunables")
    return tuple(Tunable.from_dict(t, f"tunables[{i}]") for i, t in enumerate(value))


class _Budgets(Protocol):
    @property
    def retry(self) -> int: ...
    @property
    def rollback(self) -> int: ...


class GraphView(Protocol):
    """What validation reads of a graph (a `Graph` is one)."""

    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def initial(self) -> str: ...
    @property
    def terminals(self) -> tuple[str, ...]: ...
    @property
    def transitions(self) -> tuple[Transition, ...]: ...
    @property
    def settings(self) -> Mapping[str, int | float]: ...
    @property
    def tunables(self) -> tuple[Tunable, ...]: ...
    @property
    def budgets(self) -> _Budgets: ...


def edge_key(target: str) -> tuple[str, str, TransitionKind] | None:
    """``"A->B:kind"`` as a transition key, or None when it is not one."""
    pair, _, kind = target.rpartition(":")
    source, sep, dest = pair.partition("->")
    if not sep or kind not in {k.value for k in TransitionKind}:
        return None
    return (source, dest, TransitionKind(kind))


def declared_value(g: GraphView, t: Tunable) -> Value | None:
    """The graph's own value of `t`, or None when `t` names nothing in the graph."""
    if t.kind == "budget":
        return {"retry": g.budgets.retry, "rollback": g.budgets.rollback}.get(t.target)
    if t.kind == "setting":
        return g.settings.get(t.target)
    if t.kind == "state":
        return any(x.to == t.target for x in g.transitions) if t.target in g.states else None
    key = edge_key(t.target)
    edge = next((x for x in g.transitions if x.key == key), None)
    if t.kind == "edge" or edge is None:
        return None if edge is None else True
    artifact, _, prop = t.predicate.partition(".")
    p = next((p for p in edge.guard if p.artifact == artifact and p.property == prop), None)
    return None if p is None or prop == EXISTS else p.threshold


def tunable_issues(g: GraphView) -> Issues:
    """Every declared tunable names something of `g` and admits `g`'s own value."""
    issues: Issues = []
    seen: set[str] = set()
    for i, t in enumerate(g.tunables):
        where = f"tunables[{i}]"
        if t.name in seen:
            issues.append((where, f"{t.name} is declared twice"))
        seen.add(t.name)
        if len(set(t.values)) != len(t.values):
            issues.append((f"{where}.values", "lists a value twice"))
        if t.kind == "state" and t.target in (g.initial, *g.terminals):
            issues.append((f"{where}.target", f"{t.target} is the initial state or a terminal; "
                           "it cannot be optional"))
            continue
        value = declared_value(g, t)
        if value is None:
            issues.append((f"{where}.target", _unknown(t)))
        elif value not in t.values:
            issues.append((f"{where}.values", f"the graph's own value {value!r} is not among "
                           f"{list(t.values)}; the declared graph must be a point of its space"))
    return issues


def _unknown(t: Tunable) -> str:
    return _missing(t) + ("; a graph derived by removing it must drop this tunable"
                          if t.kind in ("state", "edge", "threshold") else "")


def _missing(t: Tunable) -> str:
    match t.kind:
        case "budget":
            return f"{t.target!r} is not a budget (retry or rollback)"
        case "setting":
            return f"{t.target!r} is not in settings (declare its value there)"
        case "state":
            return f"{t.target!r} is not a declared state with an edge into it"
        case "edge":
            return f"{t.target!r} is not a declared edge (write it FROM->TO:kind)"
    return (f"{t.target!r} has no threshold test on {t.predicate!r} (write the edge FROM->TO:"
            "kind and the predicate Artifact.property of one of its non-existence tests)")


def assign(data: Mapping[str, Any], tunables: Sequence[Tunable],
           values: Mapping[str, Value]) -> dict[str, Any]:
    """The graph file `data` with `values` (tunable name -> value) applied, its contracts
    restated to agree with the edges left, and without its `tunables` key (a point of the
    space is not a space). Raises KeyError for a name no tunable has."""
    by_name = {t.name: t for t in tunables}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise KeyError(f"no tunable named {unknown[0]!r}; declared: {sorted(by_name)}")
    out = copy.deepcopy(dict(data))
    out.pop("tunables", None)
    dropped: set[tuple[str, str, str]] = set()
    gone: set[str] = set()
    for name, value in values.items():
        t = by_name[name]
        if t.kind == "budget":
            out["budgets"][t.target] = value
        elif t.kind == "setting":
            out.setdefault("settings", {})[t.target] = value
        elif t.kind == "threshold":
            _set_threshold(out, t, float(value))
        elif t.kind == "edge" and value is False:
            key = edge_key(t.target)
            assert key is not None
            dropped.add((key[0], key[1], key[2].value))
        elif t.kind == "state" and value is False:
            gone.add(t.target)
    out["transitions"] = [e for e in out["transitions"] if (e["from"], e["to"], e["kind"])
                          not in dropped and e["from"] not in gone and e["to"] not in gone]
    for state, contract in out["contracts"].items():
        mine = [e for e in out["transitions"] if e["from"] == state]
        contract["transition_guards"] = [e["guard"] for e in mine if e["kind"] == "forward"]
        contract["failure_transitions"] = [e for e in mine if e["kind"] != "forward"]
    return out


def _set_threshold(data: dict[str, Any], t: Tunable, value: float) -> None:
    key = edge_key(t.target)
    assert key is not None
    artifact, _, prop = t.predicate.partition(".")
    for e in data["transitions"]:
        if (e["from"], e["to"], e["kind"]) == (key[0], key[1], key[2].value):
            for p in e["guard"]:
                if p["artifact"] == artifact and p["property"] == prop:
                    p["threshold"] = value
