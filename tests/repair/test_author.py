"""The authoring loop against scripted replies (plumbing: no model is reachable here, the
replies are written by hand): what the prompt holds, counterexamples sent back, bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability
from frostline.capabilities.envelope import Envelope
from frostline.errors import DefinitionError
from frostline.repair.author import (
    MAX_TASK_CHARS,
    AuthorResult,
    AuthorTask,
    TimedReply,
    author,
    author_loop,
)
from frostline.repair.prompt import MAX_QUOTED_DRAFT, authoring_skill

DRAFTS = Path(__file__).parent / "authoring"
WHILE = (DRAFTS / "1_while.md").read_text()
BOUNDED = (DRAFTS / "2_bounded.md").read_text()
TASK = "Plan a 3-shot storyboard for args.brief and generate one 512x512 image per shot."


def drive(task: AuthorTask, replies: list[object]) -> tuple[AuthorResult, list[list[dict[str, str]]]]:
    loop = author_loop(task)
    prompts = [next(loop)]
    for reply in replies:
        try:
            prompts.append(loop.send(reply))  # type: ignore[arg-type]
        except StopIteration as stop:
            return stop.value, prompts
    raise AssertionError("the loop asked for more replies than were scripted")


def test_issue29_prompt_holds_skill_catalog_envelope_and_task() -> None:
    mine = Capability("mine.slugify", side_effecting=False, price_usd=0.003,
                      input_schema={"type": "object", "required": ["text"],
                                    "properties": {"text": {"type": "string"}}})
    task = AuthorTask(TASK, catalog=DEFAULT_CATALOG.extended(mine),
                      envelope=Envelope(grants=("storyboard.plan", "image.generate",
                                                "mine.slugify")),
                      args={"brief": "a fox"})
    system, user = next(author_loop(task))
    assert authoring_skill() in system["content"] and "R03" in system["content"]
    assert "Revising a script" not in system["content"]  # nothing is frozen yet
    assert "async def mine_slugify(*, text: str)" in system["content"]
    assert "async def image_generate(" in system["content"]
    assert "video_generate" not in system["content"]  # not granted: not shown
    assert TASK in user["content"] and '"brief": "a fox"' in user["content"]
    assert '"usd": 10.0' in user["content"] and '"max_fanout": 64' in user["content"]


def test_issue29_a_rule_violation_goes_back_as_a_counterexample() -> None:
    result, prompts = drive(AuthorTask(TASK), [WHILE, BOUNDED])
    assert [d.ok for d in result.rewrites] == [False, True]
    first = result.rewrites[0]
    assert "R03" in first.reason
    r03 = [v for v in first.violations if v["rule"] == "R03"]
    assert r03 and r03[0]["line"] == 5 and r03[0]["hint"]
    second_prompt = prompts[1][1]["content"]
    assert "Why your previous draft was refused" in second_prompt
    assert "- R03 at line 5:" in second_prompt and "Fix: " in second_prompt
    assert "while i < len(plan" in second_prompt  # the refused draft is quoted
    assert result.accepted is not None and "ctx.parallel" in result.accepted


def test_issue29_rewrites_are_bounded_and_prompts_stay_bounded() -> None:
    huge = ("```python\nasync def orchestrate(ctx, args):\n    while True:\n        pass\n"
            + "    x = 1\n" * 20_000 + "```")
    result, prompts = drive(AuthorTask(TASK, max_rewrites=2), [WHILE, huge, "no code at all"])
    assert len(result.rewrites) == 3 and result.accepted is None  # the first draft + 2 rewrites
    assert "no code block" in result.rewrites[2].reason
    assert len(prompts) == 3
    sizes = [sum(len(m["content"]) for m in p) for p in prompts]
    assert sizes[2] - sizes[0] < MAX_QUOTED_DRAFT + 4_000  # a huge draft is quoted cut
    with pytest.raises(DefinitionError, match="max_rewrites"):
        AuthorTask(TASK, max_rewrites=-1)
    with pytest.raises(DefinitionError, match="cap"):
        AuthorTask("x" * (MAX_TASK_CHARS + 1))
    with pytest.raises(DefinitionError, match="empty"):
        AuthorTask("  ")


def test_issue29_envelope_rules_apply_to_a_draft() -> None:
    task = AuthorTask(TASK, envelope=Envelope(grants=("storyboard.plan",)), max_rewrites=0)
    result, _ = drive(task, [BOUNDED])
    assert result.accepted is None and "R11" in result.rewrites[0].reason


class Scripted:
    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def complete(self, messages: list[dict[str, str]]) -> TimedReply:
        return TimedReply(self.texts.pop(0), {"prompt_tokens": 7, "completion_tokens": 3,
                                              "total_tokens": 10}, 0.0)


def test_issue29_driver_reports_tokens_and_wall_time() -> None:
    ticks = iter([0.0, 1.5, 2.0, 2.25])
    result = author(Scripted(WHILE, BOUNDED), AuthorTask(TASK), clock=lambda: next(ticks))
    data = result.to_dict()
    assert [r["wall_s"] for r in data["rewrites"]] == [1.5, 0.25] and data["wall_s"] == 1.75
    assert data["usage_total"] == {"prompt_tokens": 14, "completion_tokens": 6,
                                   "total_tokens": 20}
