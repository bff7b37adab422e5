"""annotate(): _site injection without moving any line."""

from __future__ import annotations

import ast
import textwrap

import pytest

from frostline.errors import ScriptRejected
from frostline.script import annotate, check, sites


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _positions(source: str) -> list[tuple[str, int, int | None]]:
    return [(type(n).__name__, n.lineno, n.end_lineno) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.stmt | ast.expr) and not _in_site(n)]


def _in_site(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and "/#" in node.value


TRICKY = _src('''
async def orchestrate(ctx, args):
    """Doc with ctx.run("x", {}) inside a string."""
    a = await ctx.run("echo", {"k": "é ü 漢字"})
    b = await ctx.run(
        "echo",
        {"multi": "line"},  # trailing comma and a comment
    )
    c = await ctx.run("echo", ({"parenthesized": 1}))
    d = await ctx.run("echo", {"x": 1}  # comment before the paren
    )
    e = await ctx.run("echo", {"nested": await ctx.run("echo", {"inner": "🙂"})})
    f = await ctx.parallel([ctx.run("echo", {"i": i}) for i in range(2)])
    return [a, b, c, d, e, f]
''')


def test_annotate_injects_every_site_and_keeps_lines() -> None:
    out = annotate(TRICKY)
    assert out.count("\n") == TRICKY.count("\n")
    assert _positions(out) == _positions(TRICKY)
    tree = ast.parse(out)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "run"]
    assert len(calls) == 7
    for call in calls:
        site = [k for k in call.keywords if k.arg == "_site"]
        assert len(site) == 1
    # The parenthesized payload stays a dict, not a tuple.
    c_call = [n for n in calls if isinstance(n.args[1], ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value == "parenthesized" for k in n.args[1].keys)]
    assert len(c_call) == 1 and len(c_call[0].args) == 2


def test_annotated_source_has_the_same_sites_and_fingerprints() -> None:
    before = sites(TRICKY)
    after = sites(annotate(TRICKY))
    assert [(s.site, s.fingerprint, s.line) for s in before] == \
        [(s.site, s.fingerprint, s.line) for s in after]


def test_each_call_gets_its_own_sigma() -> None:
    out = annotate(TRICKY)
    for info in sites(TRICKY):
        assert f'_site="{info.site}"' in out


def test_annotate_is_idempotent() -> None:
    once = annotate(TRICKY)
    assert annotate(once) == once


def test_existing_wrong_site_is_rejected_with_r10() -> None:
    src = 'async def orchestrate(ctx, args):\n    await ctx.run("echo", {}, _site="orchestrate/#7")\n'
    with pytest.raises(ScriptRejected) as info:
        annotate(src)
    assert info.value.fields["rule"] == "R10"
    assert "R10" in str(info.value)


def test_existing_matching_site_is_accepted() -> None:
    src = 'async def orchestrate(ctx, args):\n    await ctx.run("echo", {}, _site="orchestrate/#0")\n'
    assert annotate(src) == src


def test_non_literal_site_is_rejected() -> None:
    src = 'async def orchestrate(ctx, args):\n    await ctx.run("echo", {}, _site=args["s"])\n'
    with pytest.raises(ScriptRejected):
        annotate(src)


def test_call_without_arguments_and_crlf_line_endings() -> None:
    src = 'async def orchestrate(ctx, args):\r\n    x = 1\r\n    await ctx.run()\r\n'
    out = annotate(src)
    assert 'ctx.run(_site="orchestrate/#0")' in out
    assert out.count("\r\n") == 3


def test_annotated_valid_script_still_checks_valid_except_for_r10() -> None:
    src = _src('''
    async def orchestrate(ctx, args):
        return await ctx.run("echo", {"k": 1})
    ''')
    assert check(src).valid
    assert check(annotate(src)).rules() == {"R10"}


def test_annotate_rejects_unparseable_source() -> None:
    with pytest.raises(ScriptRejected):
        annotate("def (")


def test_generator_argument_gets_its_own_parentheses() -> None:
    src = 'async def orchestrate(ctx, args):\n    await ctx.run(x for x in range(3))\n'
    out = annotate(src)
    assert 'ctx.run((x for x in range(3)), _site="orchestrate/#0")' in out
    assert [s.site for s in sites(out)] == ["orchestrate/#0"]


@pytest.mark.parametrize("src", [
    'async def orchestrate(ctx, args):\n    return f"{await ctx.run(\'echo\', {})}"\n',
    "async def orchestrate(ctx, args):\n    return f'{await ctx.run(\"echo\", {})}'\n",
    'async def orchestrate(ctx, args):\n    return f"""{await ctx.run("echo", {})}"""\n',
    'async def orchestrate(ctx, args):\n    return rf"a{await ctx.run(\'echo\', {\'k\': 1})}b"\n',
])
def test_calls_inside_f_strings_use_the_other_quote(src: str) -> None:
    out = annotate(src)
    ast.parse(out)
    assert [s.site for s in sites(out)] == ["orchestrate/#0"]
    assert out.count("\n") == src.count("\n")


def test_generated_code_reparses_after_annotation_on_awkward_layouts() -> None:
    src = _src('''
    async def orchestrate(ctx, args):
        a = await ctx.run(
            "echo",
            {"k": [1,
                   2]}
            ,
        )
        b = await (ctx.run)("echo", {})
        c = await ctx.run("echo", {} )
        return [a, b, c]
    ''')
    out = annotate(src)
    ast.parse(out)
    assert [s.site for s in sites(out)] == [s.site for s in sites(src)]
    assert out.count("\n") == src.count("\n")
