"""Store outages fail closed: nothing is dispatched. The permissive opt-out is explicit."""

from __future__ import annotations

import logging

from frostline.errors import StoreUnavailable
from frostline.runtime.execute import FAIL_OPEN_ENV, fail_open_requested
from frostline.testing import FaultyStore
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


class LosesOneCommit(FaultyStore):
    """Answers everything except the first call's commit: the provider ran, nothing stored."""

    def __init__(self, inner):
        super().__init__(inner, fail_reads=False, fail_writes=False)
        self.lost = 0

    def commit_call(self, call_id, slot, **kw):
        if not self.lost:
            self.lost += 1
            raise StoreUnavailable("faulty store: the commit's connection was ended",
                                   backend="faulty", operation="commit_call")
        return super().commit_call(call_id, slot, **kw)


def test_issue31_a_commit_lost_after_dispatch_leaves_the_run_unresolved_everywhere(store,
                                                                                   tmp_path):
    from frostline.runtime.describe import describe_run
    from frostline.service.operations import run_summary

    faulty = LosesOneCommit(store)
    out = run(faulty, "r", ONE, local(tmp_path))
    assert echo_ns(tmp_path / "provider.jsonl") == [1]  # it ran; its result was not stored
    # one word for the state: the attempt, the run (`runs`), `show` and the API say it
    assert out.status == "unresolved" and out.error["code"] == "unresolved", out.error
    assert "frostline reconcile r IDENTITY --result @FILE" in out.error["message"]
    assert out.error["cause"]["code"] == "store_unavailable"
    assert store.get_run("r").status == "unresolved"
    shown = describe_run(store, "r")
    assert shown["run"]["status"] == "unresolved" and len(shown["unresolved"]) == 1
    assert run_summary(store, store.get_run("r"))["status"] == "unresolved"
    # and the next attempt says the same, rather than running the call again
    again = run(store, "r", ONE, local(tmp_path))
    assert again.status == "unresolved" and echo_ns(tmp_path / "provider.jsonl") == [1]
