"""Callsites σ (DESIGN §3.2) and the paper's Lemma 1: which edits keep σ and which change it."""

from __future__ import annotations

import textwrap

import pytest

from frostline.errors import ScriptRejected
from frostline.script import sites


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _sigmas(text: str) -> list[str]:
    return [s.site for s in sites(_src(text))]


BASE = """
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    img = await ctx.run("image.generate", {"prompt": "a", "size": "1024x1024"})
    for shot in plan["shots"][:4]:
        if shot["index"] > 1:
            await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "512x512"})
        else:
            await ctx.run("review.visual", {"image": img["artifact"]})
            await ctx.run("image.generate", {"prompt": "b", "size": "512x512"})
    return img
"""


def test_sigma_form_blocks_parts_and_ordinals() -> None:
    assert _sigmas(BASE) == [
        "orchestrate/#0",
        "orchestrate/#1",
        "orchestrate/for#0.body/if#0.body/#0",
        "orchestrate/for#0.body/if#0.orelse/#0",
        "orchestrate/for#0.body/if#0.orelse/#1",
    ]


def test_site_info_fields() -> None:
    first = sites(_src(BASE))[0]
    assert first.capability == "storyboard.plan"
    assert first.function == "orchestrate"
    assert (first.line, first.col) == (2, 18)
    assert len(first.fingerprint) == 64 and int(first.fingerprint, 16) >= 0


def test_nested_and_top_level_helpers() -> None:
    src = """
    async def gen_one(ctx, p):
        return await ctx.run("image.generate", {"prompt": p, "size": "1024x1024"})

    async def orchestrate(ctx, args):
        async def gen(p):
            return await ctx.run("image.generate", {"prompt": p, "size": "1024x1024"})
        a = await gen("x")
        b = await gen_one(ctx, "y")
        return [a, b]
    """
    assert _sigmas(src) == ["gen_one/#0", "orchestrate.gen/#0"]


def test_block_ordinal_counts_only_siblings_with_capability_calls() -> None:
    src = """
    async def orchestrate(ctx, args):
        for i in range(2):
            x = i
        for i in range(3):
            await ctx.run("echo", {"i": i})
        if args:
            pass
        if args:
            await ctx.run("echo", {})
        for i in range(2):
            await ctx.run("echo", {"j": i})
    """
    assert _sigmas(src) == ["orchestrate/for#0.body/#0", "orchestrate/if#0.body/#0",
                            "orchestrate/for#1.body/#0"]


def test_every_block_kind_and_part() -> None:
    src = """
    async def orchestrate(ctx, args):
        try:
            await ctx.run("echo", {"t": 0})
        except ValueError:
            await ctx.run("echo", {"t": 1})
        except Exception:
            await ctx.run("echo", {"t": 2})
        else:
            await ctx.run("echo", {"t": 3})
        finally:
            await ctx.run("echo", {"t": 4})
        match args["k"]:
            case "a":
                await ctx.run("echo", {"m": 0})
            case _:
                await ctx.run("echo", {"m": 1})
        for i in range(2):
            pass
        else:
            await ctx.run("echo", {"f": 1})
        if args:
            pass
        elif args["x"]:
            await ctx.run("echo", {"e": 1})
    """
    assert _sigmas(src) == [
        "orchestrate/try#0.body/#0", "orchestrate/try#0.handler0/#0",
        "orchestrate/try#0.handler1/#0", "orchestrate/try#0.orelse/#0",
        "orchestrate/try#0.finalbody/#0", "orchestrate/match#0.case0/#0",
        "orchestrate/match#0.case1/#0", "orchestrate/for#0.orelse/#0",
        "orchestrate/if#0.orelse/if#0.body/#0",
    ]


def test_evaluation_order_arguments_before_the_call() -> None:
    src = """
    async def orchestrate(ctx, args):
        await ctx.run("echo", {"a": await ctx.run("echo", {"inner": 1}), "b": await ctx.run("echo", {})})
    """
    got = {s.line * 1000 + s.col: s.site for s in sites(_src(src))}
    # source order: outer first, then the two inner calls; σ follows evaluation order
    ordered = [got[k] for k in sorted(got)]
    assert ordered == ["orchestrate/#2", "orchestrate/#0", "orchestrate/#1"]


def test_header_calls_belong_to_the_enclosing_block() -> None:
    src = """
    async def orchestrate(ctx, args):
        if await ctx.run("echo", {"q": 1}):
            await ctx.run("echo", {"q": 2})
        await ctx.run("echo", {"q": 3})
    """
    assert _sigmas(src) == ["orchestrate/#0", "orchestrate/if#0.body/#0", "orchestrate/#1"]


def test_comprehension_is_an_expression_not_a_block() -> None:
    src = """
    async def orchestrate(ctx, args):
        xs = [await ctx.run("echo", {"i": i}) for i in range(3)]
        return xs
    """
    assert _sigmas(src) == ["orchestrate/#0"]


def test_containers_are_not_capability_calls() -> None:
    src = """
    async def orchestrate(ctx, args):
        return await ctx.parallel([ctx.run("echo", {"i": 0}), ctx.run("echo", {"i": 1})])
    """
    assert _sigmas(src) == ["orchestrate/#0", "orchestrate/#1"]


def test_unparseable_source_is_rejected_with_r00() -> None:
    with pytest.raises(ScriptRejected) as info:
        sites("async def orchestrate(ctx, args)\n")
    assert info.value.fields["rule"] == "R00"


# ---- fingerprints ----------------------------------------------------------------------

def _fp(src: str) -> list[str]:
    return [s.fingerprint for s in sites(_src(src))]


def test_literal_payload_edit_changes_fingerprint_not_sigma() -> None:
    edited = BASE.replace('"prompt": "a"', '"prompt": "A different prompt"')
    assert _sigmas(edited) == _sigmas(BASE)
    before, after = _fp(BASE), _fp(edited)
    assert before[1] != after[1]
    assert [b == a for b, a in zip(before, after, strict=True)] == [True, False, True, True, True]


def test_data_dependent_edit_keeps_fingerprint() -> None:
    src = """
    async def orchestrate(ctx, args):
        prompt = "first"
        await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    """
    edited = src.replace('"first"', '"second, changed"')
    assert _fp(src) == _fp(edited)


def test_fingerprint_ignores_site_keyword_and_positions() -> None:
    plain = 'async def orchestrate(ctx, args):\n    await ctx.run("echo", {})\n'
    tagged = 'async def orchestrate(ctx, args):\n\n    await ctx.run(\n "echo", {}, _site="orchestrate/#0")\n'
    assert _fp(plain) == _fp(tagged)


# ---- Lemma 1 ---------------------------------------------------------------------------

def test_lemma1_comments_formatting_blank_lines() -> None:
    edited = _src(BASE).replace("    plan = await", "    # a comment\n\n    plan = await")
    edited = edited.replace('{"brief": args["brief"], "shots": 4}',
                            '{\n        "brief": args["brief"],\n        "shots": 4,\n    }')
    assert [s.site for s in sites(edited)] == _sigmas(BASE)
    assert [s.fingerprint for s in sites(edited)] == _fp(BASE)


def test_lemma1_docstring_is_not_a_call() -> None:
    edited = _src(BASE).replace("async def orchestrate(ctx, args):\n",
                                'async def orchestrate(ctx, args):\n    """Doc."""\n')
    assert [s.site for s in sites(edited)] == _sigmas(BASE)


def test_lemma1_inserting_statements_without_calls_before_a_site() -> None:
    edited = _src(BASE).replace(
        "    img = await",
        "    note = 'x'\n    for k in range(3):\n        note = note + str(k)\n"
        "    if note:\n        note = note.upper()\n    img = await")
    assert [s.site for s in sites(edited)] == _sigmas(BASE)


def test_lemma1_append_after_last_site() -> None:
    edited = _src(BASE).replace(
        "    return img",
        "    for k in range(2):\n        await ctx.run('echo', {'k': k})\n"
        "    await ctx.run('echo', {})\n    return img")
    assert [s.site for s in sites(edited)][:5] == _sigmas(BASE)


def test_wrapping_a_call_in_a_new_block_changes_sigma() -> None:
    edited = _src(BASE).replace(
        '    img = await ctx.run("image.generate", {"prompt": "a", "size": "1024x1024"})',
        '    if args:\n        img = await ctx.run("image.generate", {"prompt": "a", "size": "1024x1024"})')
    assert "orchestrate/#1" not in [s.site for s in sites(edited)]


def test_moving_a_call_into_a_helper_changes_sigma() -> None:
    original = """
    async def orchestrate(ctx, args):
        await ctx.run("echo", {"a": 1})
        await ctx.run("image.generate", {"prompt": "p", "size": "1024x1024"})
    """
    moved = """
    async def gen_one(ctx):
        return await ctx.run("image.generate", {"prompt": "p", "size": "1024x1024"})

    async def orchestrate(ctx, args):
        await ctx.run("echo", {"a": 1})
        await gen_one(ctx)
    """
    assert _sigmas(original) == ["orchestrate/#0", "orchestrate/#1"]
    assert _sigmas(moved) == ["gen_one/#0", "orchestrate/#0"]
    # same fingerprint, new σ: the gate reports the frozen orchestrate/#1 as removed
    assert _fp(original)[1] == _fp(moved)[0]


def test_deleting_an_earlier_call_in_the_same_block_shifts_sigma() -> None:
    edited = _src(BASE).replace(
        '    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})\n',
        '    plan = args\n')
    got = [s.site for s in sites(edited)]
    assert got[0] == "orchestrate/#0"
    assert sites(edited)[0].capability == "image.generate"  # image call moved from #1 to #0
