"""Edges of an attempt: bad args, a failing runner, a provider result the store cannot hold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.errors import DefinitionError, RunError
from frostline.runtime.runners import Job, ScriptOutcome
from tests.runtime.helpers import local, run

ONE = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1})
"""


def test_args_that_are_not_json_are_refused_before_anything_is_recorded(store, tmp_path):
    with pytest.raises(DefinitionError, match="args must be JSON"):
        run(store, "r", ONE, local(tmp_path), args={"x": {1, 2}})
    assert store.get_run("r") is None


def test_a_rejected_first_script_creates_no_run_and_a_later_one_is_recorded(store, tmp_path):
    rejected = "import os\n" + ONE
    out = run(store, "r", rejected, local(tmp_path))
    assert (out.status, out.attempt, out.exit_code) == ("rejected", None, 6)
    assert out.error["code"] == "rejected" and out.error["violations"][0]["rule"]
    assert store.get_run("r") is None and store.list_runs() == []
    assert run(store, "r", ONE, local(tmp_path)).status == "succeeded"
    again = run(store, "r", rejected, local(tmp_path))
    assert (again.status, again.attempt) == ("rejected", 2)
    assert [a.status for a in store.list_attempts("r")] == ["succeeded", "rejected"]


class BrokenRunner:
    async def run(self, job: Job, broker: Any) -> ScriptOutcome:
        raise RunError("no isolation available here", reason="test")


def test_a_runner_that_cannot_start_fails_the_attempt_on_record(store, tmp_path):
    out = run(store, "r", ONE, local(tmp_path), runner=BrokenRunner())
    assert out.status == "failed" and out.error["message"] == "no isolation available here"
    assert store.get_attempt("r", out.attempt).status == "failed"


class Unstorable:
    """Returns a result JSON cannot carry, after 'executing' (the provider was paid)."""

    def __init__(self, inner):
        self.inner = inner

    def capabilities(self):
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability):
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        return ProviderResult({"value": float("nan")})


def test_a_result_the_store_refuses_stops_the_run_and_leaves_the_call_unresolved(store, tmp_path):
    out = run(store, "r", ONE, Unstorable(local(tmp_path)))
    # one word for the state the next attempt finds: unresolved, from this attempt on
    assert out.status == "unresolved" and out.provider_calls == 1 and out.executed == 0
    assert [str(c.identity) for c in store.unresolved_calls("r")] == ["orchestrate/#0@:0"]
    again = run(store, "r", ONE, local(tmp_path))
    assert again.status == "unresolved" and again.provider_calls == 0
