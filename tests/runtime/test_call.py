"""A call's row: the attempt record's `calls` entry, built up across the broker's seams."""

from __future__ import annotations

import json
from pathlib import Path

from frostline.capabilities.envelope import Envelope
from frostline.contract.identity import Identity
from frostline.errors import FrostlineError
from frostline.runtime.call import Call, RunStop
from frostline.store.base import Store
from tests.runtime.helpers import local, run


def _loop(n: int) -> str:
    return f"""
    async def orchestrate(ctx, args):
        for i in range({n}):
            await ctx.run("echo", {{"n": 7}})
        return "done"
    """


def test_a_call_spells_its_identity_once_and_starts_its_row() -> None:
    call = Call.of(Identity("s", (1, 2), 3), "echo", {"n": 1})
    assert call.text == "s@1.2:3"
    assert json.dumps(call.row) == '{"identity": "s@1.2:3", "capability": "echo"}'
    assert (call.digest, call.price, call.key) == ("", 0.0, None)


def test_rows_keep_their_key_order_whichever_seam_adds_a_key(store: Store,
                                                             tmp_path: Path) -> None:
    p = local(tmp_path)
    warn = Envelope.from_dict({"ledger_policy": "warn"})
    assert run(store, "r", _loop(1), p, envelope=warn).status == "succeeded"
    out = run(store, "r", _loop(2), p)  # the second call repeats a committed payload
    assert out.status == "succeeded"
    assert [list(row) for row in out.calls] == [
        ["identity", "capability", "digest", "outcome"],
        ["identity", "capability", "digest", "semantic_repeat", "outcome"]]
    assert [(row["outcome"], row.get("semantic_repeat")) for row in out.calls] == [
        ("replayed", None), ("executed", "warn")]
    assert out.attempt is not None
    stored = store.get_attempt("r", out.attempt)
    assert stored is not None and stored.stats["calls"] == out.calls


def test_the_run_stops_for_its_first_reason() -> None:
    stop = RunStop()
    first = FrostlineError("first")
    stop.stop(first)
    stop.stop(FrostlineError("second"))
    assert stop.error is first
