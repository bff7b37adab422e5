"""Fig. 5: on an N-way fanout with one failing branch the contract makes N + 1 calls, a rerun 2N."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.fanout import case, measure


@pytest.mark.parametrize("n", [4, 8])
def test_contract_makes_n_plus_one_calls_and_a_rerun_2n(n: int) -> None:
    with Lab() as lab:
        p = measure(lab, n)
        (a, s) = lab.logged()
    assert (p.contract_calls, p.rerun_calls) == (n + 1, 2 * n)
    assert (p.replayed, p.new, p.duplicates) == (n - 1, 1, 0)
    # the provider log holds exactly the failed run, the repair and the rerun: (N+1) + N
    assert (a, s) == (n + 1 + n, n - 1 + 1 + n)


def test_the_failing_branch_is_the_only_difference() -> None:
    c = case(4)
    assert c.original.replace("2048x2048", "512x512") == c.repair
