"""Smoke test of bench.authoring (issue 29): tiny sizes, sane rows, no timing thresholds."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench import authoring


def test_issue29_authoring_bench_sections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shapes = authoring.task_shapes(tmp_path)
    assert [r["task"] for r in shapes] == ["brand video", "customer support"]
    assert all(r["status"] == "succeeded" and r["drafts"] == 2 for r in shapes)
    brand = shapes[0]
    assert brand["repair_rewrites"] == 2 and brand["replayed"] == 4  # nothing paid twice
    scaling = authoring.prompt_scaling([12, 200], 1)
    assert [r["capabilities"] for r in scaling] == [12, 200]
    assert scaling[1]["prompt_chars"] > scaling[0]["prompt_chars"]
    overhead = authoring.api_overhead(tmp_path, 1)
    assert math.isfinite(overhead["ratio"]) and overhead["ratio"] > 0
    assert authoring.main(["--quick"]) == 0
    assert "customer support" in capsys.readouterr().out
