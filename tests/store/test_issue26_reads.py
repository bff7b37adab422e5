"""Issue 26 §6: the reads a run's page is built from never load what they leave out, on both
stores alike (and as the base implementation does for any other store)."""

from __future__ import annotations

from frostline.store import Store
from frostline.store.base import Store as BaseStore
from tests.store.helpers import call_and_commit, ident

SRC = "async def orchestrate(ctx, args):\n    return 1\n"


def _run_with_results(store: Store) -> None:
    store.create_run("r", {})
    attempt = store.start_attempt("r", source=SRC, annotated=SRC, report={})
    call_and_commit(store, "r", ident(0), {"n": 0}, {"artifact": "sha256:" + "a" * 64})
    call_and_commit(store, "r", ident(1), {"n": 1}, {"text": "100%_done"})
    call_and_commit(store, "r", ident(2, (1,)), {"n": 2}, ["x", {"ref": "sha256:" + "b" * 64}])
    store.finish_attempt("r", attempt.number, status="succeeded", result={"blob": "y" * 5000})
    small = store.start_attempt("r", source=SRC, annotated=SRC, report={})
    store.finish_attempt("r", small.number, status="succeeded", result=[1, 2])


def test_issue26_lean_reads_leave_results_out(store: Store) -> None:
    _run_with_results(store)
    for impl in (type(store), BaseStore):  # the SQL override and the generic one agree
        heads = impl.list_attempt_heads(store, "r", 1000)
        # the size of its JSON as the store keeps it (PostgreSQL's text form adds a space)
        assert [h.record.result for h in heads] == [None, [1, 2]]
        assert 5000 < (heads[0].result_bytes or 0) < 5020 and heads[1].result_bytes is None
        assert [h.record.status for h in impl.list_attempt_heads(store, "r", 10**6)] == \
            ["succeeded", "succeeded"]
        assert impl.list_attempt_heads(store, "r", 10**6)[0].record.result == {"blob": "y" * 5000}
        usages = impl.list_slot_usages(store, "r")
        assert [s.result for s in usages] == [None, None, None]
        assert [s.usage for s in usages] == [s.usage for s in store.list_slots("r")]
        assert impl.slots_mentioning(store, "r", "sha256:") == [ident(0), ident(2, (1,))]
        # LIKE's wildcards are matched as themselves
        assert impl.slots_mentioning(store, "r", "100%_") == [ident(1)]
        assert impl.slots_mentioning(store, "r", "0%_d") == [ident(1)]
        assert impl.slots_mentioning(store, "r", "1%0") == []
        assert impl.slots_mentioning(store, "r", "_done") == [ident(1)]
        assert impl.slots_mentioning(store, "r", "x_done") == []
