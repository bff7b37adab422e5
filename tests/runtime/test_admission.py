"""Frame admission on its own: occurrences in arrival order, race ordinals, rejections."""

from __future__ import annotations

from typing import Any

import pytest

from frostline.contract.identity import Identity
from frostline.runtime.admission import (
    MAX_PATH_DEPTH,
    Admission,
    FrameRejected,
    RaceDecision,
    Rejection,
)
from frostline.runtime.call import Call

NONCE = "n" * 32
SITE = "orchestrate/#0"


def _frame(**fields: Any) -> dict[str, Any]:
    return {"type": "call", "nonce": NONCE, "site": SITE, "path": [], "capability": "echo",
            "payload": {"n": 1}, **fields}


def _admission() -> Admission:
    return Admission(NONCE, {SITE: "echo"})


def test_occurrences_count_per_site_and_path_in_arrival_order() -> None:
    admission = _admission()
    calls = [admission.admit(_frame(path=p), 8, False) for p in ([], [1], [], [1], [])]
    assert all(isinstance(c, Call) for c in calls)
    assert [c.identity for c in calls if isinstance(c, Call)] == [
        Identity(SITE, (), 0), Identity(SITE, (1,), 0), Identity(SITE, (), 1),
        Identity(SITE, (1,), 1), Identity(SITE, (), 2)]
    # The text form is spelled out for speed; it must be the identity's own.
    assert all(c.text == str(c.identity) == c.row["identity"] for c in calls
               if isinstance(c, Call))


def test_a_stopped_run_assigns_no_occurrence_yet_still_rejects_a_forged_frame() -> None:
    admission = _admission()
    assert admission.admit(_frame(), 8, True) is None
    forged = admission.admit(_frame(nonce="x" * 32), 8, True)
    assert isinstance(forged, Rejection) and forged.reason == "nonce"
    first = admission.admit(_frame(), 8, False)
    assert isinstance(first, Call) and first.identity.occurrence == 0


@pytest.mark.parametrize("fields,reason", [
    ({"nonce": "x" * 32}, "nonce"),
    ({"path": [8]}, "path"),  # an index at max_fanout
    ({"path": [0] * (MAX_PATH_DEPTH + 1)}, "path"),
    ({"path": [True]}, "path"),
    ({"type": "exec"}, "type"),
    ({"site": "orchestrate/#9"}, "site"),
    ({"capability": "fetch"}, "capability"),
    ({"payload": [1]}, "payload"),
])
def test_an_inadmissible_frame_is_rejected_for_its_reason(fields: dict[str, Any],
                                                          reason: str) -> None:
    rejected = _admission().admit(_frame(**fields), 8, False)
    assert isinstance(rejected, Rejection) and rejected.reason == reason
    err = rejected.error()
    assert isinstance(err, FrameRejected) and err.code == "rpc_rejected"
    # Only the frame's identifying fields are shown, never its nonce or payload.
    assert set(err.fields["frame"]) <= {"type", "site", "path", "capability"}


def test_race_ordinals_count_per_path_and_winners_must_be_plausible() -> None:
    admission = _admission()
    decided = [admission.admit({"type": "decide", "nonce": NONCE, "path": p, "value": 1}, 8,
                               False) for p in ([], [2], [])]
    assert decided == [RaceDecision("race:#0", 1), RaceDecision("race:2#0", 1),
                       RaceDecision("race:#1", 1)]
    bad = admission.admit({"type": "decide", "nonce": NONCE, "path": [], "value": 8}, 8, False)
    assert isinstance(bad, Rejection) and bad.reason == "decide"
