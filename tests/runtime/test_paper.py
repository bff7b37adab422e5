"""The paper's scenarios end to end: E3 (tail repair) and E2b-style injected failures."""

from __future__ import annotations

from frostline.runtime import certificates as certificate
from frostline.runtime.runners import ChildProcessRunner
from tests.runtime.helpers import echo_ns, local, logged, run

E3_V1 = """
async def orchestrate(ctx, args):
    await ctx.run("echo", {"n": 1})
    await ctx.run("echo", {"n": 2})
    raise ValueError("v1 fails after two calls")
"""
E3_V2 = """
async def orchestrate(ctx, args):
    await ctx.run("echo", {"n": 1})
    await ctx.run("echo", {"n": 2})
    last = await ctx.run("echo", {"n": 3})
    return last["n"]
"""


def test_e3_tail_repair_pays_once_and_a_payload_edit_is_stopped(store, tmp_path):
    p, log = local(tmp_path), tmp_path / "provider.jsonl"
    runner = ChildProcessRunner(timeout_s=60)
    v1 = run(store, "e3", E3_V1, p, runner=runner)
    assert (v1.status, v1.executed) == ("failed", 2) and v1.error["type"] == "ValueError"
    v2 = run(store, "e3", E3_V2, p, runner=runner)
    assert (v2.status, v2.replayed, v2.executed, v2.result) == ("succeeded", 2, 1, 3)
    assert echo_ns(log) == [1, 2, 3]  # three real executions in total, not five
    # v3 edits the committed n=1 payload: the gate stops it before anything starts
    v3 = run(store, "e3", E3_V2.replace('{"n": 1}', '{"n": 9}'), p, runner=runner)
    assert v3.status == "gate_stopped" and v3.exit_code == 3 and v3.provider_calls == 0
    assert v3.gate is not None and {c.kind for c in v3.gate.counterexamples} == {"call_changed"}
    assert echo_ns(log) == [1, 2, 3]
    assert certificate.verify(store, "e3")["differences"] == []


def test_e3_control_without_the_durable_prefix_pays_again(store, tmp_path):
    p, log = local(tmp_path), tmp_path / "provider.jsonl"
    run(store, "e3", E3_V1, p)
    run(store, "e3", E3_V2, p)
    # the control: the same v2 without the committed prefix (a fresh run) executes all three
    control = run(store, "e3-control", E3_V2, p)
    assert control.executed == 3 and control.replayed == 0
    assert echo_ns(log) == [1, 2, 3, 1, 2, 3]


FOUR_SHOTS = """
SIZES = ["1024x1024", "1024x1024", "1024x1024", "{last}"]


async def orchestrate(ctx, args):
    async def shot(i):
        return await ctx.run("image.generate", {{"prompt": "shot " + str(i), "size": SIZES[i]}})

    images = await ctx.parallel([shot(i) for i in range(4)])
    return [img["artifact"] for img in images[:4]]
"""


def test_e2b_parallel_failure_at_the_fourth_shot_replays_three_and_executes_one(store, tmp_path):
    p, log = local(tmp_path), tmp_path / "provider.jsonl"
    first = run(store, "e2b", FOUR_SHOTS.format(last="2048x2048"), p)
    assert first.status == "failed" and first.error["status"] == 400
    assert (first.provider_calls, first.executed) == (4, 3)
    committed = {str(s.identity): s.result["artifact"] for s in store.list_slots("e2b")}
    assert len(committed) == 3
    fixed = run(store, "e2b", FOUR_SHOTS.format(last="1536x1024"), p)
    assert (fixed.status, fixed.replayed, fixed.executed) == ("succeeded", 3, 1)
    # replayed artifacts are the stored ones, byte for byte
    for ident, ref in committed.items():
        branch = int(ident.split("@")[1].split(":")[0])
        assert fixed.result[branch] == ref
    assert len([e for e in logged(log) if e["capability"] == "image.generate"]) == 5
    assert certificate.verify(store, "e2b")["differences"] == []


LOOP = """
SIZES = ["1024x1024", "{second}"]


async def orchestrate(ctx, args):
    verdicts = []
    for i in range(2):
        img = await ctx.run("image.generate", {{"prompt": "frame " + str(i), "size": SIZES[i]}})
        review = await ctx.run("review.visual", {{"image": img["artifact"]}})
        verdicts.append(review["verdict"])
    return verdicts
"""


def test_e2b_loop_failing_at_the_second_iteration_replays_the_first(store, tmp_path):
    p, log = local(tmp_path), tmp_path / "provider.jsonl"
    first = run(store, "loop", LOOP.format(second="4096x4096"), p)
    assert first.status == "failed" and (first.executed, first.provider_calls) == (2, 3)
    fixed = run(store, "loop", LOOP.format(second="1024x1536"), p)
    assert (fixed.status, fixed.replayed, fixed.executed) == ("succeeded", 2, 2)
    outcomes = [(c["identity"], c["outcome"]) for c in fixed.calls]
    assert outcomes == [
        ("orchestrate/for#0.body/#0@:0", "replayed"), ("orchestrate/for#0.body/#1@:0", "replayed"),
        ("orchestrate/for#0.body/#0@:1", "executed"), ("orchestrate/for#0.body/#1@:1", "executed")]
    paid = [e["capability"] for e in logged(log)]
    assert paid.count("image.generate") == 3 and paid.count("review.visual") == 2
