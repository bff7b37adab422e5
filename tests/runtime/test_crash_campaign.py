"""A bounded crash campaign: kills at four points × three script shapes, no loss, no duplicate."""

from __future__ import annotations

import os

import pytest

from bench.crash_campaign import POINTS, SCRIPTS, campaign, report

TRIALS = int(os.environ.get("FROSTLINE_CRASH_TRIALS", len(POINTS) * len(SCRIPTS)))


@pytest.mark.slow
def test_crash_campaign_has_no_silent_duplicate_and_no_lost_commit(store_url):
    rows = campaign(store_url, TRIALS, seed=7)
    print(report(rows, 0.0))
    assert all(r["crashed"] for r in rows)
    assert sum(r["duplicates"] for r in rows) == 0
    assert sum(r["lost"] for r in rows) == 0
    assert all(r["final_ok"] for r in rows)
    # every point of every shape was exercised
    assert {(r["script"], r["point"]) for r in rows} == {(s, p) for s in SCRIPTS for p in POINTS}
