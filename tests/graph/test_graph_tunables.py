"""A graph's declared tunables and settings: validated at load, and every point of the space
they declare is a graph that loads and carries exactly the values chosen."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.errors import GraphLoadError
from frostline.graph.graph import Graph, load_graph
from frostline.graph.tunables import assign, declared_value

CANONICAL = load_graph("canonical")


def with_tunables(*tunables: Any, settings_: Any = None) -> dict[str, Any]:
    data = copy.deepcopy(CANONICAL.to_dict())
    data["tunables"] = list(tunables)
    if settings_ is not None:
        data["settings"] = settings_
    return data


def test_the_canonical_graph_declares_its_space_and_sits_in_it() -> None:
    kinds = {t.kind for t in CANONICAL.tunables}
    assert kinds == {"budget", "threshold", "edge", "state", "setting"}
    for t in CANONICAL.tunables:
        assert declared_value(CANONICAL, t) in t.values
    assert Graph.loads(CANONICAL.dumps()).tunables == CANONICAL.tunables


def test_the_canonical_settings_are_the_coding_workflow_defaults() -> None:
    from frostline.coding.setup import SolveSettings

    s = SolveSettings()
    assert dict(CANONICAL.settings) == {"samples": s.samples, "screen_limit": s.screen_limit,
                                        "test_timeout": s.sandbox.test_timeout}
    assert SolveSettings().with_graph(CANONICAL) == s


@pytest.mark.parametrize(("tunable", "message"), [
    ({"kind": "knob", "target": "retry", "values": [1]}, "kind must be one of"),
    ({"kind": "budget", "target": "retry"}, "has no field 'values'"),
    ({"kind": "budget", "target": "retry", "values": [1], "extra": 1}, "unknown field 'extra'"),
    ({"kind": "budget", "target": "retry", "values": []}, "non-empty list"),
    ({"kind": "budget", "target": "retry", "values": [1.5, 3]}, "a budget is an integer"),
    ({"kind": "budget", "target": "retry", "values": [1, 2]}, "own value 3 is not among"),
    ({"kind": "budget", "target": "retries", "values": [3]}, "not a budget"),
    ({"kind": "edge", "target": "TEST->LOCALIZE:rollback", "values": [True, False]},
     "not a declared edge"),
    ({"kind": "edge", "target": "TEST->REPAIR:retry", "values": [1, 0]}, "takes true"),
    ({"kind": "threshold", "target": "GENERATE->EDIT:forward", "predicate": "Patch.exists",
      "values": [1.0]}, "no threshold test"),
    ({"kind": "threshold", "target": "LOCALIZE->IMPACT:forward", "values": [0.5]},
     "predicate"),
    ({"kind": "state", "target": "INIT", "values": [True, False]}, "cannot be optional"),
    ({"kind": "setting", "target": "nothing", "values": [1]}, "not in settings"),
    ({"kind": "budget", "target": "retry", "values": [3, 3]}, "lists a value twice"),
])
def test_a_malformed_tunable_says_what_to_fix(tunable: dict[str, Any], message: str) -> None:
    with pytest.raises(GraphLoadError, match=message):
        Graph.from_dict(with_tunables(tunable))


def test_a_tunable_declared_twice_and_bad_settings_are_refused() -> None:
    t = {"kind": "budget", "target": "retry", "values": [3]}
    with pytest.raises(GraphLoadError, match="declared twice"):
        Graph.from_dict(with_tunables(t, t))
    for bad in ({"samples": "3"}, {"samples": True}, ["samples"], {"": 1}):
        with pytest.raises(GraphLoadError, match="settings must map"):
            Graph.from_dict(with_tunables(settings_=bad))
    with pytest.raises(GraphLoadError, match="provenance must be an object"):
        Graph.from_dict({**CANONICAL.to_dict(), "provenance": "x"})


def test_assigning_an_unknown_name_is_refused() -> None:
    with pytest.raises(KeyError, match="no tunable named"):
        assign(CANONICAL.to_dict(), CANONICAL.tunables, {"budget:retries": 1})


@st.composite
def points(draw: st.DrawFn) -> dict[str, Any]:
    return {t.name: draw(st.sampled_from(t.values)) for t in CANONICAL.tunables
            if draw(st.booleans())}


@settings(max_examples=60, deadline=None)
@given(points())
def test_every_point_of_the_space_is_a_graph_with_exactly_those_values(point: dict[str, Any]
                                                                       ) -> None:
    graph = Graph.from_dict(assign(CANONICAL.to_dict(), CANONICAL.tunables, point))
    assert not graph.tunables  # a point of the space is not a space
    for t in CANONICAL.tunables:
        want = point.get(t.name, declared_value(CANONICAL, t))
        if t.kind == "threshold" and declared_value(graph, t) is None:
            # its edge is gone with an optional state
            assert point.get("state:REFLECT") is False and t.target.startswith("DEBUG->REFLECT")
            continue
        got = declared_value(graph, t)
        assert (got is not None if t.kind == "edge" else got) == want, t.name
    # nothing the space does not name changed: the states, the lattice, the other edges
    assert graph.states == CANONICAL.states and graph.lattice == CANONICAL.lattice
    kept = {t.key for t in graph.transitions}
    dropped = {t.key for t in CANONICAL.transitions} - kept
    allowed = set()
    if point.get("edge:VALIDATE->LOCALIZE:rollback") is False:
        allowed.add(("VALIDATE", "LOCALIZE", "rollback"))
    if point.get("state:REFLECT") is False:
        allowed |= {t.key for t in CANONICAL.transitions if "REFLECT" in (t.from_, t.to)}
    assert {(a, b, str(k)) for a, b, k in dropped} == {(a, b, str(k)) for a, b, k in allowed}
