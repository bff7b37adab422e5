"""The repair loop against scripted model replies, on a real failed run (the E5 shape)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frostline.errors import DefinitionError, RunNotFound
from frostline.providers.local import LocalProviders
from frostline.repair.loop import (
    RepairResult,
    RepairTask,
    RewriteFeedback,
    repair,
    repair_loop,
    task_from_store,
)
from frostline.repair.replay import ReplayClient, ReplayPolicy
from frostline.runtime.execute import execute
from frostline.store import Store
from frostline.testing import InProcessRunner

REPLIES = Path(__file__).parent / "replies"
FAILING = (REPLIES / "failing.py").read_text()
SCRIPTED = [(REPLIES / f"{name}.md").read_text()
            for name in ("1_prose", "2_invalid", "3_dropped", "4_relocated", "5_fixed")]
ARGS = {"brief": "a fox in the snow"}


def run_failing(store: Store, run_id: str = "e5") -> None:
    outcome = execute(store, run_id, FAILING, args=ARGS, providers=LocalProviders(log_path=None),
                      runner=InProcessRunner())
    assert outcome.status == "failed" and outcome.executed == 4  # plan + 3 images committed


@pytest.fixture
def task(sqlite_store: Store) -> RepairTask:
    run_failing(sqlite_store)
    return task_from_store(sqlite_store, "e5", max_rewrites=5)


def drive(task: RepairTask, replies: list[str]) -> tuple[RepairResult, list[list[dict[str, str]]]]:
    """Run the generator by hand with scripted replies; return the result and every prompt."""
    loop = repair_loop(task)
    prompts = [next(loop)]
    for reply in replies:
        try:
            prompts.append(loop.send(reply))
        except StopIteration as stop:
            return stop.value, prompts
    raise AssertionError("the loop asked for more replies than were scripted")


def test_task_from_store(task: RepairTask) -> None:
    assert task.committed_source == FAILING
    assert set(task.frozen) == {"orchestrate/#0", "orchestrate/for#0.body/#0"}
    assert task.frozen["orchestrate/for#0.body/#0"].source_line.strip().startswith(
        'image = await ctx.run("image.generate"')
    assert task.failure is not None and task.failure["error_code"] == "InvalidParameter"
    assert task.max_rewrites == 5


def test_scripted_repair_walks_every_refusal_then_accepts(task: RepairTask) -> None:
    result, prompts = drive(task, SCRIPTED)
    reasons = [r.reason for r in result.rewrites]
    assert [r.ok for r in result.rewrites] == [False, False, False, False, True]
    assert reasons[0].startswith("no code block")
    assert "script rules violated (R03, R06)" in reasons[1]
    assert {v["rule"] for v in result.rewrites[1].violations} == {"R03", "R06"}
    assert "dropped capability calls" in reasons[2] and "1 call" in reasons[2]
    assert "gate stopped it (removed" in reasons[2]  # the loop site vanished too
    assert "dropped" not in reasons[3] and reasons[3] == "gate stopped it (removed frozen site)"
    (ce,) = result.rewrites[3].counterexamples
    assert ce["kind"] == "removed" and ce["site"] == "orchestrate/for#0.body/#0"
    # the helper's call has another payload expression: a same-capability neighbour, no relocation
    assert ce["nearest"]["match"] == "same_capability"
    assert ce["nearest"]["site"].startswith("generate")
    assert result.accepted == result.rewrites[4].candidate
    assert result.accepted is not None and '"1024x1024", "1024x1024"]' in result.accepted
    assert len(prompts) == 5  # one prompt per model call, none after acceptance


def test_prompts_carry_context_and_previous_feedback(task: RepairTask) -> None:
    _, prompts = drive(task, SCRIPTED)
    for messages in prompts:
        system, user = messages[0]["content"], messages[1]["content"]
        assert [m["role"] for m in messages] == ["system", "user"]
        assert "Frozen sites must stay exactly as they are; add new work after them." in system
        assert "async def image_generate(" in system and "ctx.parallel" in system
        assert "Effect: side_effecting" in system  # the catalog as typed stubs (issue 29)
        assert "orchestrate/for#0.body/#0 — image.generate, line 9" in user
        assert 'image = await ctx.run("image.generate", {"prompt": plan' in user
        assert FAILING.rstrip() in user
        assert "InvalidParameter" in user and "999x999" in user
    assert "Feedback" not in prompts[0][1]["content"]
    assert "no code block" in prompts[1][1]["content"]
    assert "R06 at line 1" in prompts[2][1]["content"] and "import os" in prompts[2][1]["content"]
    assert "dropped capability calls" in prompts[3][1]["content"]
    fourth = prompts[4][1]["content"]
    assert "gate removed" in fourth and "keep that call exactly as it is" in fourth
    assert "async def generate(ctx, prompt, size)" in fourth  # the refused candidate


def test_max_rewrites_is_respected(sqlite_store: Store, tmp_path: Path) -> None:
    run_failing(sqlite_store)
    task = task_from_store(sqlite_store, "e5", max_rewrites=2)
    result, prompts = drive(task, [SCRIPTED[0], SCRIPTED[0]])
    assert result.accepted is None and len(result.rewrites) == 2 and len(prompts) == 2
    # the driver makes exactly max_rewrites model calls even when more replies are available
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"model": "m", "responses": [
        {"content": SCRIPTED[2], "usage": {"prompt_tokens": 100, "completion_tokens": 10,
                                           "total_tokens": 110}}] * 4 + [{"content": SCRIPTED[4]}]}))
    client = ReplayClient(path, policy=ReplayPolicy((tmp_path,)))
    result = repair(client, task)
    assert client.calls == 2 and result.accepted is None
    assert result.usage_total == {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}
    assert result.rewrites[0].usage["total_tokens"] == 110


def test_driver_with_recorded_client_accepts(task: RepairTask, tmp_path: Path) -> None:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"model": "m", "responses": [{"content": SCRIPTED[3]},
                                                            {"content": SCRIPTED[4]}]}))
    client = ReplayClient(path, policy=ReplayPolicy((tmp_path,)))
    result = repair(client, task)
    assert client.calls == 2 and result.accepted is not None
    assert [r.ok for r in result.rewrites] == [False, True]
    # the second request carried the gate's counterexample of the first
    assert "gate removed" in client.requests[1][1]["content"]
    assert result.to_dict()["rewrites"][1]["reason"] == "accepted"


def test_accepted_candidate_replays_the_prefix_when_executed(task: RepairTask,
                                                             sqlite_store: Store) -> None:
    result, _ = drive(task, SCRIPTED[3:])
    assert result.accepted is not None
    outcome = execute(sqlite_store, "e5", result.accepted, args=ARGS,
                      providers=LocalProviders(log_path=None), runner=InProcessRunner())
    assert outcome.status == "succeeded"
    assert (outcome.replayed, outcome.executed) == (4, 1)  # only the failed fourth image runs


def test_unchanged_candidate_is_refused(task: RepairTask) -> None:
    reply = "```python\n# same script, reformatted\n" + FAILING.replace("    ", "    ") + "```"
    result, _ = drive(task, [reply] * 5)
    assert result.accepted is None
    assert all(r.reason.startswith("unchanged") for r in result.rewrites)


def test_unparsable_candidate_is_feedback_not_a_crash(task: RepairTask) -> None:
    result, prompts = drive(task, ["```python\nasync def orchestrate(ctx, args:\n```", *SCRIPTED[4:]])
    assert "R00" in result.rewrites[0].reason and result.rewrites[0].counterexamples == []
    assert result.accepted is not None
    assert "R00" in prompts[1][1]["content"]


def test_completion_objects_and_plain_strings_are_both_replies(task: RepairTask) -> None:
    from frostline.repair.completion import Completion, Usage

    result, _ = drive(task, [Completion(SCRIPTED[0], Usage(5, 1, 6), "m"), SCRIPTED[4]])  # type: ignore[list-item]
    assert result.rewrites[0].usage == {"prompt_tokens": 5, "completion_tokens": 1,
                                        "total_tokens": 6}
    assert result.usage_total["total_tokens"] == 6


def test_bad_tasks(sqlite_store: Store) -> None:
    with pytest.raises(DefinitionError, match="max_rewrites"):
        RepairTask("x", {}, max_rewrites=0)
    with pytest.raises(RunNotFound):
        task_from_store(sqlite_store, "nope")
    sqlite_store.create_run("fresh", {})
    with pytest.raises(DefinitionError, match="no executed attempt"):
        task_from_store(sqlite_store, "fresh")
    ok = execute(sqlite_store, "fine", "async def orchestrate(ctx, args):\n    return 1\n",
                 providers=LocalProviders(log_path=None), runner=InProcessRunner())
    assert ok.status == "succeeded"
    with pytest.raises(DefinitionError, match="no failure to repair"):
        task_from_store(sqlite_store, "fine")


def test_feedback_round_trips_to_dict() -> None:
    fb = RewriteFeedback(1, False, "r", [{"rule": "R06"}], [], {"total_tokens": 3}, "code")
    assert fb.to_dict() == {"n": 1, "ok": False, "reason": "r", "violations": [{"rule": "R06"}],
                            "counterexamples": [], "usage": {"total_tokens": 3},
                            "candidate": "code"}


def test_frozen_lines_are_quoted_from_the_committed_script(sqlite_store: Store) -> None:
    run_failing(sqlite_store)
    shifted = FAILING.replace("    images = []\n", "    # collect the images\n    images = []\n\n")
    again = execute(sqlite_store, "e5", shifted, args=ARGS, providers=LocalProviders(log_path=None),
                    runner=InProcessRunner())
    assert again.status == "failed" and again.replayed == 4
    task = task_from_store(sqlite_store, "e5")
    assert task.committed_source == shifted
    assert task.frozen["orchestrate/for#0.body/#0"].line == 11
    assert shifted.splitlines()[10] == task.frozen["orchestrate/for#0.body/#0"].source_line
