"""Runs that wait (issue 16): approvals, events and timers, on both store backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frostline.capabilities.catalog import DEFAULT_CATALOG
from frostline.embedded.answers import approve, open_waits, signal, waits_of
from frostline.embedded.resume import resume
from frostline.errors import (
    AlreadyAnswered,
    AnswerInvalid,
    DefinitionError,
    RunFinished,
    UnknownWait,
)
from frostline.providers.local import LocalProviders
from frostline.runtime.outcome import AttemptOutcome
from frostline.store.base import Store
from frostline.testing import InProcessRunner
from tests.runtime.helpers import echo_ns, run

APPROVE_THEN_ECHO = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    ok = await ctx.run("human.approve", {"ask": "publish?", "data": {"n": 1}})
    if not ok["approved"]:
        return {"published": False, "reason": ok["reason"]}
    b = await ctx.run("echo", {"n": 2})
    return {"published": True, "by": ok["by"]}
"""
APPROVAL = "orchestrate/#1@:0"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "providers.log"


@pytest.fixture
def providers(log: Path) -> LocalProviders:
    return LocalProviders(log_path=str(log))


def _resume(store: Store, run_id: str, providers: Any) -> AttemptOutcome:
    return resume(store, run_id, providers=providers, runner=InProcessRunner())


def test_waits_are_catalog_capabilities_priced_zero_and_read_only() -> None:
    for name in ("human.approve", "event.wait", "timer.sleep"):
        cap = DEFAULT_CATALOG[name]
        assert cap.price_usd == 0 and cap.effect == "read_only"


def test_approval_waits_then_resumes_without_executing_twice(store: Store, providers: Any,
                                                            log: Path) -> None:
    first = run(store, "r", APPROVE_THEN_ECHO, providers)
    assert (first.status, first.exit_code) == ("waiting", 10)
    assert first.error is not None and first.error["identity"] == APPROVAL
    assert [w["identity"] for w in open_waits(store, "r")] == [APPROVAL]
    assert open_waits(store, "r")[0]["payload"]["data"] == {"n": 1}
    # resumed before the answer: it waits again, and nothing executes again
    again = _resume(store, "r", providers)
    assert again.status == "waiting" and again.executed == 0 and again.replayed == 1
    approve(store, "r", APPROVAL, by="alice", reason="fine")
    done = _resume(store, "r", providers)
    assert done.status == "succeeded", done.error
    assert done.result == {"published": True, "by": "alice"}
    assert echo_ns(log) == [1, 2]  # each committed call executed exactly once
    assert store.get_run("r").status == "succeeded"  # type: ignore[union-attr]


def test_rejection_reaches_the_script_as_the_result(store: Store, providers: Any,
                                                    log: Path) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    approve(store, "r", APPROVAL, by="bob", approved=False, reason="not yet")
    done = _resume(store, "r", providers)
    assert done.status == "succeeded"
    assert done.result == {"published": False, "reason": "not yet"}
    assert echo_ns(log) == [1]


REQUIRED = """
async def orchestrate(ctx, args):
    try:
        b = await ctx.run("echo", {"n": 7})
    except Exception as exc:
        return {"caught": str(exc)}
    return {"sent": b["n"]}
"""


def test_approval_required_rejection_is_a_catchable_error(store: Store, providers: Any,
                                                          log: Path) -> None:
    catalog = DEFAULT_CATALOG.extended(
        DEFAULT_CATALOG["echo"].__class__(**{**_fields(DEFAULT_CATALOG["echo"]),
                                             "approval_required": True}))
    first = run(store, "r", REQUIRED, providers, catalog=catalog)
    assert first.status == "waiting" and echo_ns(log) == []
    [wait] = open_waits(store, "r")
    assert wait["identity"] == "orchestrate/try#0.body/#0@:0~approval"
    assert wait["payload"] == {"capability": "echo", "payload": {"n": 7}}
    approve(store, "r", wait["identity"], by="carol", approved=False, reason="too risky")
    done = resume(store, "r", providers=providers, runner=InProcessRunner(), catalog=catalog)
    assert done.status == "succeeded" and "too risky" in done.result["caught"]
    assert echo_ns(log) == []  # never dispatched


def test_approval_required_dispatches_once_approved(store: Store, providers: Any,
                                                    log: Path) -> None:
    catalog = DEFAULT_CATALOG.extended(
        DEFAULT_CATALOG["echo"].__class__(**{**_fields(DEFAULT_CATALOG["echo"]),
                                             "approval_required": True}))
    run(store, "r", REQUIRED, providers, catalog=catalog)
    approve(store, "r", "orchestrate/try#0.body/#0@:0~approval", by="carol")
    done = resume(store, "r", providers=providers, runner=InProcessRunner(), catalog=catalog)
    assert done.result == {"sent": 7} and echo_ns(log) == [7]



def test_approval_required_answer_binds_the_payload(store: Store, providers: Any,
                                                   log: Path) -> None:
    catalog = DEFAULT_CATALOG.extended(
        DEFAULT_CATALOG["echo"].__class__(**{**_fields(DEFAULT_CATALOG["echo"]),
                                             "approval_required": True}))
    src = REQUIRED.replace('{"n": 7}', '{"n": args["n"]}')
    run(store, "r", src, providers, catalog=catalog, args={"n": 7})
    approve(store, "r", "orchestrate/try#0.body/#0@:0~approval", by="carol")
    # an attempt that would send another payload than the approved one stops before the
    # effect, and asks nobody again
    again = run(store, "r", src, providers, catalog=catalog, args={"n": 8})
    assert again.status == "diverged" and echo_ns(log) == []
    assert open_waits(store, "r") == []


def _fields(cap: Any) -> dict[str, Any]:
    from dataclasses import fields

    return {f.name: getattr(cap, f.name) for f in fields(cap)}


EVENTS = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    ev = await ctx.run("event.wait", {"event": "paid"})
    return ev
"""


def test_an_event_sent_before_the_wait_is_kept_and_delivered(store: Store,
                                                             providers: Any) -> None:
    store.create_run("r", {})
    sent = signal(store, "r", "paid", {"amount": 3})
    assert sent["delivered_to"] is None  # kept: nothing waits for it yet
    done = run(store, "r", EVENTS, providers)
    assert done.status == "succeeded" and done.result == {"amount": 3}


def test_an_event_sent_while_waiting_is_delivered_on_resume(store: Store,
                                                            providers: Any) -> None:
    assert run(store, "r", EVENTS, providers).status == "waiting"
    sent = signal(store, "r", "paid", [1, 2])
    assert sent["delivered_to"] == "orchestrate/#1@:0"
    assert _resume(store, "r", providers).result == [1, 2]


def test_an_event_timeout_gives_the_marker(store: Store, providers: Any) -> None:
    src = EVENTS.replace('{"event": "paid"}', '{"event": "paid", "timeout_s": 0.001}')
    first = run(store, "r", src, providers)
    # the first reach sets the deadline; the next attempt is past it
    result = first.result if first.status == "succeeded" else _resume(store, "r", providers).result
    assert result["timed_out"] is True and result["event"] == "paid"


def test_a_timer_in_the_past_wakes_at_once(store: Store, providers: Any) -> None:
    src = EVENTS.replace('ctx.run("event.wait", {"event": "paid"})',
                         'ctx.run("timer.sleep", {"until": "2001-01-01T00:00:00Z"})')
    done = run(store, "r", src, providers)
    assert done.status == "succeeded"
    assert done.result["due_at"] == "2001-01-01T00:00:00Z"


def test_repair_of_a_waiting_run_keeps_the_approval(store: Store, providers: Any,
                                                    log: Path) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    approve(store, "r", APPROVAL, by="alice")
    # a repaired script: same calls up to the approval, more work after it
    repaired = APPROVE_THEN_ECHO.replace(
        '    return {"published": True, "by": ok["by"]}',
        '    c = await ctx.run("echo", {"n": 3})\n    return {"published": True, "by": ok["by"]}')
    done = run(store, "r", repaired, providers)
    assert done.status == "succeeded" and echo_ns(log) == [1, 2, 3]
    waits = waits_of(store, "r")
    assert len(waits) == 1 and waits[0]["answer"]["by"] == "alice"  # asked once
    # and once delivered it is a committed call: a later repair replays it
    store.set_run_status("r", "failed")
    again = run(store, "r", repaired, providers)
    assert again.status == "succeeded" and again.executed == 0 and again.replayed == 4


def test_repair_changing_the_approved_payload_diverges_and_asks_nobody(
        store: Store, providers: Any, log: Path) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    approve(store, "r", APPROVAL, by="alice")
    # a literal change (the approval is answered, not yet committed, so the gate has no
    # frozen site for it: the answer's digest stops it) ...
    literal = APPROVE_THEN_ECHO.replace('"publish?"', '"publish everything?"')
    assert run(store, "r", literal, providers).status == "diverged"
    # ... and a data-dependent one
    changed = APPROVE_THEN_ECHO.replace('"data": {"n": 1}', '"data": args')
    out = run(store, "r", changed, providers, args={"all": True})
    assert out.status == "diverged" and out.error["code"] == "divergence"
    assert open_waits(store, "r") == [] and echo_ns(log) == [1]
    # once delivered it is a committed call: its frozen site stops a changed call
    # expression (the gate), and the payload digest a changed value (the runtime rule)
    done = run(store, "r", APPROVE_THEN_ECHO, providers)
    assert done.status == "succeeded"
    store.set_run_status("r", "failed")
    assert run(store, "r", changed, providers, args={"all": True}).status == "gate_stopped"
    by_args = APPROVE_THEN_ECHO.replace('"publish?"', 'args["ask"]')
    fresh = run(store, "r2", by_args, providers, args={"ask": "publish?"})
    approve(store, "r2", APPROVAL, by="alice")
    assert _resume(store, "r2", providers).status == "succeeded"
    store.set_run_status("r2", "failed")
    assert run(store, "r2", by_args, providers, args={"ask": "all?"}).status == "diverged"
    assert fresh.status == "waiting" and len(waits_of(store, "r2")) == 1
    assert len(waits_of(store, "r")) == 1 and echo_ns(log) == [1, 2, 1, 2]


def test_a_second_answer_is_refused_and_the_first_stands(store: Store, providers: Any) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    approve(store, "r", APPROVAL, by="alice", reason="first")
    with pytest.raises(AlreadyAnswered):
        approve(store, "r", APPROVAL, by="mallory", approved=False, reason="second")
    [wait] = waits_of(store, "r")
    assert wait["answer"]["value"]["approved"] is True
    assert wait["answer"]["value"]["reason"] == "first"


def test_bad_answers_are_refused_and_change_nothing(store: Store, providers: Any) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    before = waits_of(store, "r")
    with pytest.raises(UnknownWait, match="orchestrate/#1@:0"):
        approve(store, "r", "orchestrate/#9@:0", by="alice")
    with pytest.raises(AnswerInvalid):
        approve(store, "r", APPROVAL, by="alice", reason="x" * 5000)
    with pytest.raises(AnswerInvalid):
        approve(store, "r", APPROVAL, by="")
    with pytest.raises(AnswerInvalid):
        signal(store, "r", "bad name!", {})
    with pytest.raises(AnswerInvalid):
        signal(store, "r", "ok", float("nan"))
    with pytest.raises(AnswerInvalid):
        signal(store, "r", "ok", "x" * 300_000)
    with pytest.raises(UnknownWait):  # an approval is not an event
        store.answer_wait("r", APPROVAL, {"x": 1}, by="a", kind="event")
    assert waits_of(store, "r") == before


def test_a_finished_run_takes_no_signal_and_cannot_be_resumed(store: Store,
                                                              providers: Any) -> None:
    run(store, "r", APPROVE_THEN_ECHO, providers)
    approve(store, "r", APPROVAL, by="alice")
    assert _resume(store, "r", providers).status == "succeeded"
    with pytest.raises(RunFinished):
        signal(store, "r", "late", {})
    with pytest.raises(RunFinished):
        approve(store, "r", APPROVAL, by="alice")
    with pytest.raises(DefinitionError, match="not waiting"):
        _resume(store, "r", providers)


def test_waits_count_against_the_calls_budget(store: Store, providers: Any) -> None:
    out = run(store, "r", APPROVE_THEN_ECHO, providers,
              envelope={"budget": {"usd": 1.0, "calls": 1}})
    assert out.status == "rejected"  # the static bound counts the wait as a call


def test_concurrent_answers_one_wins_and_it_stands(store: Store, providers: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    run(store, "r", APPROVE_THEN_ECHO, providers)

    def answer(i: int) -> str:
        try:
            approve(store, "r", APPROVAL, by=f"p{i}", approved=i % 2 == 0)
            return f"p{i}"
        except AlreadyAnswered:
            return ""

    with ThreadPoolExecutor(8) as pool:
        winners = [w for w in pool.map(answer, range(16)) if w]
    [wait] = waits_of(store, "r")
    assert len(winners) == 1 and wait["answer"]["by"] == winners[0]


PAIR = """
async def orchestrate(ctx, args):
    got = await ctx.parallel([ctx.run("event.wait", {"event": "tick"}),
                              ctx.run("event.wait", {"event": "tick"})])
    return got
"""


def test_each_wait_for_a_name_takes_its_own_event(store: Store, providers: Any) -> None:
    store.create_run("r", {})
    for n in (1, 2, 3):
        signal(store, "r", "tick", n)
    done = run(store, "r", PAIR, providers)
    assert done.status == "succeeded" and sorted(done.result) == [1, 2]
    assert sorted(w["answer"]["value"] for w in waits_of(store, "r")) == [1, 2]
