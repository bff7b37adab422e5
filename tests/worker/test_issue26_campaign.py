"""The hostile-tenant campaign (issue 26, "Tests and figures"): a real `frostline serve` and
`frostline mcp --transport http` over PostgreSQL with two real `frostline worker` processes,
an honest principal and a hostile one (`bench/hostile.py` holds the campaign; this checks its
acceptance). Loopback only, bounded, stops by itself: a few rounds here, a longer campaign with
FROSTLINE_SLOW=1.

Acceptance: nothing wedged (no job left queued or running, the honest principal's runs after
the attack finish), every answer the hostile principal gets is a 2xx or the JSON error shape
(reads included), and the honest principal's runs all finish with the right results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import hostile
from tests.conftest import PG_ENV

pytestmark = pytest.mark.postgres


def test_issue26_hostile_tenant_campaign(tmp_path: Path) -> None:
    base = os.environ.get(PG_ENV, "").strip()
    if not base:
        pytest.skip(f"set {PG_ENV}=postgresql://… to run the campaign")
    runs = 30 if os.environ.get("FROSTLINE_SLOW") == "1" else 5
    report = hostile.campaign(base, tmp_path, runs)
    assert report.log.bad == [], report.log.bad
    for phase in (report.alone, report.attacked, report.after):
        assert phase.wrong == [], phase.wrong
    assert len(report.alone.latencies) == len(report.attacked.latencies) == runs
    assert len(report.after.latencies) == 2
    assert report.stuck == [], report.stuck
    got = report.log.answers
    # the attacks were made and refused as they should be, on every surface
    for seen in ("POST runs args nul 422", "POST runs args surrogate 422",
                 "POST runs args deep 422", "POST runs huge 413", "POST signal poison 422",
                 "POST self-approval 403", "mcp self-approve approval_forbidden",
                 "mcp run_script nul value_not_storable", "mcp run_script flood too_many_requests",
                 "POST runs flood 429"):
        assert got[seen] > 0, (seen, dict(got))
    # poisoned runs stay readable
    assert got["GET run 200"] > 0 and got["GET events 200"] > 0
