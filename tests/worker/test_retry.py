"""Issue 26: which failures send a job back to the queue, how soon, and how many times."""

from __future__ import annotations

import pytest

from frostline.embedded.jobs import HandBack, StoreHandBack
from frostline.errors import DefinitionError, RunBusy, StoreRefused, StoreUnavailable
from frostline.worker.tasks import BACKOFF_CAP_S, RETRIES, HandBackStrategy


def test_issue26_store_failures_back_off_exponentially_and_stop():
    strategy = HandBackStrategy(retries=4, backoff_s=0.5)
    delays = [strategy.delay(StoreHandBack("lost"), n) for n in range(6)]
    assert delays == [0.5, 1.0, 2.0, 4.0, None, None]
    assert strategy.delay(StoreUnavailable("down"), 3) == 4.0
    assert strategy.delay(StoreUnavailable("down"), 4) is None
    assert HandBackStrategy().delay(StoreHandBack("x"), 20) is None
    capped = HandBackStrategy(retries=30)
    assert capped.delay(StoreHandBack("x"), 25) == BACKOFF_CAP_S and RETRIES > 0


def test_issue26_a_refusal_is_never_retried_and_a_shutdown_always_is():
    strategy = HandBackStrategy()
    assert strategy.delay(StoreRefused("22000"), 0) is None
    assert strategy.delay(ValueError("bug"), 0) is None
    assert strategy.delay(HandBack("shutdown"), 100) == 0.0
    assert strategy.delay(RunBusy("held"), 100) == 1.0


def test_issue26_the_bound_comes_from_the_environment():
    strategy = HandBackStrategy.from_env({"FROSTLINE_JOB_RETRIES": "2",
                                          "FROSTLINE_JOB_BACKOFF_S": "0.1"})
    assert (strategy.retries, strategy.backoff_s) == (2, 0.1)
    with pytest.raises(DefinitionError, match="FROSTLINE_JOB_RETRIES"):
        HandBackStrategy.from_env({"FROSTLINE_JOB_RETRIES": "many"})
