"""Prompt assembly: catalog, skill document, frozen sites, failure, previous feedback."""

from __future__ import annotations

from frostline.capabilities.catalog import DEFAULT_CATALOG
from frostline.contract.gate import FrozenSite
from frostline.repair.loop import RewriteFeedback
from frostline.repair.prompt import (
    build_messages,
    render_catalog,
    render_feedback,
    render_frozen,
    skill,
)

FROZEN = {
    "orchestrate/for#0.body/#0": FrozenSite("orchestrate/for#0.body/#0", "image.generate", "fb", 9,
                                            '        image = await ctx.run("image.generate", p)'),
    "orchestrate/#0": FrozenSite("orchestrate/#0", "storyboard.plan", "fa", 5,
                                 '    plan = await ctx.run("storyboard.plan", q)'),
}
SOURCE = "async def orchestrate(ctx, args):\n    return 1\n"


def test_skill_document_names_the_language_primitives_rules_and_the_frozen_rule():
    text = skill()
    for needle in ("async def orchestrate(ctx, args)", "ctx.run", "ctx.parallel", "ctx.race",
                   "ctx.pipeline", "ctx.dag",
                   "Frozen sites must stay exactly as they are; add new work after them."):
        assert needle in text
    for rule in range(13):
        assert f"- R{rule:02d}:" in text  # one line per rule


def test_catalog_lists_granted_capabilities_with_payload_fields():
    text = render_catalog(DEFAULT_CATALOG)
    assert len(text.splitlines()) == len(DEFAULT_CATALOG)
    assert "`image.generate` (side-effecting, $0.02/call): payload {prompt: string, size: string, seed?: integer 0..2147483647}" in text
    assert "`review.visual` (read-only" in text and "image: artifact ref (sha256:…)" in text
    only = render_catalog(DEFAULT_CATALOG, grants={"echo"})
    assert only.startswith("- `echo`") and len(only.splitlines()) == 1
    assert render_catalog(DEFAULT_CATALOG, grants=set()) == "(no capability is granted)"


def test_frozen_sites_in_source_order_with_their_lines():
    text = render_frozen(FROZEN)
    assert text.splitlines() == [
        '- orchestrate/#0 — storyboard.plan, line 5: `plan = await ctx.run("storyboard.plan", q)`',
        '- orchestrate/for#0.body/#0 — image.generate, line 9: `image = await ctx.run("image.generate", p)`',
    ]
    assert "nothing has been committed" in render_frozen({})


def test_feedback_lists_errors_counterexamples_and_the_refused_candidate():
    fb = RewriteFeedback(
        2, False, "script rules violated (R06); gate stopped it (removed frozen site)",
        violations=[{"rule": "R06", "severity": "error", "line": 1, "message": "imports are not allowed",
                     "hint": "remove the import"},
                    {"rule": "R03", "severity": "warning", "line": 4, "message": "just a warning",
                     "hint": ""}],
        counterexamples=[{"kind": "removed", "site": "orchestrate/#1", "message": "frozen site orchestrate/#1 is missing"}],
        candidate="import os\n")
    text = render_feedback(fb)
    assert "rewrite 2) was refused: script rules violated (R06)" in text
    assert "- R06 at line 1: imports are not allowed. Fix: remove the import" in text
    assert "just a warning" not in text
    assert "- gate removed: frozen site orchestrate/#1 is missing" in text
    assert "```python\nimport os\n```" in text


def test_messages_shape_and_sections():
    messages = build_messages(catalog=DEFAULT_CATALOG, frozen=FROZEN, committed_source=SOURCE,
                              failure={"code": "provider", "message": "HTTP 400"},
                              grants={"image.generate", "storyboard.plan"})
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    # Only granted capabilities, as typed stubs (issue 29).
    assert 'await ctx.run("image.generate"' in system and "async def image_generate(" in system
    assert "async def echo(" not in system and "async def video_generate(" not in system
    assert user.index("## Frozen sites") < user.index("## Committed script") < user.index("## Failure")
    assert '"message": "HTTP 400"' in user and "```python\n" + SOURCE in user
    assert "Feedback" not in user
    assert user.rstrip().endswith("Reply with the complete revised script in one ```python code block.")
    assert "(no structured failure was recorded)" in build_messages(
        catalog=DEFAULT_CATALOG, frozen={}, committed_source=SOURCE, failure=None)[1]["content"]


def test_prompt_size_does_not_grow_with_the_number_of_rewrites():
    fb = RewriteFeedback(1, False, "no code block", candidate=None)
    first = build_messages(catalog=DEFAULT_CATALOG, frozen=FROZEN, committed_source=SOURCE,
                           failure=None, previous=fb)
    later = build_messages(catalog=DEFAULT_CATALOG, frozen=FROZEN, committed_source=SOURCE,
                           failure=None, previous=RewriteFeedback(7, False, "no code block"))
    assert len(first[1]["content"]) == len(later[1]["content"])
