"""Properties of answers (issue 16): whatever sequence of answers a wait is sent, the first
stands and every later one is refused; events go to waits in the order they were sent."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.contract.waits import WaitRecord, approval_value
from frostline.errors import AlreadyAnswered
from frostline.store import open_store

_count = itertools.count()


def _wait(run_id: str, identity: str, kind: str = "approval", name: str | None = None
          ) -> WaitRecord:
    return WaitRecord(run_id, identity, kind, "human.approve" if kind == "approval"  # type: ignore[arg-type]
                      else "event.wait", name, {"ask": "x"}, "d" * 64, 0.0, None, 1)


# Names a store can hold: a NUL or a lone surrogate is refused before any answer (issue 26).
_NAMES = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                 min_size=1, max_size=8)


@settings(max_examples=25, deadline=None)
@given(answers=st.lists(st.tuples(st.booleans(), _NAMES), min_size=1, max_size=6))
def test_the_first_answer_stands(tmp_path_factory: object, answers: list[tuple[bool, str]]
                                 ) -> None:
    path = Path(str(tmp_path_factory.mktemp("p"))) / "s.db"  # type: ignore[attr-defined]
    with open_store(f"sqlite:///{path}") as store:
        store.create_run("r", {})
        store.settle_wait(_wait("r", "w"), 0.0)
        refused = 0
        for approved, by in answers:
            try:
                store.answer_wait("r", "w", approval_value(approved, by, None, 0.0), by=by)
            except AlreadyAnswered:
                refused += 1
        [(_, answer)] = store.list_waits("r")
        assert answer is not None and refused == len(answers) - 1
        assert answer.value["approved"] is answers[0][0] and answer.by == answers[0][1]


@settings(max_examples=20, deadline=None)
@given(bodies=st.lists(st.integers(), min_size=1, max_size=5),
       waits=st.integers(min_value=1, max_value=5), early=st.integers(min_value=0, max_value=5))
def test_events_reach_waits_in_order_and_none_is_lost(tmp_path_factory: object,
                                                      bodies: list[int], waits: int,
                                                      early: int) -> None:
    path = Path(str(tmp_path_factory.mktemp("e"))) / "s.db"  # type: ignore[attr-defined]
    with open_store(f"sqlite:///{path}") as store:
        store.create_run("r", {})
        early = min(early, len(bodies))
        for b in bodies[:early]:  # sent before any wait is reached: kept
            store.send_signal("r", "e", b)
        got = []
        for i in range(waits):
            _, answer = store.settle_wait(_wait("r", f"w{i}", "event", "e"), float(i))
            got.append(None if answer is None else answer.value)
        for b in bodies[early:]:  # sent while waits wait: the earliest unanswered takes it
            store.send_signal("r", "e", b)
        answers = [a.value for _, a in store.list_waits("r") if a is not None]
        delivered = min(waits, len(bodies))
        assert answers == bodies[:delivered]
        assert got[:early] == bodies[:min(early, waits)]
