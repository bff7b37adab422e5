"""Occurrence extension under warn/deny/auto, and a fanout path shift (Section IV-F)."""

from __future__ import annotations

import pytest

from bench.paper.common import Lab
from bench.paper.shifts import occurrence_extension, path_shift


@pytest.fixture
def lab():  # type: ignore[no-untyped-def]
    with Lab() as lab:
        yield lab


def test_warn_records_three_repeats_and_executes_them(lab: Lab) -> None:
    e = occurrence_extension(lab, "warn")
    assert (e.gate_accepted, e.status, e.repeats, e.executed, e.provider_calls) == (
        True, "succeeded", 3, 3, 3)


@pytest.mark.parametrize("policy", ["deny", "auto"])
def test_deny_and_auto_spend_nothing_on_a_repeated_image(lab: Lab, policy: str) -> None:
    e = occurrence_extension(lab, policy)
    assert e.gate_accepted and e.status == "failed"
    assert (e.executed, e.provider_calls) == (0, 0)
    assert e.repeats >= 1  # the first repeat is named, and stops the run before dispatch


def test_path_shift_diverges_without_a_duplicate(lab: Lab) -> None:
    s = path_shift(lab)
    assert s.gate_accepted and s.status == "diverged" and s.divergences >= 1
    assert s.executed <= 1  # the new fourth path may run before the stop lands; nothing else
    assert s.identity_duplicates == 0
    assert s.payload_repeats <= s.executed
