"""Property tests: Lemma 1 over generated scripts, and the consistency of check/sites/annotate.

Scripts come from a small grammar: capability calls, call-free statements, ``for``/``if``
blocks, and top-level helpers called from orchestrate. Each test applies one
invariance-preserving edit and asserts the σ list is unchanged.
"""

from __future__ import annotations

import ast
import copy
import functools
from dataclasses import dataclass, field

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frostline.script import annotate, check, sites

CAPS = ["echo", "text.generate", "image.generate"]
WORDS = ["alpha", "beta", "gamma", "delta", "a b c", "é", "x"]


@dataclass
class Call:
    cap: str
    value: str


@dataclass
class Plain:
    value: int


@dataclass
class For:
    n: int
    body: list[object]


@dataclass
class If:
    body: list[object]
    orelse: list[object]


@dataclass
class UseHelper:
    index: int


@dataclass
class Script:
    helpers: list[list[object]]
    body: list[object] = field(default_factory=list)


@functools.cache
def _stmts(depth: int) -> st.SearchStrategy[list[object]]:
    leaf = st.one_of(
        st.builds(Call, st.sampled_from(CAPS), st.sampled_from(WORDS)),
        st.builds(Plain, st.integers(0, 9)),
    )
    if depth <= 0:
        return st.lists(leaf, min_size=1, max_size=4)
    inner = _stmts(depth - 1)
    node = st.one_of(
        leaf, leaf,
        st.builds(For, st.integers(1, 4), inner),
        st.builds(If, inner, st.one_of(st.just([]), inner)),
    )
    return st.lists(node, min_size=1, max_size=5)


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    helpers = draw(st.lists(_stmts(1), max_size=2))
    body = list(draw(_stmts(2)))
    if helpers:
        uses = draw(st.lists(st.builds(UseHelper, st.integers(0, len(helpers) - 1)), max_size=2))
        for use in uses:
            body.insert(draw(st.integers(0, len(body))), use)
    return Script(helpers, body)


@dataclass
class Style:
    comments: bool = False
    blank: bool = False
    split_payload: bool = False
    payload_suffix: str = ""
    insert_plain_at: int | None = None  # index into the flattened statement order


def render(script: Script, style: Style | None = None, append: list[object] | None = None) -> str:
    style = style or Style()
    out: list[str] = []
    counter = [0]

    def emit(stmts: list[object], indent: int) -> None:
        pad = "    " * indent
        for stmt in stmts:
            if style.insert_plain_at is not None and counter[0] == style.insert_plain_at:
                out.append(f"{pad}inserted = {{'note': 'no call here'}}")
                out.append(f"{pad}for q in range(2):")
                out.append(f"{pad}    inserted['k'] = q")
            counter[0] += 1
            if style.comments:
                out.append(f"{pad}# comment before a statement")
            if style.blank:
                out.append("")
            if isinstance(stmt, Call):
                value = f"{stmt.value}{style.payload_suffix}"
                if style.split_payload:
                    out.append(f"{pad}r = await ctx.run(")
                    out.append(f"{pad}    {stmt.cap!r},")
                    out.append(f"{pad}    {{")
                    out.append(f"{pad}        'prompt': {value!r},")
                    out.append(f"{pad}    }},  # trailing")
                    out.append(f"{pad})")
                else:
                    out.append(f"{pad}r = await ctx.run({stmt.cap!r}, {{'prompt': {value!r}}})")
            elif isinstance(stmt, Plain):
                out.append(f"{pad}v = {stmt.value} + len('abc')")
            elif isinstance(stmt, UseHelper):
                out.append(f"{pad}r = await helper{stmt.index}(ctx)")
            elif isinstance(stmt, For):
                out.append(f"{pad}for i in range({stmt.n}):")
                emit(stmt.body, indent + 1)
            elif isinstance(stmt, If):
                out.append(f"{pad}if len('ab') > 1:")
                emit(stmt.body, indent + 1)
                if stmt.orelse:
                    out.append(f"{pad}else:")
                    emit(stmt.orelse, indent + 1)

    for index, helper in enumerate(script.helpers):
        out.append(f"async def helper{index}(ctx):")
        emit(helper, 1)
        out.append("    return 1")
        out.append("")
    out.append("async def orchestrate(ctx, args):")
    emit(script.body, 1)
    if append:
        emit(append, 1)
    out.append("    return 1")
    return "\n".join(out) + "\n"


def _count(stmts: list[object]) -> int:
    total = 0
    for stmt in stmts:
        total += 1
        if isinstance(stmt, For):
            total += _count(stmt.body)
        elif isinstance(stmt, If):
            total += _count(stmt.body) + _count(stmt.orelse)
    return total


def _sigmas(src: str) -> list[str]:
    return [s.site for s in sites(src)]


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scripts(), st.booleans(), st.booleans(), st.booleans())
def test_lemma1_formatting_comments_blank_lines(script: Script, comments: bool, blank: bool,
                                                split: bool) -> None:
    base = render(script)
    edited = render(script, Style(comments=comments, blank=blank, split_payload=split))
    assert _sigmas(edited) == _sigmas(base)
    assert [s.fingerprint for s in sites(edited)] == [s.fingerprint for s in sites(base)]


@SETTINGS
@given(scripts(), st.sampled_from([" changed", "!", " v2 with more words"]))
def test_lemma1_payload_value_edits(script: Script, suffix: str) -> None:
    base = render(script)
    edited = render(script, Style(payload_suffix=suffix))
    assert _sigmas(edited) == _sigmas(base)
    before, after = sites(base), sites(edited)
    assert all(b.fingerprint != a.fingerprint for b, a in zip(before, after, strict=True))


@SETTINGS
@given(scripts(), st.data())
def test_lemma1_inserting_call_free_statements(script: Script, data: st.DataObject) -> None:
    base = render(script)
    flat = sum(_count(h) for h in script.helpers) + _count(script.body)
    at = data.draw(st.integers(0, max(flat - 1, 0)))
    edited = render(script, Style(insert_plain_at=at))
    assert "inserted" in edited
    assert _sigmas(edited) == _sigmas(base)


@SETTINGS
@given(scripts(), _stmts(1))
def test_lemma1_appending_after_the_last_site(script: Script, tail: list[object]) -> None:
    base = _sigmas(render(script))
    edited = _sigmas(render(script, append=tail))
    assert edited[: len(base)] == base


@SETTINGS
@given(scripts())
def test_wrapping_a_call_in_a_new_block_changes_its_sigma(script: Script) -> None:
    script = copy.deepcopy(script)
    calls = [s for s in script.body if isinstance(s, Call)]
    assume(calls)  # a script without a top-level call has nothing to wrap: draw another
    first = calls[0]
    first.value = "WRAPPED"
    base = render(script)
    script.body[script.body.index(first)] = If([first], [])
    edited = render(script)

    def site_of(src: str) -> str:
        lines = src.splitlines()
        return next(s.site for s in sites(src) if "WRAPPED" in lines[s.line - 1])

    assert site_of(edited) != site_of(base)
    assert site_of(edited).startswith(site_of(base).rsplit("/", 1)[0] + "/if#")


@SETTINGS
@given(scripts())
def test_check_annotate_and_sites_agree(script: Script) -> None:
    src = render(script)
    report = check(src)
    assert report.valid, [v.message for v in report.violations]
    assert [(s.site, s.fingerprint, s.line, s.col) for s in report.facts.sites] == \
        [(s.site, s.fingerprint, s.line, s.col) for s in sites(src)]
    annotated = annotate(src)
    assert annotated.count("\n") == src.count("\n")
    assert [(n.lineno, type(n).__name__) for n in ast.walk(ast.parse(src)) if isinstance(n, ast.stmt)] \
        == [(n.lineno, type(n).__name__) for n in ast.walk(ast.parse(annotated)) if isinstance(n, ast.stmt)]
    assert [(s.site, s.fingerprint, s.line) for s in sites(annotated)] == \
        [(s.site, s.fingerprint, s.line) for s in sites(src)]
    sigmas = [s.site for s in sites(src)]
    assert len(sigmas) == len(set(sigmas))  # different calls, different sites
