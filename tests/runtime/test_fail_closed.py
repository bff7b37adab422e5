"""Store outages fail closed: nothing is dispatched. The permissive opt-out is explicit."""

from __future__ import annotations

import logging

from frostline.errors import StoreUnavailable
from frostline.runtime.execute import FAIL_OPEN_ENV, fail_open_requested
from frostline.store.faulty import FaultyStore
from tests.runtime.helpers import echo_ns, local, run

ONE = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1})
"""


def test_a_store_that_fails_every_read_means_zero_provider_executions(store, tmp_path):
    faulty = FaultyStore(store, fail_reads=True, fail_writes=False)
    out = run(faulty, "r", ONE, local(tmp_path))
    assert out.status == "failed" and out.error["type"] == "StoreUnavailable"
    assert out.provider_calls == 0 and echo_ns(tmp_path / "provider.jsonl") == []
    assert faulty.faults >= 1


def test_a_failed_prefix_read_after_commits_dispatches_nothing(store, tmp_path):
    p = local(tmp_path)
    assert run(store, "r", ONE, p).status == "succeeded"
    faulty = FaultyStore(store, fail_reads=True, fail_writes=True)
    out = run(faulty, "r", ONE.replace('"n": 1', '"n": 2'), p)
    assert out.status == "failed" and out.error["code"] == "store_unavailable"
    assert echo_ns(tmp_path / "provider.jsonl") == [1]


class LosesAttemptWrites(FaultyStore):
    """Answers everything except the durable attempt record written before dispatch."""

    def __init__(self, inner):
        super().__init__(inner, fail_reads=False, fail_writes=False)

    def begin_call(self, *args, **kwargs):
        self.faults += 1
        raise StoreUnavailable("injected: attempt record not written")


def test_a_failed_attempt_write_stops_the_run_before_dispatch(store, tmp_path):
    faulty = LosesAttemptWrites(store)
    out = run(faulty, "r", ONE, local(tmp_path))
    assert out.status == "failed" and out.error["type"] == "StoreUnavailable"
    assert out.provider_calls == 0 and echo_ns(tmp_path / "provider.jsonl") == []
    assert store.get_attempt("r", 1).status == "failed"


def test_fail_open_is_explicit_and_loud(store, tmp_path, caplog, monkeypatch):
    faulty = LosesAttemptWrites(store)
    with caplog.at_level(logging.ERROR):
        out = run(faulty, "r", ONE, local(tmp_path), fail_open=True)
    assert out.status == "succeeded" and out.result == {"n": 1}
    assert echo_ns(tmp_path / "provider.jsonl") == [1]
    assert store.list_slots("r") == []  # nothing could be committed without the record
    assert any("FAIL-OPEN" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv(FAIL_OPEN_ENV, "1")
    assert fail_open_requested(None) is True and fail_open_requested(False) is False
    monkeypatch.setenv(FAIL_OPEN_ENV, "0")
    assert fail_open_requested(None) is False
