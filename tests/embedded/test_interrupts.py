"""`Interrupts` (issue 26): cancelling one run's attempt stops that attempt alone and ends it
with JobCancelled, a cancellation asked before the attempt starts still applies, and a host's
hand-back (interrupt_all) stays a HandBack."""

from __future__ import annotations

import asyncio
import threading

import pytest

from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import HandBack, JobCancelled


async def forever(started: threading.Event) -> str:
    started.set()
    await asyncio.sleep(3600)
    return "never"


def _in_thread(stops: Interrupts, run_id: str, started: threading.Event) -> dict[str, object]:
    out: dict[str, object] = {}

    def go() -> None:
        try:
            out["value"] = stops.run(forever(started), run_id=run_id)
        except BaseException as exc:  # what the test inspects
            out["error"] = exc

    thread = threading.Thread(target=go)
    thread.start()
    out["thread"] = thread
    return out


def test_issue26_cancel_stops_only_that_runs_attempt() -> None:
    stops = Interrupts()
    a_started, b_started = threading.Event(), threading.Event()
    a = _in_thread(stops, "a", a_started)
    b = _in_thread(stops, "b", b_started)
    assert a_started.wait(10) and b_started.wait(10)
    assert stops.running("a") and stops.cancel("a", "alice") is True
    a["thread"].join(10)  # type: ignore[attr-defined]
    error = a["error"]
    assert isinstance(error, JobCancelled) and error.by == "alice"
    assert stops.running("b") and not stops.running("a")
    assert stops.interrupt_all("shutdown") == 1
    b["thread"].join(10)  # type: ignore[attr-defined]
    assert isinstance(b["error"], HandBack)


def test_issue26_a_cancellation_asked_before_the_attempt_starts_applies() -> None:
    stops = Interrupts()
    assert stops.cancel("r", "bob") is False and stops.cancelling("r")
    with pytest.raises(JobCancelled) as caught:
        stops.run(forever(threading.Event()), run_id="r")
    assert caught.value.by == "bob"
    stops.forget("r")
    assert not stops.cancelling("r")

    async def quick() -> int:
        return 7

    assert stops.run(quick(), run_id="r") == 7  # forgotten: the next attempt runs
