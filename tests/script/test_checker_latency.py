"""The latency benchmark's arithmetic and plumbing (its timings are not asserted: speed is
measured by ``python -m bench.checker_latency``, not by unit tests)."""

from __future__ import annotations

import json

import pytest

from bench import checker_latency as bench
from bench.corpus import load


def test_percentile_interpolates_between_ranks() -> None:
    assert bench.percentile([5], 0.95) == 5
    assert bench.percentile([1, 2, 3, 4], 0.5) == 2.5
    assert bench.percentile([4, 1, 3, 2], 0.0) == 1
    assert bench.percentile(list(range(101)), 0.95) == 95
    with pytest.raises(ValueError):
        bench.percentile([], 0.5)


def test_measure_times_check_and_parse_for_every_script() -> None:
    scripts = load("valid")[:3]
    seen: list[str] = []

    def fake_check(source: str) -> None:
        seen.append(source)

    result = bench.measure(scripts, reps=4, warmup=1, check=fake_check)
    assert len(seen) == 3 * (4 + 1)
    assert [s.name for s in result.scripts] == [s.name for s in scripts]
    assert all(len(s.check_ns) == 4 and len(s.parse_ns) == 4 for s in result.scripts)
    assert all(t > 0 for s in result.scripts for t in s.parse_ns)
    data = result.to_dict()
    assert set(data["met"]) == {"p50", "p95", "ratio"}
    assert data["paper"] == {"p50_ms": 1.70, "p95_ms": 4.21}


def test_cli_json_with_the_real_checker(capsys: pytest.CaptureFixture[str]) -> None:
    code = bench.main(["--reps", "2", "--warmup", "0", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1)  # 1 means a target was missed, which this test does not judge
    assert data["scripts"] == len(load("valid"))
    assert code == (0 if all(data["met"].values()) else 1)
    assert data["check_p50_ms"] > 0 and data["parse_p50_ms"] > 0


def test_cli_table(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--reps", "1", "--warmup", "0", "--top", "3"])
    out = capsys.readouterr().out
    assert "Against the targets" in out and "checker p95" in out
