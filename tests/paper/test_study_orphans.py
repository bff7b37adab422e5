"""A committed loop shrunk from three iterations to one: two orphans; warn completes, stop fails."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.orphans import shrink


@pytest.mark.parametrize(("policy", "status"), [("warn", "succeeded"), ("stop", "failed")])
def test_shrunk_loop_reports_two_orphans(policy: str, status: str) -> None:
    with Lab() as lab:
        r = shrink(lab, policy)
    assert r.gate_accepted and r.status == status
    assert r.orphans == ("orchestrate/for#0.body/#0@:1", "orchestrate/for#0.body/#0@:2")
    assert (r.replayed, r.provider_calls) == (1, 0)
    assert r.persisted
