"""The occurrence ledger and the orphan report, through real attempts."""

from __future__ import annotations

import pytest

from frostline.capabilities.envelope import Envelope
from tests.runtime.helpers import echo_ns, local, logged, run


def loop(n: int, capability: str = "echo", payload: str = '{"n": 7}') -> str:
    return f"""
    async def orchestrate(ctx, args):
        out = []
        for i in range({n}):
            out.append(await ctx.run("{capability}", {payload}))
        return len(out)
    """


@pytest.mark.parametrize(("policy", "status", "new_executions", "action"), [
    ("off", "succeeded", 1, None),
    ("warn", "succeeded", 1, "warn"),
    ("deny", "failed", 0, "deny"),
    ("auto", "failed", 0, "deny"),  # echo is side-effecting
])
def test_widening_a_fixed_payload_loop_is_a_semantic_repeat(store, tmp_path, policy, status,
                                                            new_executions, action):
    p = local(tmp_path)
    env = Envelope.from_dict({"ledger_policy": policy})
    first = run(store, "r", loop(2), p, envelope=env)
    # the first attempt's own identical calls are its intent, not repeats
    assert first.status == "succeeded" and first.semantic_repeats == []
    out = run(store, "r", loop(3), p)
    assert out.status == status and out.replayed == 2 and out.executed == new_executions
    assert echo_ns(tmp_path / "provider.jsonl") == [7] * (2 + new_executions)
    if action is None:
        assert out.semantic_repeats == []
    else:
        (rep,) = out.semantic_repeats
        assert rep["identity"].endswith("@:2") and rep["committed_occurrences"] == [0, 1]
        assert rep["action"] == action
        assert "semantic_repeat" in [e.kind for e in store.list_events("r")]
    if action == "deny":
        assert out.error["type"] == "SemanticRepeatDenied" and out.provider_calls == 0


def test_auto_only_warns_for_a_read_only_capability(store, tmp_path):
    p = local(tmp_path)
    src2 = loop(2, "text.generate", '{"prompt": "same words"}')
    src3 = loop(3, "text.generate", '{"prompt": "same words"}')
    assert run(store, "r", src2, p).status == "succeeded"
    out = run(store, "r", src3, p)
    assert out.status == "succeeded" and out.executed == 1
    assert [r["action"] for r in out.semantic_repeats] == ["warn"]
    assert len(logged(tmp_path / "provider.jsonl")) == 3


def test_shrinking_a_loop_leaves_orphans_that_warn_by_default(store, tmp_path):
    p = local(tmp_path)
    src = lambda n: f"""
    async def orchestrate(ctx, args):
        for i in range({n}):
            await ctx.run("echo", {{"n": i}})
        return "ok"
    """  # noqa: E731
    run(store, "r", src(3), p)
    out = run(store, "r", src(1), p)
    assert out.status == "succeeded" and out.replayed == 1 and out.executed == 0
    assert out.orphans == ["orchestrate/for#0.body/#0@:1", "orchestrate/for#0.body/#0@:2"]
    attempt = store.get_attempt("r", out.attempt)
    assert list(attempt.orphans) == out.orphans
    assert "orphans" in [e.kind for e in store.list_events("r")]


def test_orphan_policy_stop_fails_the_run_after_recording(store, tmp_path):
    p = local(tmp_path)
    env = Envelope.from_dict({"orphan_policy": "stop"})
    two = """
    async def orchestrate(ctx, args):
        await ctx.run("echo", {"n": 1})
        if args["more"]:
            await ctx.run("echo", {"n": 2})
        return "ok"
    """
    assert run(store, "r", two, p, envelope=env, args={"more": True}).status == "succeeded"
    out = run(store, "r", two, p, args={"more": False})
    assert out.status == "failed" and out.error["code"] == "orphans"
    assert out.orphans == ["orchestrate/if#0.body/#0@:0"]
    assert list(store.get_attempt("r", out.attempt).orphans) == out.orphans
