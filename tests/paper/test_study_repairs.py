"""Table III (E2b): the four repairs spend 15 successful executions where a full rerun spends 27."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.repairs import CASES, study


@pytest.fixture(scope="module")
def rows():  # type: ignore[no-untyped-def]
    with Lab() as lab:
        yield {r.case: r for r in study(lab)}


def test_per_case_counts(rows) -> None:  # type: ignore[no-untyped-def]
    got = {name: (r.failed_at, r.committed, r.replayed, r.new, r.total, r.naive)
           for name, r in rows.items()}
    assert got == {"e388": (4, 3, 3, 1, 4, 7), "a425": (4, 3, 0, 0, 3, 7),
                   "5698a": (3, 2, 2, 2, 4, 6), "5698b": (4, 3, 3, 1, 4, 7)}


def test_episode_totals_match_the_paper(rows) -> None:  # type: ignore[no-untyped-def]
    assert sum(r.committed for r in rows.values()) == 11
    assert sum(r.replayed for r in rows.values()) == 8
    assert sum(r.new for r in rows.values()) == 4
    assert (sum(r.total for r in rows.values()), sum(r.naive for r in rows.values())) == (15, 27)
    # the four injected failures are paid attempts but not successes: 15 + 4 = 19
    assert sum(r.attempts for r in rows.values()) == 19


def test_relocation_is_stopped_before_spending(rows) -> None:  # type: ignore[no-untyped-def]
    a425 = rows["a425"]
    assert a425.repair_status == "gate_stopped" and a425.gate_kinds == ("removed",)
    assert (a425.new, a425.replayed) == (0, 0)


def test_no_duplicate_no_orphan_certificates_consistent(rows) -> None:  # type: ignore[no-untyped-def]
    for r in rows.values():
        assert (r.duplicates, r.orphans, r.certificate_differences) == (0, 0, 0), r.case
        if r.case != "a425":
            assert r.repair_status == "succeeded"


def test_cases_are_distinct_scripts() -> None:
    assert len({c.name for c in CASES}) == 4
    assert all(c.original != c.repair for c in CASES)


def test_table_prints_the_totals(rows) -> None:  # type: ignore[no-untyped-def]
    from bench.paper.repairs import render

    total = render(list(rows.values())).splitlines()[-1].split()
    assert total[:6] == ["total", "11", "8", "4", "15", "27"]
