"""s1: a committed payload edit diverges before dispatch; the supersede-append repair completes."""

from __future__ import annotations

from bench.paper.common import Lab
from bench.paper.payload_change import study


def test_edit_in_place_diverges_with_zero_new_calls_and_append_completes() -> None:
    with Lab() as lab:
        r = study(lab)
    assert r.committed == 3
    # the gate cannot see a value change outside the call expression; the digest does
    assert (r.edit_status, r.edit_gate_accepted) == ("diverged", True)
    assert (r.edit_new_calls, r.edit_divergences) == (0, 1)
    assert (r.supersede_status, r.supersede_replayed, r.supersede_new) == ("succeeded", 3, 2)
    assert r.supersede_naive == 5
    assert r.first_shot_replaced and not r.stale_artifact_returned
