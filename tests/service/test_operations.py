"""The UI's read models, on their own: the identity timeline's row order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from frostline.service.operations import timeline, timeline_order


def test_branches_read_in_numeric_order_whatever_order_they_finished_in():
    seen = {"orchestrate/#0@:0": 1, "orchestrate.render/#0@3:0": 2,
            "orchestrate.render/#0@1:0": 3, "orchestrate.render/#0@0:0": 4,
            "orchestrate.render/#0@10:0": 5, "orchestrate.render/#0@2:0": 6,
            "orchestrate/#1@:0": 7}
    assert timeline_order(seen, seen) == [
        "orchestrate/#0@:0", "orchestrate.render/#0@0:0", "orchestrate.render/#0@1:0",
        "orchestrate.render/#0@2:0", "orchestrate.render/#0@3:0", "orchestrate.render/#0@10:0",
        "orchestrate/#1@:0"]


@given(st.permutations([(b, o) for b in range(12) for o in range(2)]))
def test_within_a_site_rows_follow_path_then_occurrence(finish_order):
    seen = {f"orchestrate.gen/#0@{b}:{o}": i for i, (b, o) in enumerate(finish_order)}
    ordered = timeline_order(seen, seen)
    assert ordered == [f"orchestrate.gen/#0@{b}:{o}" for b in range(12) for o in range(2)]


def test_the_store_timeline_is_sorted(tmp_path):
    from frostline.store import open_store

    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        store.create_run("r", {})
        store.start_attempt("r", source="", annotated="", report={})
        for ident in ("orchestrate/#0@:0", "orchestrate/for#0.body/#0@:2",
                      "orchestrate/for#0.body/#0@:0", "orchestrate/for#0.body/#0@:1"):
            store.append_event("r", "executed", {"attempt": 1, "identity": ident})
        rows = [r["identity"] for r in timeline(store, "r")["rows"]]
    assert rows == ["orchestrate/#0@:0", "orchestrate/for#0.body/#0@:0",
                    "orchestrate/for#0.body/#0@:1", "orchestrate/for#0.body/#0@:2"]


def test_issue27_the_timeline_shows_the_calls_an_attempt_waits_at(store, tmp_path):
    from frostline.embedded.answers import approve
    from frostline.providers.local import LocalProviders
    from tests.runtime.helpers import run
    from tests.waits.test_waits import APPROVAL, APPROVE_THEN_ECHO

    providers = LocalProviders(log_path=str(tmp_path / "p.log"))
    assert run(store, "r", APPROVE_THEN_ECHO, providers).status == "waiting"
    assert run(store, "r", APPROVE_THEN_ECHO, providers).status == "waiting"
    approve(store, "r", APPROVAL, by="alice")
    assert run(store, "r", APPROVE_THEN_ECHO, providers).status == "succeeded"
    rows = {r["identity"]: r for r in timeline(store, "r")["rows"]}
    assert rows[APPROVAL]["attempts"] == {"1": "waiting", "2": "waiting", "3": "executed"}
    assert rows[APPROVAL]["capability"] == "human.approve"
    assert list(rows) == ["orchestrate/#0@:0", APPROVAL, "orchestrate/#2@:0"]
