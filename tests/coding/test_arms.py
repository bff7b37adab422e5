"""The one arms table: §8.1's order (each arm a strict superset of the one before) and §8.4's
ablations (arm 4 with exactly one mechanism off), pinned flag by flag."""

from __future__ import annotations

import itertools
from dataclasses import fields, replace

import pytest

from frostline.coding.arms import ALL_NAMES, ARMS, arm, baseline_of, parse_names
from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, Arm
from frostline.errors import DefinitionError

MECHANISMS = ("gates", "allowlists", "lattice", "failure_edges", "single_l", "adaptive_plan")


def _on(a: Arm) -> set[str]:
    return {m for m in MECHANISMS if getattr(a, m)}


def test_the_table_is_pinned() -> None:
    assert list(ARMS) == list(ALL_NAMES) == [*ARM_NAMES, *ABLATION_NAMES]
    assert {f.name for f in fields(Arm)} == {"name", "free_agent", "needs_model", *MECHANISMS}
    assert _on(ARMS["free_agent"]) == set() and ARMS["free_agent"].free_agent
    assert _on(ARMS["arm1"]) == {"single_l"}
    assert _on(ARMS["arm2"]) == {"single_l", "gates", "allowlists", "failure_edges"}
    assert _on(ARMS["arm3"]) == _on(ARMS["arm2"]) | {"adaptive_plan"}
    assert _on(ARMS["arm4"]) == _on(ARMS["arm3"]) | {"lattice"} == set(MECHANISMS)
    assert [n for n, a in ARMS.items() if a.needs_model] == ["free_agent", "no_single_l"]
    for name, a in ARMS.items():
        assert a.name == name


def test_each_arm_adds_one_mechanism_in_the_order_of_8_1() -> None:
    steps = list(itertools.pairwise(ARM_NAMES[1:]))  # arm1 -> arm2 -> arm3 -> arm4
    added = [_on(ARMS[b]) - _on(ARMS[a]) for a, b in steps]
    assert added == [{"gates", "allowlists", "failure_edges"}, {"adaptive_plan"}, {"lattice"}]
    for a, b in steps:
        assert _on(ARMS[a]) < _on(ARMS[b])


ABLATED = {"no_gates": "gates", "no_allowlists": "allowlists", "no_lattice": "lattice",
           "no_failure_edges": "failure_edges", "no_single_l": "single_l"}


@pytest.mark.parametrize("name", ABLATION_NAMES)
def test_each_ablation_is_arm4_with_one_mechanism_off(name: str) -> None:
    assert set(ABLATED) == set(ABLATION_NAMES)
    assert set(MECHANISMS) - _on(ARMS[name]) == {ABLATED[name]}
    assert ARMS[name].needs_model is (name == "no_single_l")


def test_no_lattice_is_the_configuration_of_arm3() -> None:
    assert replace(ARMS["no_lattice"], name="arm3") == ARMS["arm3"]


def test_names_and_comparisons() -> None:
    with pytest.raises(DefinitionError, match="unknown arm 'arm9'"):
        arm("arm9")
    for name in ALL_NAMES:
        assert arm(name) is ARMS[name]
    assert baseline_of("arm1", set()) == "free_agent"
    assert baseline_of("arm3", {"arm2", "arm3"}) == "arm2"
    assert baseline_of("arm4", {"arm2", "arm3", "arm4"}) == "arm3"
    assert baseline_of("arm4", {"arm2", "arm4"}) == "arm2"
    assert parse_names(("arm4,arm1", " no_gates ")) == (["arm1", "arm4", "no_gates"], [])
    assert parse_names(["arm5"]) == ([], ["arm5"])
    assert parse_names(()) == (list(ALL_NAMES), [])
