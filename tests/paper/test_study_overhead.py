"""The overhead study measures what it says: a real committed prefix the gate accepts, a
certificate that verifies. (Latency itself is a benchmark figure, never asserted here.)"""

from __future__ import annotations

from bench.paper.overhead import render, study


def test_overhead_study_builds_real_prefixes_and_reports_every_size() -> None:
    rows = study((1, 10), repeat=3)
    assert [r.n for r in rows] == [1, 10]
    for r in rows:
        assert min(r.gate, r.gate_with_prefix, r.sites, r.gate_source, r.parse, r.persist,
                   r.verify, r.build_validate) > 0
    text = render(rows, 3)
    assert "Gate latency" in text and "Certificate" in text
