"""Phase 1: the state registry and the transition table."""

from __future__ import annotations

import itertools

import pytest
from graph_helpers import run_canonical, scripted_bodies

from frostline.graph.engine import Engine
from frostline.graph.errors import IllegalTransition
from frostline.graph.records import TransitionKind
from frostline.graph.states import ALL_STATES, ALLOWLISTS, CANONICAL_STATES, TERMINALS

SEED_FORWARD = [
    ("INIT", "RECONNAISSANCE"), ("RECONNAISSANCE", "LOCALIZE"), ("LOCALIZE", "IMPACT"), ("IMPACT", "PLAN"),
    ("PLAN", "GENERATE"), ("GENERATE", "EDIT"), ("EDIT", "EXECUTE"), ("EXECUTE", "TRACE"), ("TRACE", "DEBUG"),
    ("DEBUG", "REPAIR"), ("DEBUG", "REFLECT"), ("REFLECT", "CANDIDATES"), ("CANDIDATES", "REPAIR"),
    ("CANDIDATES", "PLAN"), ("EXECUTE", "TEST"), ("TEST", "VALIDATE"), ("VALIDATE", "REGRESSION"),
    ("REGRESSION", "MEMORIZE"), ("MEMORIZE", "REVIEW"), ("REVIEW", "TERMINAL_ACCEPT"),
]
SEED_RETRY = [("TEST", "REPAIR"), ("REPAIR", "EDIT"), ("EDIT", "EXECUTE"), ("EXECUTE", "TEST")]
SEED_ROLLBACK = [("VALIDATE", "LOCALIZE"), ("VALIDATE", "REPAIR"), ("REVIEW", "REPAIR"), ("REGRESSION", "REPAIR")]
SEED_TERMINATION = [("PLAN", "contradiction_in_specification"), ("TEST", "out_of_budget"),
                    ("EXECUTE", "unrecoverable_sandbox_failure"), ("VALIDATE", "contradiction_in_specification"),
                    ("REVIEW", "out_of_budget")]


def pairs(graph, kind):
    return [(t.from_, t.to) for t in graph.transitions if t.kind is kind]


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_state_set_is_exactly_18_plus_2(name, request):
    g = request.getfixturevalue(name)
    assert len(CANONICAL_STATES) == 18
    assert g.states == ALL_STATES
    assert set(g.terminals) == {"TERMINAL_ACCEPT", "TERMINAL_REJECT"} == set(TERMINALS)
    assert g.initial == "INIT"


def test_seed_relation_is_the_specification_verbatim(seed):
    assert pairs(seed, TransitionKind.FORWARD) == SEED_FORWARD
    assert pairs(seed, TransitionKind.RETRY) == SEED_RETRY
    assert pairs(seed, TransitionKind.ROLLBACK) == SEED_ROLLBACK
    assert [(t.from_, t.reason) for t in seed.transitions if t.kind is TransitionKind.TERMINATION] == SEED_TERMINATION
    assert all(t.to == "TERMINAL_REJECT" for t in seed.transitions if t.kind is TransitionKind.TERMINATION)


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_relation_is_closed(name, request, forbidden_model):
    g = request.getfixturevalue(name)
    declared = {(t.from_, t.to) for t in g.transitions}
    for a in g.states:
        for b in g.states:
            assert g.has_pair(a, b) == ((a, b) in declared)
    # An un-enumerated pair cannot be traversed: it is ILLEGAL_TRANSITION, recorded, never honored.
    engine = Engine(g, scripted_bodies(), model=forbidden_model, verify=name == "canonical")
    with pytest.raises(IllegalTransition):
        engine.traverse("LOCALIZE", "GENERATE")
    [event] = engine.ledger.of_kind("illegal_transition")
    assert event.data["requested"] == "GENERATE"
    assert engine.counters.illegal_transitions == 1


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_terminals_are_sinks_and_every_state_has_a_contract(name, request):
    g = request.getfixturevalue(name)
    for t in g.terminals:
        assert g.outgoing(t) == ()
    assert set(g.contracts) == set(g.states)
    for s in g.states:
        assert g.contracts[s].permitted_tools == ALLOWLISTS[s]


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_inner_retry_cycle_is_present(name, request):
    g = request.getfixturevalue(name)
    cycle = ["TEST", "REPAIR", "EDIT", "EXECUTE", "TEST"]
    for a, b in itertools.pairwise(cycle):
        assert g.has_pair(a, b), (a, b)
    assert any(t.kind is TransitionKind.RETRY for t in g.outgoing("TEST") if t.to == "REPAIR")


def test_canonical_represents_each_pair_with_one_kind(canonical, seed):
    keys = [(t.from_, t.to) for t in canonical.transitions]
    assert len(keys) == len(set(keys))
    # the seed keeps its duplicate pairs as separate records, keyed by (from, to, kind)
    seed_pairs = [(t.from_, t.to) for t in seed.transitions]
    assert seed_pairs.count(("EDIT", "EXECUTE")) == 2
    assert len({t.key for t in seed.transitions}) == len(seed.transitions)


def test_loading_consults_no_model(monkeypatch, forbidden_model):
    # Building and loading the registry take no model at all; with a forbidden client at hand,
    # a deterministic run of the canonical graph makes zero model calls.
    result = run_canonical(model=forbidden_model)
    assert result.counters.model_calls == 0
    assert result.terminal == "TERMINAL_ACCEPT"
