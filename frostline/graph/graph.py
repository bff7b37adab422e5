"""A phase graph as data: the JSON file, its validation, and where its file is found.

A graph file has the top-level keys `name`, `states`, `initial`, `terminals`, `tools`,
`contracts` (state -> StateContract), `transitions` (a list of Transition), `lattice` (a list
of ArtifactFreshness) and `budgets` (``{"retry": n, "rollback": m}``), and two optional ones:

- `accepting`: the terminals whose arrival accepts the task; every other terminal rejects it.
  A file without it (written before the key existed) accepts in every terminal that no
  termination edge enters, which is how such a file's reject sink was recognised.
- `invariants`: a list of SafetyInvariant, safety facts beyond the contracts
  (``{"state": "GENERATE", "requires": "Diagnosis"}``) that the checker proves.
- `provenance`, `settings` and `tunables`: where the graph came from, the application's
  parameters, and what an offline search may change (frostline.graph.tunables).

The graph names its own terminals and invariants, so no code downstream knows a state by name.

Loading validates everything that can be checked without exploring the graph, and reports
every issue at once: each state named and contracted, the relation closed (a transition may
only join declared states, so an un-enumerated pair is not expressible), terminals are sinks,
a termination edge ends in a rejecting terminal, every permitted tool is in the vocabulary,
every guard names a known artifact and one of its declared fields, the lattice is acyclic,
each contract's `transition_guards` / `failure_transitions` agree with the transition list,
and each invariant names a declared state and a known artifact. Whether the graph is *correct*
(reachability, safety, liveness) is the model checker's question, not the loader's.

A pair of states may carry two kinds (the seed declares EDIT->EXECUTE both forward and retry):
an edge's identity is (from, to, kind), each record is its own edge, and the forward record is
consulted among the forward guards while the other among the failure transitions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from graphlib import CycleError, TopologicalSorter
from importlib import resources
from pathlib import Path
from typing import Any

from frostline.contract.identity import digest
from frostline.errors import GraphLoadError
from frostline.graph.records import (
    EXISTS,
    ArtifactFreshness,
    GatePredicate,
    SafetyInvariant,
    StateContract,
    Transition,
    TransitionKind,
)
from frostline.graph.tunables import Tunable, parse_extras, tunable_issues

#: Every top-level key, in the order a graph file is written.
TOP_LEVEL = ("name", "provenance", "states", "initial", "terminals", "accepting", "tools",
             "contracts", "transitions", "lattice", "budgets", "invariants", "settings", "tunables")
OPTIONAL = ("provenance", "accepting", "invariants", "settings", "tunables")
SHIPPED = ("seed", "canonical")


@dataclass(frozen=True)
class Budgets:
    """Deterministic counters: each retry edge traversal draws one retry unit, each rollback edge
    one rollback unit; an exhausted budget disables those edges."""

    retry: int
    rollback: int

    def to_dict(self) -> dict[str, int]:
        return {"retry": self.retry, "rollback": self.rollback}


@dataclass(frozen=True, eq=False)
class Graph:
    """A validated phase graph. Build one with `GraphBuilder` (frostline.graph.builder), or
    `Graph.from_dict` / `load_graph`."""

    name: str
    states: tuple[str, ...]
    initial: str
    terminals: tuple[str, ...]
    tools: tuple[str, ...]
    contracts: Mapping[str, StateContract]
    transitions: tuple[Transition, ...]
    lattice: tuple[ArtifactFreshness, ...]
    budgets: Budgets
    accepting: tuple[str, ...] | None = None  # None: not declared (see accepting_terminals)
    invariants: tuple[SafetyInvariant, ...] = ()
    settings: Mapping[str, int | float] = field(default_factory=dict)
    tunables: tuple[Tunable, ...] = ()
    provenance: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        issues = _validate(self)
        if issues:
            first_field, _msg = issues[0]
            lines = "\n".join(f"  - {f}: {m}" for f, m in issues)
            raise GraphLoadError(f"graph {self.name!r} is malformed ({len(issues)} issue(s)):\n{lines}",
                                 field=first_field, issues=[{"field": f, "message": m} for f, m in issues])

    # -- derived views -----------------------------------------------------------------
    @cached_property
    def _outgoing(self) -> dict[str, tuple[Transition, ...]]:
        out: dict[str, list[Transition]] = {s: [] for s in self.states}
        for t in self.transitions:
            out[t.from_].append(t)
        return {s: tuple(ts) for s, ts in out.items()}

    def outgoing(self, state: str) -> tuple[Transition, ...]:
        """Every edge leaving `state`, in declared order."""
        return self._outgoing[state]

    def forward(self, state: str) -> tuple[Transition, ...]:
        return tuple(t for t in self._outgoing[state] if t.kind is TransitionKind.FORWARD)

    def failures(self, state: str) -> tuple[Transition, ...]:
        """Retry, rollback and termination edges of `state`, in the order they are consulted."""
        return tuple(t for t in self._outgoing[state] if t.kind is not TransitionKind.FORWARD)

    @cached_property
    def lattice_artifacts(self) -> tuple[str, ...]:
        return tuple(n.artifact for n in self.lattice)

    @cached_property
    def artifact_fields(self) -> dict[str, tuple[str, ...]]:
        """Every known artifact -> its required fields (lattice-only artifacts have none)."""
        known: dict[str, tuple[str, ...]] = {a: () for a in self.lattice_artifacts}
        for state in self.states:
            c = self.contracts.get(state)
            if c is not None and c.output is not None:
                known[c.output] = c.output_fields
        return known

    def producers(self, artifact: str) -> tuple[str, ...]:
        """The states whose output_schema names `artifact`."""
        return tuple(s for s in self.states if self.contracts[s].output == artifact)

    def is_terminal(self, state: str) -> bool:
        return state in self.terminals

    @cached_property
    def accepting_terminals(self) -> tuple[str, ...]:
        """The terminals whose arrival accepts the task: as declared, or, for a graph that does
        not declare them, every terminal that no termination edge enters."""
        if self.accepting is not None:
            return self.accepting
        rejected = {t.to for t in self.transitions if t.kind is TransitionKind.TERMINATION}
        return tuple(t for t in self.terminals if t not in rejected)

    @cached_property
    def rejecting_terminals(self) -> tuple[str, ...]:
        return tuple(t for t in self.terminals if t not in self.accepting_terminals)

    def entry_requirements(self, state: str) -> tuple[str, ...]:
        """The artifacts that must be stored and VALID whenever `state` is entered: its
        contract's required inputs, then those the graph's invariants add."""
        required = list(self.contracts[state].required_inputs)
        for inv in self.invariants:
            if inv.state == state and inv.requires not in required:
                required.append(inv.requires)
        return tuple(required)

    def has_pair(self, source: str, target: str) -> bool:
        return any(t.to == target for t in self._outgoing.get(source, ()))

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The file's JSON object; an optional key is written only when the graph declares it."""
        data: dict[str, Any] = {
            "name": self.name,
            "provenance": None if self.provenance is None else dict(self.provenance),
            "states": list(self.states),
            "initial": self.initial,
            "terminals": list(self.terminals),
            "accepting": None if self.accepting is None else list(self.accepting),
            "tools": list(self.tools),
            "contracts": {s: self.contracts[s].to_dict() for s in self.states},
            "transitions": [t.to_dict() for t in self.transitions],
            "lattice": [n.to_dict() for n in self.lattice],
            "budgets": self.budgets.to_dict(),
            "invariants": [i.to_dict() for i in self.invariants] or None,
            "settings": dict(self.settings) or None,
            "tunables": [t.to_dict() for t in self.tunables] or None,
        }
        return {k: v for k, v in data.items() if v is not None}

    def dumps(self) -> str:
        return self._text

    @cached_property
    def _text(self) -> str:
        # A graph is immutable: its text and digest are computed once (a durable run records
        # both with every attempt, and the canonical graph's take milliseconds).
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @cached_property
    def content_digest(self) -> str:
        """The SHA-256 of the graph's canonical JSON: what a durable run is bound to."""
        return digest(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any) -> Graph:
        """Parse and validate a graph's JSON object; raise GraphLoadError naming the bad field."""
        if not isinstance(data, Mapping):
            raise GraphLoadError("a graph file must hold a JSON object", field="<root>")
        _check_keys(data)
        name = data["name"]
        if not isinstance(name, str) or not name:
            raise GraphLoadError("name must be a non-empty string", field="name")
        states, terminals, tools = (_names(data, k) for k in ("states", "terminals", "tools"))
        initial = data["initial"]
        if not isinstance(initial, str):
            raise GraphLoadError("initial must be a state name", field="initial")
        contracts_raw = data["contracts"]
        if not isinstance(contracts_raw, Mapping):
            raise GraphLoadError("contracts must map each state to its StateContract", field="contracts")
        contracts = {s: StateContract.from_dict(c, f"contracts.{s}") for s, c in contracts_raw.items()}
        transitions = tuple(Transition.from_dict(t, f"transitions[{i}]")
                            for i, t in enumerate(_records(data, "transitions", "Transition")))
        lattice = tuple(ArtifactFreshness.from_dict(n, f"lattice[{i}]")
                        for i, n in enumerate(_records(data, "lattice", "ArtifactFreshness")))
        budgets = _budgets(data["budgets"])
        accepting = _names(data, "accepting") if "accepting" in data else None
        invariants = tuple(SafetyInvariant.from_dict(v, f"invariants[{i}]")
                           for i, v in enumerate(_records(data, "invariants", "SafetyInvariant")))
        return cls(name, states, initial, terminals, tools, contracts, transitions, lattice, budgets,
                   accepting, invariants, *parse_extras(data))

    @classmethod
    def loads(cls, text: str) -> Graph:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GraphLoadError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                                 field="<json>") from exc
        return cls.from_dict(data)


def _check_keys(data: Mapping[str, Any]) -> None:
    missing = [k for k in TOP_LEVEL if k not in data and k not in OPTIONAL]
    extra = sorted(k for k in data if k not in TOP_LEVEL)
    keys = f"(keys are {[k for k in TOP_LEVEL if k not in OPTIONAL]}, optionally {list(OPTIONAL)})"
    if missing:
        raise GraphLoadError(f"missing top-level key {missing[0]!r} {keys}", field=missing[0])
    if extra:
        raise GraphLoadError(f"unknown top-level key {extra[0]!r} {keys}", field=extra[0])


def _records(data: Mapping[str, Any], key: str, record: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise GraphLoadError(f"{key} must be a list of {record} objects", field=key)
    return value


def _names(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise GraphLoadError(f"{key} must be a list of non-empty strings", field=key)
    if len(set(value)) != len(value):
        dup = next(v for v in value if value.count(v) > 1)
        raise GraphLoadError(f"{key} lists {dup!r} twice", field=key)
    return tuple(value)


def _budgets(value: Any) -> Budgets:
    if not isinstance(value, Mapping) or set(value) != {"retry", "rollback"}:
        raise GraphLoadError('budgets must be exactly {"retry": n, "rollback": m}', field="budgets")
    for k in ("retry", "rollback"):
        v = value[k]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise GraphLoadError(f"budgets.{k} must be a non-negative integer", field=f"budgets.{k}")
    return Budgets(value["retry"], value["rollback"])


Issues = list[tuple[str, str]]


def _validate(g: Graph) -> Issues:
    """Every definition-time issue, as (field, message) pairs, in a stable order."""
    fields, artifact_issues = _artifacts(g)
    return [*_state_issues(g), *_lattice_issues(g), *artifact_issues, *_transition_issues(g, fields),
            *_contract_issues(g), *_terminal_issues(g), *_invariant_issues(g, fields),
            *tunable_issues(g)]


def _state_issues(g: Graph) -> Issues:
    issues: Issues = []
    states = set(g.states)
    if g.initial not in states:
        issues.append(("initial", f"initial state {g.initial!r} is not in states"))
    for term in g.terminals:
        if term not in states:
            issues.append(("terminals", f"terminal {term!r} is not in states"))
    if g.initial in g.terminals:
        issues.append(("initial", "the initial state cannot be a terminal"))
    for s in g.states:
        if s not in g.contracts:
            issues.append((f"contracts.{s}", f"state {s!r} has no contract"))
    for s in g.contracts:
        if s not in states:
            issues.append((f"contracts.{s}", f"contract for undeclared state {s!r}"))
    return issues


def _lattice_issues(g: Graph) -> Issues:
    issues: Issues = []
    lattice = {n.artifact for n in g.lattice}
    if len(lattice) != len(g.lattice):
        issues.append(("lattice", "an artifact appears twice in the lattice"))
    for i, n in enumerate(g.lattice):
        for d in n.depends_on:
            if d not in lattice:
                issues.append((f"lattice[{i}].depends_on", f"{n.artifact} depends on {d!r}, not a lattice artifact"))
    try:
        TopologicalSorter({n.artifact: n.depends_on for n in g.lattice}).prepare()
    except CycleError as exc:
        issues.append(("lattice", f"the dependency edges form a cycle: {' -> '.join(exc.args[1])}"))
    return issues


def _artifacts(g: Graph) -> tuple[dict[str, tuple[str, ...]], Issues]:
    """Every known artifact -> its fields (lattice nodes plus every state's output; one artifact
    has one field list), and the issues of the outputs, allowlists and inputs that name them."""
    issues: Issues = []
    fields: dict[str, tuple[str, ...]] = {n.artifact: () for n in g.lattice}
    outputs = {c.output for c in g.contracts.values() if c.output is not None}
    declared_by: dict[str, str] = {}
    for s in g.states:
        c = g.contracts.get(s)
        if c is None:
            continue
        if c.output_schema and c.output is None:
            issues.append((f"contracts.{s}.output_schema", "needs a name"))
        if c.output is not None:
            prev = declared_by.get(c.output)
            if prev is not None and fields[c.output] != c.output_fields:
                issues.append((f"contracts.{s}.output_schema",
                               f"{c.output} is declared with fields {list(c.output_fields)} here but "
                               f"{list(fields[c.output])} in {prev}; one artifact has one schema"))
            fields[c.output] = c.output_fields
            declared_by.setdefault(c.output, s)
        for tool in c.permitted_tools:
            if tool not in g.tools:
                issues.append((f"contracts.{s}.permitted_tools",
                               f"{tool!r} is not in the tool vocabulary (add it to tools)"))
        for a in c.required_inputs:
            if a not in fields and a not in outputs:
                issues.append((f"contracts.{s}.required_inputs", f"unknown artifact {a!r}"))
    return fields, issues


def _guard_issues(where: str, guard: Sequence[GatePredicate],
                  fields: Mapping[str, tuple[str, ...]]) -> Issues:
    issues: Issues = []
    for j, p in enumerate(guard):
        if p.artifact not in fields:
            issues.append((f"{where}[{j}].artifact", f"guard names unknown artifact {p.artifact!r}"))
        elif p.property != EXISTS and p.property not in fields[p.artifact]:
            issues.append((f"{where}[{j}].property",
                           f"{p.artifact} has no field {p.property!r}; a guard may test "
                           f"{[EXISTS, *fields[p.artifact]]}"))
    return issues


def _transition_issues(g: Graph, fields: Mapping[str, tuple[str, ...]]) -> Issues:
    issues: Issues = []
    seen: set[tuple[str, str, TransitionKind]] = set()
    for i, t in enumerate(g.transitions):
        where = f"transitions[{i}]"
        for end, name in (("from", t.from_), ("to", t.to)):
            if name not in g.states:
                issues.append((f"{where}.{end}", f"{t} joins undeclared state {name!r}"))
        if t.from_ in g.terminals:
            issues.append((f"{where}.from", f"{t} leaves terminal {t.from_}; terminals are sinks"))
        if t.key in seen:
            issues.append((where, f"{t} is declared twice"))
        seen.add(t.key)
        if t.kind is TransitionKind.TERMINATION and t.to not in g.terminals:
            issues.append((f"{where}.to", f"termination edge {t} must end in a terminal"))
        elif t.kind is TransitionKind.TERMINATION and t.to in g.accepting_terminals:
            issues.append((f"{where}.to", f"termination edge {t} ends in the accepting terminal "
                           f"{t.to}; a termination rejects the task, so it must end in a rejecting one"))
        if t.kind is not TransitionKind.TERMINATION and t.to in g.terminals \
                and t.kind is not TransitionKind.FORWARD:
            issues.append((f"{where}.kind", f"{t} enters a terminal; use a forward or termination edge"))
        issues += _guard_issues(f"{where}.guard", t.guard, fields)
    return issues


def _contract_issues(g: Graph) -> Issues:
    """The contracts restate each state's edges; they must agree with the transition list."""
    issues: Issues = []
    for s in g.states:
        c = g.contracts.get(s)
        if c is None:
            continue
        fwd = [t.guard for t in g.transitions if t.from_ == s and t.kind is TransitionKind.FORWARD]
        fail = [t for t in g.transitions if t.from_ == s and t.kind is not TransitionKind.FORWARD]
        if list(c.transition_guards) != fwd:
            issues.append((f"contracts.{s}.transition_guards",
                           f"must list the guards of {s}'s {len(fwd)} forward edge(s) in declared order"))
        if list(c.failure_transitions) != fail:
            issues.append((f"contracts.{s}.failure_transitions",
                           f"must list {s}'s {len(fail)} retry/rollback/termination edge(s) in declared order"))
        if s in g.terminals and (c.permitted_tools or c.output_schema or c.required_inputs):
            issues.append((f"contracts.{s}", "a terminal sink has no tools, inputs or output"))
    return issues


def _terminal_issues(g: Graph) -> Issues:
    if g.accepting is None:
        return []
    issues: Issues = [("accepting", f"{a!r} is not a terminal (terminals are {list(g.terminals)})")
                      for a in g.accepting if a not in g.terminals]
    if not g.accepting:
        issues.append(("accepting", "names no terminal; a graph must be able to accept its task"))
    if len(set(g.accepting)) != len(g.accepting):
        issues.append(("accepting", "lists a terminal twice"))
    return issues


def _invariant_issues(g: Graph, fields: Mapping[str, tuple[str, ...]]) -> Issues:
    issues: Issues = []
    for i, inv in enumerate(g.invariants):
        if inv.state not in g.states:
            issues.append((f"invariants[{i}].state", f"{inv.state!r} is not a declared state"))
        if inv.requires not in fields:
            issues.append((f"invariants[{i}].requires", f"unknown artifact {inv.requires!r}"))
        if inv in g.invariants[:i]:
            issues.append((f"invariants[{i}]", f"{inv} is declared twice"))
    return issues


def load_graph(spec: str | Path) -> Graph:
    """Load a graph: ``"seed"`` or ``"canonical"`` (shipped), or a path to a JSON file."""
    if isinstance(spec, str) and spec in SHIPPED:
        text = resources.files("frostline.graph").joinpath("graphs", f"{spec}.json").read_text("utf-8")
        return Graph.loads(text)
    path = Path(spec)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise GraphLoadError(f"cannot read graph file {str(path)!r}: {exc.strerror}; pass 'seed', "
                             "'canonical' or the path of a graph JSON file", field="<file>") from exc
    return Graph.loads(text)
