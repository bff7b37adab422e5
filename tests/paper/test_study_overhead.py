"""The overhead study measures what it says: a real committed prefix the gate accepts, a
certificate that verifies, and the relations its table rests on. Absolute latencies are
benchmark figures, never asserted; the relations below hold by a wide margin on any host,
because each pair is one piece of work against a strictly larger one."""

from __future__ import annotations

from bench.paper.overhead import render, study


def test_overhead_study_builds_real_prefixes_and_reports_every_size() -> None:
    rows = study((1, 10), repeat=5)
    assert [r.n for r in rows] == [1, 10]
    for r in rows:
        assert min(r.gate, r.gate_with_prefix, r.sites, r.gate_source, r.parse, r.persist,
                   r.verify, r.build_validate) > 0
        # The gate works on sites the checker already computed: far cheaper than computing
        # them from source, and gate_source is exactly that computation plus the gate.
        assert r.gate < r.sites and r.gate < r.gate_source and r.parse < r.gate_source
        # Reading the prefix from the store costs more than gating it in memory.
        assert r.gate < r.gate_with_prefix
        # One SHA-256 over the chained bytes is the floor of the certificate; the real store
        # adds its I/O to the same work as the in-memory one.
        assert r.sha256.wall < r.mem_certificate.wall < r.persist + r.verify
        assert set(r.stores) >= {"sqlite"}
    text = render(rows, 5)
    assert "Gate latency" in text and "Certificate" in text
    assert "at 10 sites: gate" in text
