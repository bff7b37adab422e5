"""Table VI (E7): only structural identity has no duplicate and no wrong reuse."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.identity import SCHEMES, study


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    with Lab() as lab:
        yield study(lab)


def _row(t):  # type: ignore[no-untyped-def]
    return (t.executed, t.replayed, t.duplicates, t.wrong, t.stops)


def test_structural_identity_with_the_gate_reproduces_table_iii(result) -> None:  # type: ignore[no-untyped-def]
    assert _row(result["structural"]["e2b"]) == (15, 8, 0, 0, 1)  # the one stop is a425
    assert _row(result["structural"]["probe"]) == (3, 2, 0, 0, 0)


def test_payload_identity_replays_the_relocation_and_reuses_a_sibling(result) -> None:  # type: ignore[no-untyped-def]
    assert _row(result["payload"]["e2b"]) == (16, 11, 0, 0, 0)  # a425 replays: no stop
    probe = result["payload"]["probe"]
    assert probe.wrong == 2  # the end-card title is served the cover's record, in both runs


def test_line_identity_pays_again_for_a_moved_call(result) -> None:  # type: ignore[no-untyped-def]
    assert _row(result["line"]["e2b"]) == (19, 8, 3, 0, 0)  # a425's three shots re-executed
    assert result["line"]["probe"].duplicates == 1  # one inserted line moves a committed call


def test_arrival_ordinal_breaks_on_fanout(result) -> None:  # type: ignore[no-untyped-def]
    t = result["ordinal"]["e2b"]
    assert t.wrong == 0 and t.duplicates + t.stops >= 1
    assert any(s.startswith("e388:failed->diverged") for s in t.statuses)


def test_only_structural_has_zero_duplicates_and_zero_wrong_reuse(result) -> None:  # type: ignore[no-untyped-def]
    clean = [s for s in SCHEMES
             if all(result[s][part].duplicates == result[s][part].wrong == 0
                    for part in ("e2b", "probe"))]
    assert clean == ["structural"]


def test_table_has_a_row_per_scheme(result) -> None:  # type: ignore[no-untyped-def]
    from bench.paper.identity import render

    text = render(result)
    assert "structural + gate     15         8     0      0      1" in text
    assert all(s in text for s in SCHEMES)


def test_the_structural_arm_runs_through_the_production_broker() -> None:
    from bench.paper.identity import SHARED, run_scheme

    with Lab() as lab:
        tally = run_scheme(lab, "structural", [SHARED])
        (run,) = [r for r in lab.store.list_runs() if r.run_id.startswith("e7-structural")]
        kinds = [e.kind for e in lab.store.list_events(run.run_id)]
        attempts = lab.store.list_attempts(run.run_id)
    assert (tally.executed, tally.replayed) == (3, 2)
    # the broker's audit trail, the checker's report and the annotated source of `execute`
    assert kinds.count("executed") == 3 and kinds.count("replay") == 2
    assert "provider_error" in kinds and "attempt_finished" in kinds
    assert all(a.annotated and a.report.get("valid") for a in attempts)
