"""A call's typed report keeps the JSON shape of the attempt record's `calls` rows."""

from __future__ import annotations

import json

from frostline.contract.identity import Identity
from frostline.errors import FrostlineError
from frostline.runtime.call import BrokerStats, Call, CallReport, Outcome, RunStop


def test_a_row_keeps_its_key_order_and_plain_json_values() -> None:
    report = CallReport("s@:0", "echo", digest="d", retry_of=3, semantic_repeat="warn",
                        outcome=Outcome.FAILED, error={"code": "x"})
    row = report.as_row()
    assert list(row) == ["identity", "capability", "digest", "retry_of", "semantic_repeat",
                         "outcome", "error"]
    assert type(row["outcome"]) is str
    assert json.dumps(row) == ('{"identity": "s@:0", "capability": "echo", "digest": "d", '
                               '"retry_of": 3, "semantic_repeat": "warn", "outcome": "failed", '
                               '"error": {"code": "x"}}')


def test_a_row_leaves_out_what_the_call_never_got_to() -> None:
    denied = CallReport("s@:0", "echo", outcome=Outcome.DENIED, error={"code": "grant_denied"})
    assert denied.as_row() == {"identity": "s@:0", "capability": "echo", "outcome": "denied",
                               "error": {"code": "grant_denied"}}
    assert CallReport("s@:1", "echo").as_row() == {"identity": "s@:1", "capability": "echo"}


def test_the_rows_show_an_outcome_that_changed_after_the_reply() -> None:
    stats = BrokerStats()
    report = CallReport("s@:0", "echo", digest="d", outcome=Outcome.EXECUTED)
    stats.reports.append(report)
    report.outcome = Outcome.STORE_UNAVAILABLE  # its commit failed to settle
    assert [r["outcome"] for r in stats.calls] == ["store_unavailable"]


def test_a_call_spells_its_identity_once() -> None:
    call = Call.of(Identity("s", (1, 2), 3), "echo", {"n": 1})
    assert call.text == "s@1.2:3" and call.report.identity == call.text
    assert call.report.capability == "echo" and call.key is None


def test_the_run_stops_for_its_first_reason() -> None:
    stop = RunStop()
    first = FrostlineError("first")
    stop.stop(first)
    stop.stop(FrostlineError("second"))
    assert stop.error is first
