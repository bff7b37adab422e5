"""The SPIN cross-check: the Promela export reaches the checker's three verdicts."""

from __future__ import annotations

import pytest
from broken_graphs import BROKEN

from frostline.graph.graph import load_graph
from frostline.graph.modelcheck import check
from frostline.graph.promela import spin_available, spin_check, to_promela

needs_spin = pytest.mark.skipif(not spin_available(),
                                reason="spin and gcc are not installed (apt-get install -y spin gcc); "
                                       "CI installs them")

GRAPHS = {"seed": lambda: load_graph("seed"), "canonical": lambda: load_graph("canonical"),
          **{name: build for name, (build, _) in BROKEN.items()}}


def test_promela_text_encodes_the_semantics():
    text = to_promela(load_graph("canonical"))
    assert "active proctype walker()" in text
    assert "assert((a[A_Diagnosis] == 1) && (a[A_Plan] == 1));" in text  # GENERATE's inputs
    assert "retry < RETRY_LIMIT" in text and "rollback < ROLLBACK_LIMIT" in text
    assert "stuck_TEST: false" in text and "reached_TERMINAL_ACCEPT: last = S_TERMINAL_ACCEPT;" in text
    # GENERATE needs a VALID Diagnosis even in a graph whose contract forgot it
    seed = to_promela(load_graph("seed"))
    assert "assert((a[A_Diagnosis] == 1) && (a[A_Plan] == 1));" in seed


@needs_spin
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_spin_confirms_the_checker(name, tmp_path):
    graph = GRAPHS[name]()
    mine = check(graph)
    spin = spin_check(graph, workdir=tmp_path)
    assert (spin.reachability, spin.safety, spin.liveness) == (
        mine.reachability.ok, mine.safety.ok, mine.liveness.ok), spin.outputs
    if name in BROKEN:
        expected = BROKEN[name][1]
        assert (spin.reachability, spin.safety, spin.liveness) == (
            expected["reachability"], expected["safety"], expected["liveness"])
    if name == "canonical":
        assert spin.ok
    if name == "no_accept":
        assert spin.unreached_terminals == ("DONE",)
