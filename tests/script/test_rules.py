"""Every checker rule, firing and not firing (DESIGN §3.1)."""

from __future__ import annotations

import textwrap

import pytest

from frostline.script import check


def _src(body: str, prelude: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return textwrap.dedent(prelude).lstrip("\n") + "async def orchestrate(ctx, args):\n" + body + "\n"


def errors(body: str, prelude: str = "", **kw) -> set[str]:  # type: ignore[no-untyped-def]
    report = check(_src(body, prelude), **kw)
    return {v.rule for v in report.violations if v.severity == "error"}


def assert_valid(body: str, prelude: str = "", **kw) -> None:  # type: ignore[no-untyped-def]
    report = check(_src(body, prelude), **kw)
    assert report.valid, "\n".join(f"{v.rule} {v.line}:{v.col} {v.message}" for v in report.violations)


RUN = 'await ctx.run("echo", {})'


# ---- R01 structure -----------------------------------------------------------------------

def test_r01_valid_module_shape() -> None:
    assert_valid(f"x = MAX\nreturn {RUN}", prelude='"""Doc."""\nMAX = 3\nNAMES = ["a", "b"]\n'
                 'CONF = {"k": (1, -2.5)}\n')


@pytest.mark.parametrize("src", [
    "def orchestrate(ctx, args):\n    return 1\n",
    "async def orchestrate(ctx):\n    return 1\n",
    "async def orchestrate(ctx, args, extra):\n    return 1\n",
    "async def orchestrate(args, ctx):\n    return 1\n",
    "async def orchestrate(ctx, args=None):\n    return 1\n",
    "async def orchestrate(ctx, *args):\n    return 1\n",
    "async def main(ctx, args):\n    return 1\n",
    'x = 1\nx = 2\nasync def orchestrate(ctx, args):\n    return x\n',
    'async def f(ctx):\n    return 1\nasync def f(ctx):\n    return 2\n'
    'async def orchestrate(ctx, args):\n    return 1\n',
    'X = len("abc")\nasync def orchestrate(ctx, args):\n    return X\n',
    'print("hi")\nasync def orchestrate(ctx, args):\n    return 1\n',
    'if True:\n    pass\nasync def orchestrate(ctx, args):\n    return 1\n',
    'a = b = 1\nasync def orchestrate(ctx, args):\n    return a\n',
])
def test_r01_fires(src: str) -> None:
    report = check(src)
    assert "R01" in report.rules() and not report.valid


def test_r01_duplicate_nested_helper() -> None:
    assert "R01" in errors(f"""
        async def g():
            return 1
        async def g():
            return 2
        return {RUN}
    """)


# ---- R02 ctx API --------------------------------------------------------------------------

@pytest.mark.parametrize("body,hint", [
    ('return await ctx.call("echo", {})', "ctx.run"),
    ('return await ctx.invoke("echo", {})', "ctx.run"),
    ('return await ctx.gather([])', "ctx.parallel"),
    ('return await ctx.log("x")', "logging"),
    ('return await ctx.whatever()', "primitives"),
])
def test_r02_old_or_unknown_api_with_migration(body: str, hint: str) -> None:
    report = check(_src(body))
    r02 = [v for v in report.violations if v.rule == "R02"]
    assert r02 and hint in r02[0].hint


@pytest.mark.parametrize("body", [
    'c = ctx\nreturn 1',
    'return ctx',
    'x = [ctx]\nreturn x',
    'f = ctx.run\nreturn 1',
    'return str(ctx)',
    'ctx = 1\nreturn ctx',
    'r = ctx.run("echo", {})\nreturn r',
    'return await ctx.run("echo", {}, timeout=3)',
    'return await ctx.run("echo")',
    'return await ctx.run(*["echo", {}])',
    'return await ctx.parallel()',
    'return await ctx.parallel([], [])',
])
def test_r02_ctx_misuse(body: str) -> None:
    assert "R02" in errors(body)


def test_r02_ctx_passed_to_helper_parameter_named_otherwise() -> None:
    assert "R02" in errors("return await h(ctx)", prelude="async def h(c):\n    return 1\n")
    assert "R02" in errors("return await h(1)", prelude="async def h(ctx):\n    return 1\n")
    assert "R02" in errors("return 1", prelude=f"async def h(x):\n    return {RUN}\n")


def test_r02_ctx_passing_that_is_fine() -> None:
    prelude = f"async def h(ctx, n):\n    return {RUN}\n"
    assert_valid("a = await h(ctx, 1)\nb = await h(ctx=ctx, n=2)\nreturn [a, b]", prelude=prelude)
    assert_valid(f"""
        async def inner(n):
            return {RUN}
        return await inner(1)
    """)


# ---- R03 loop bounds ----------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    f"for i in range(4):\n    {RUN}",
    f"for i in range(MAX):\n    {RUN}",
    f"for i in range(2, 8, 2):\n    {RUN}",
    f"for s in args['shots'][:6]:\n    {RUN}",
    f"for s in args['shots'][2:8]:\n    {RUN}",
    f"for s in args['shots'][-4:]:\n    {RUN}",
    f"for s in args['shots'][:MAX]:\n    {RUN}",
    f"for s in ['a', 'b']:\n    {RUN}",
    f"for i, s in enumerate(args['x'][:3]):\n    {RUN}",
    f"for a, b in zip(args['x'][:3], args['y']):\n    {RUN}",
    f"for s in sorted(args['x'][:3]):\n    {RUN}",
    f"for s in reversed(args['x'][:3]):\n    {RUN}",
    f"xs = args['x'][:5]\nfor s in xs:\n    {RUN}",
    f"for s in NAMES:\n    {RUN}",
    f"for i in range(len(args['x'][:7])):\n    {RUN}",
    f"for i in range(min(args['n'], 8)):\n    {RUN}",
    f"jobs = []\nfor s in args['x'][:4]:\n    jobs.append(s)\nfor j in jobs:\n    {RUN}",
    "xs = [await ctx.run('echo', {'i': i}) for i in range(3)]",
    f"for k, v in {{'a': 1, 'b': 2}}.items():\n    {RUN}",
])
def test_r03_bounded_loops(body: str) -> None:
    assert_valid(body, prelude="MAX = 5\nNAMES = ('a', 'b', 'c')\n")


@pytest.mark.parametrize("body", [
    f"while True:\n    {RUN}\n    break",
    f"for s in args['shots']:\n    {RUN}",
    f"for s in args['shots'][2:]:\n    {RUN}",
    f"for s in args['shots'][:-1]:\n    {RUN}",
    f"for s in args['shots'][:args['n']]:\n    {RUN}",
    f"for i in range(args['n']):\n    {RUN}",
    f"for i in range(2 ** 10):\n    {RUN}",
    f"for i in range(5000):\n    {RUN}",
    f"xs = args['x'][:3]\nxs = args['y']\nfor s in xs:\n    {RUN}",
    f"xs = [1, 2]\nys = xs\nfor s in xs:\n    {RUN}",
    f"xs = [1, 2]\nfor s in xs:\n    xs.append(s)\n    {RUN}",
    f"for s in (await ctx.run('echo', {{}}))['items']:\n    {RUN}",
    "xs = [await ctx.run('echo', {'i': i}) for i in args['x']]",
    f"for i in range(100):\n    for j in range(200):\n        {RUN}",
    f"for s in args['x'][::-1]:\n    {RUN}",
])
def test_r03_unbounded_loops(body: str) -> None:
    assert "R03" in errors(body)


def test_r03_loop_facts() -> None:
    report = check(_src(f"for i in range(3):\n    {RUN}\nfor s in args['x']:\n    pass"))
    assert [(lp["kind"], lp["bound"]) for lp in report.facts.loops] == [("for", 3), ("for", None)]


# ---- R04 set order ----------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    f"for s in {{'a', 'b'}}:\n    {RUN}",
    f"for s in set(args['x'][:3]):\n    {RUN}",
    f"for s in frozenset(['a']):\n    {RUN}",
    f"s = {{x for x in args['x'][:3]}}\nfor t in s:\n    {RUN}",
    f"for i, s in enumerate(set(['a'])):\n    {RUN}",
    "return ','.join({'a', 'b'})",
    "return list({'a', 'b'})",
    "return await ctx.parallel(list({ctx.run('echo', {})}))",
])
def test_r04_fires(body: str) -> None:
    assert "R04" in errors(body)


def test_r04_sorted_set_is_fine() -> None:
    assert_valid(f"for s in sorted(set(args['x'][:3])):\n    {RUN}\nreturn 'x' in {{'a'}}")


# ---- R05 fanout ---------------------------------------------------------------------------

GEN = 'async def gen(ctx, p):\n    return await ctx.run("echo", {"p": p})\n'


@pytest.mark.parametrize("body", [
    "return await ctx.parallel([gen(ctx, s) for s in args['x'][:8]])",
    "return await ctx.parallel([gen(ctx, 'a'), gen(ctx, 'b')])",
    "jobs = [gen(ctx, s) for s in args['x'][:4]]\nreturn await ctx.parallel(jobs)",
    "jobs = []\nfor s in args['x'][:4]:\n    jobs.append(gen(ctx, s))\nreturn await ctx.parallel(jobs)",
    "return await ctx.race([gen(ctx, 'a'), gen(ctx, 'b')])",
    "return await ctx.pipeline(args['x'][:4], step)",
    'return await ctx.dag({"a": (t, []), "b": (t, ["a"])})',
])
def test_r05_bounded_fanout(body: str) -> None:
    prelude = GEN + "async def step(x):\n    return x\nasync def t(deps):\n    return deps\n"
    assert_valid(body, prelude=prelude)


@pytest.mark.parametrize("body", [
    "return await ctx.parallel([gen(ctx, s) for s in args['x']])",
    "jobs = [gen(ctx, s) for s in args['x']]\nreturn await ctx.parallel(jobs)",
    "return await ctx.parallel([gen(ctx, s) for s in args['x'][:100]])",
    "return await ctx.pipeline(args['x'], step)",
    "return await ctx.race(args['jobs'])",
    'return await ctx.dag({"a": (t, ["b"]), "b": (t, ["a"])})',
    'return await ctx.dag({"a": (t, ["zzz"])})',
    'd = {"a": (t, [])}\nreturn await ctx.dag(d)',
])
def test_r05_fires(body: str) -> None:
    prelude = GEN + "async def step(x):\n    return x\nasync def t(deps):\n    return deps\n"
    assert "R05" in errors(body, prelude=prelude)


def test_r05_width_cap_comes_from_the_envelope() -> None:
    body = "return await ctx.parallel([gen(ctx, s) for s in args['x'][:8]])"
    assert "R05" in errors(body, prelude=GEN, envelope={"max_fanout": 4})
    assert "R05" not in errors(body, prelude=GEN, envelope={"max_fanout": 8})
    report = check(_src(body, GEN))
    assert report.facts.containers == [{"function": "orchestrate", "line": 4,
                                        "primitive": "parallel", "width": 8}]


# ---- R06 imports ---------------------------------------------------------------------------

@pytest.mark.parametrize("src", [
    "import os\nasync def orchestrate(ctx, args):\n    return 1\n",
    "from os import path\nasync def orchestrate(ctx, args):\n    return 1\n",
    "async def orchestrate(ctx, args):\n    import json\n    return 1\n",
    "async def orchestrate(ctx, args):\n    from . import x\n    return 1\n",
])
def test_r06_fires(src: str) -> None:
    assert "R06" in check(src).rules()


# ---- R07 attributes -----------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "return args.__class__",
    "return ().__class__.__bases__",
    "return '{0.__class__}'.format(args)",
    "return '{x}'.format_map(args)",
    "return args.gi_frame",
    "return args.cr_frame",
    "return args.f_back",
    "return ctx._broker",
    "return ctx.__dict__",
    "return args._private",
    "return __name__",
    "return f'{args.__class__}'",
    "args.attr = 1\nreturn 1",
])
def test_r07_fires(body: str) -> None:
    assert "R07" in errors(body)


def test_r07_data_methods_are_fine() -> None:
    assert_valid("""
        s = " A b ".strip().lower().replace("a", "c").split(" ")
        d = {"k": 1}
        v = d.get("k", 0) + len(list(d.items())) + len(d.keys()) + len(d.values())
        xs = [1]
        xs.append(2)
        xs.extend([3])
        return ",".join(s) + str(v) + "x".zfill(3) + "t".title() + str(xs.count(1))
    """)


# ---- R08 builtins and hidden inputs ---------------------------------------------------------

@pytest.mark.parametrize("name", ["open", "eval", "exec", "compile", "getattr", "globals",
                                  "vars", "type", "id", "hash", "print", "input", "__import__",
                                  "iter", "next", "repr", "dir", "breakpoint", "setattr"])
def test_r08_unsafe_builtins(name: str) -> None:
    assert "R08" in errors(f"return {name}('x')")


@pytest.mark.parametrize("body", [
    "return undefined_name",
    "return time",
    "return str(gen)",
    "x = gen\nreturn 1",
    "return str(map(len, ['a']))",
    "return f'{(x for x in [1])}'",
    "return '%s' % (lambda: 1,)" ,
    "NAMES.append('z')\nreturn 1",
])
def test_r08_hidden_inputs(body: str) -> None:
    prelude = GEN + 'NAMES = ["a"]\n'
    assert "R08" in errors(body, prelude=prelude)


def test_r08_allowed_names() -> None:
    assert_valid(f"""
        n = len(args) + abs(-1) + round(1.5) + int("1") + int(float("2.0"))
        ok = any([True]) and all([1]) and isinstance(n, int) and bool(n)
        xs = list(map(str, [1, 2])) + sorted(filter(None, ["a", ""]), key=len)
        t = tuple(xs) + tuple(dict(a=1))
        best = max([1, 3], key=lambda v: -v)
        m = min(sum([1, 2]), MAX)
        return {RUN}
    """, prelude="MAX = 3\n")


def test_r08_sync_helper_in_map_is_fine_async_is_not() -> None:
    prelude = "def tidy(s):\n    return s.strip()\n" + GEN
    assert_valid(f"xs = list(map(tidy, ['a ']))\nreturn {RUN}", prelude=prelude)
    assert "R12" in errors("xs = list(map(gen, ['a']))\nreturn 1", prelude=prelude)


# ---- R09 forbidden syntax -----------------------------------------------------------------

@pytest.mark.parametrize("body,prelude", [
    ("class A:\n    pass\nreturn 1", ""),
    ("return 1", "def deco(f):\n    return f\n@deco\ndef h():\n    return 1\n"),
    ("global X\nreturn 1", ""),
    ("def g():\n    x = 1\n    def h():\n        nonlocal x\n        x = 2\n    return x\nreturn g()", ""),
    ("def g():\n    yield 1\nreturn 1", ""),
    ("f = lambda: ctx.run('echo', {})\nreturn 1", ""),
    ("f = lambda x: x\nreturn f(1)", ""),
    ("return await g()", "async def g():\n    return await g()\n"),
    ("return await a()", "async def a():\n    return await b()\nasync def b():\n    return await a()\n"),
    ("async for x in args:\n    pass\nreturn 1", ""),
    ("async with args:\n    pass\nreturn 1", ""),
    ("try:\n    pass\nexcept* ValueError:\n    pass\nreturn 1", ""),
    ("try:\n    pass\nexcept:\n    pass\nreturn 1", ""),
    ("try:\n    pass\nexcept BaseException:\n    pass\nreturn 1", ""),
    ("try:\n    pass\nexcept (ValueError, BaseException):\n    pass\nreturn 1", ""),
    ("return 1", "def h(x=len('a')):\n    return x\n"),
    ("return 1", "def h():\n    return await args\n"),
    ("return [x async for x in args]", ""),
])
def test_r09_fires(body: str, prelude: str) -> None:
    assert "R09" in errors(body, prelude=prelude)


def test_r09_allowed_constructs() -> None:
    assert_valid(f"""
        try:
            r = {RUN}
        except (ValueError, KeyError) as exc:
            r = str(exc)
        except Exception:
            r = None
        finally:
            pass
        match args.get("mode"):
            case "a" | "b":
                pass
            case {{"k": v}}:
                pass
            case _:
                pass
        with_default = helper()
        return r
    """, prelude="def helper(x=1, y='s', z=None):\n    return x\n")


# ---- R10 _site -----------------------------------------------------------------------------

def test_r10_fires_and_says_the_host_owns_it() -> None:
    report = check(_src('return await ctx.run("echo", {}, _site="orchestrate/#0")'))
    r10 = [v for v in report.violations if v.rule == "R10"]
    assert r10 and "host" in r10[0].message


def test_r10_kwargs_smuggling_is_rejected() -> None:
    assert errors('return await ctx.run("echo", {}, **{"_site": "orchestrate/#0"})') & {"R02", "R10"}


# ---- R11 envelope ---------------------------------------------------------------------------

def test_r11_capability_literal_catalog_grant() -> None:
    assert "R11" in errors('name = "echo"\nreturn await ctx.run(name, {})')
    assert "R11" in errors('return await ctx.run("im" + "age.generate", {})')
    assert "R11" in errors('return await ctx.run("no.such", {})')
    assert "R11" in errors(f"return {RUN}", envelope={"grants": ["text.generate"]})
    assert "R11" not in errors(f"return {RUN}", envelope={"grants": ["echo"]})


def test_r11_is_skipped_by_script_rules() -> None:
    assert errors('return await ctx.run("no.such", {})', rules="script") == set()
    assert errors(f"return {RUN}", rules="script", envelope={"grants": ["text.generate"]}) == set()


def test_r11_budget() -> None:
    body = ('for i in range(10):\n'
            '    await ctx.run("image.generate", {"prompt": "p", "size": "512x512"})')
    assert "R11" in errors(body, envelope={"budget": {"usd": 0.1}})     # 10 * 0.02 = 0.2
    assert "R11" in errors(body, envelope={"budget": {"calls": 9}})
    assert "R11" not in errors(body, envelope={"budget": {"usd": 0.2, "calls": 10}})
    assert "R11" not in errors(body, envelope={"budget": {"usd": 0.1}}, rules="script")


def test_rules_argument_is_validated() -> None:
    with pytest.raises(ValueError):
        check(_src("return 1"), rules="most")  # type: ignore[arg-type]


# ---- R12 fire-and-forget ---------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    'ctx.run("echo", {})\nreturn 1',
    "gen(ctx, 'a')\nreturn 1",
    "c = gen(ctx, 'a')\nreturn 1",
    "jobs = [gen(ctx, s) for s in args['x'][:4]]\nreturn 1",
    "jobs = []\nfor s in args['x'][:4]:\n    jobs.append(gen(ctx, s))\nreturn len(jobs)",
    "d = {'a': gen(ctx, 'a')}\nreturn 1",
    "return gen(ctx, 'a')",
    "ctx.parallel([gen(ctx, 'a')])\nreturn 1",
    "x = [ctx.run('echo', {})]\nreturn 1",
])
def test_r12_fires(body: str) -> None:
    assert "R12" in errors(body, prelude=GEN)


def test_r12_consumed_awaitables() -> None:
    assert_valid("""
        a = gen(ctx, "a")
        r1 = await a
        jobs = [gen(ctx, s) for s in args["x"][:3]]
        r2 = await ctx.parallel(jobs)
        more = []
        for s in args["x"][:2]:
            more.append(ctx.run("echo", {"s": s}))
        r3 = await ctx.parallel(more)
        r4 = await ctx.parallel([ctx.run("echo", {}), gen(ctx, "b")])
        return [r1, r2, r3, r4]
    """, prelude=GEN)


# ---- NFKC -----------------------------------------------------------------------------------

@pytest.mark.parametrize("body,rule", [
    ("return ｅｖａｌ('1')", "R08"),
    ("return ｇｅｔａｔｔｒ(args, 'x')", "R08"),
    ("return args.__ｃｌａｓｓ__", "R07"),
    ("return ｏｐｅｎ('/etc/passwd')", "R08"),
    ("return __ｉｍｐｏｒｔ__('os')", "R07"),
    ("return 𝐞𝐱𝐞𝐜('1')", "R08"),
    ("return ａｒｇｓ.ｇｉ＿ｆｒａｍｅ", "R07"),
    ("return await ｃｔｘ.ｃａｌｌ('echo', {})", "R02"),
])
def test_fullwidth_and_compatibility_spellings_are_caught(body: str, rule: str) -> None:
    assert any(ord(ch) > 127 for ch in body)
    assert rule in errors(body)


# ---- reporting ------------------------------------------------------------------------------

def test_every_violation_is_reported_not_just_the_first() -> None:
    report = check(_src("x = eval('1')\ny = open('f')\nimport os\nwhile True:\n    pass\nreturn x"))
    assert {"R08", "R06", "R03"} <= report.rules()
    assert len([v for v in report.violations if v.rule == "R08"]) == 2


def test_violations_are_capped() -> None:
    body = "\n".join(f"x{i} = eval('1')" for i in range(300)) + "\nreturn 1"
    report = check(_src(body))
    assert len(report.violations) == 200


def test_violation_positions_use_character_columns() -> None:
    report = check(_src("s = 'ééé'; x = eval('1')\nreturn x"))
    v = next(v for v in report.violations if v.rule == "R08")
    line = _src("s = 'ééé'; x = eval('1')\nreturn x").splitlines()[v.line - 1]
    assert line[v.col - 1:].startswith("eval")


def test_messages_and_hints_are_present() -> None:
    report = check(_src("x = eval('1')\nreturn ctx.call('a', {})"))
    for v in report.violations:
        assert v.message and v.hint and v.severity == "error" and v.line >= 1 and v.col >= 1
