"""Precision of the bound analysis: realistic shapes it accepts, and the growth it still refuses.

Each accepted shape was a false rejection found by the precision study (tests/corpus/realistic);
each refused one is a way a value could grow where the count cannot see it, so accepting it
would make the static spend bound unsound. The spend bounds are asserted exactly where the
shape fixes them.
"""

from __future__ import annotations

import textwrap

import pytest

from frostline.script import check

RUN = 'await ctx.run("echo", {"x": x})'


def _report(src: str):  # type: ignore[no-untyped-def]
    return check(textwrap.dedent(src).lstrip("\n"))


def _errors(src: str) -> list[tuple[str, str]]:
    return [(v.rule, v.message) for v in _report(src).violations if v.severity == "error"]


def _echo_bound(src: str) -> int:
    report = _report(src)
    assert report.valid, _errors(src)
    return report.facts.spend_bound.calls.get("echo", 0)


# ---- the two patterns --------------------------------------------------------------

def test_a_top_k_name_returned_in_a_dict_keeps_its_bound() -> None:
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        top = sorted(args["rows"][:6], key=lambda r: r["score"])[:3]
        ids = [r["id"] for r in top]
        for x in top:
            {RUN}
        return {{"top": top, "ids": ids}}
    """) == 3


def test_a_parameter_default_may_name_a_module_constant() -> None:
    assert _echo_bound("""
    DEFAULT_SIZE = "1024x1024"
    TRIES = 3

    async def make(ctx, prompt, size=DEFAULT_SIZE, tries=TRIES):
        for x in range(tries):
            await ctx.run("echo", {"x": x, "size": size})

    async def orchestrate(ctx, args):
        await make(ctx, "a")
        await make(ctx, "b", tries=2)
    """) == 6  # the bound per function (3) times two calls


@pytest.mark.parametrize("rebinding", [
    "    DEFAULT_SIZE = args['size']\n",
    "    for DEFAULT_SIZE in ['a']:\n        pass\n",
])
def test_a_default_naming_a_rebound_constant_stays_rejected(rebinding: str) -> None:
    src = ('DEFAULT_SIZE = "1024x1024"\n\n\nasync def make(ctx, size=DEFAULT_SIZE):\n'
           '    return await ctx.run("echo", {"size": size})\n\n\n'
           "async def orchestrate(ctx, args):\n" + rebinding + "    return await make(ctx)\n")
    errors = _errors(src)
    assert ("R09", "parameter default `DEFAULT_SIZE` names a module constant that "
            "`orchestrate` rebinds") in errors


def test_a_default_naming_anything_else_stays_rejected() -> None:
    assert ("R09", "parameter defaults must be literals") in _errors("""
    async def orchestrate(ctx, args):
        size = "512x512"
        async def make(prompt, size=size):
            return await ctx.run("echo", {"size": size})
        return await make("a")
    """)


# ---- container results, parameters, clamped slices, method keys ---------------------------

def test_the_results_of_parallel_pipeline_and_dag_have_the_containers_width() -> None:
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        async def one(x):
            return x

        async def task(deps):
            return 1

        firsts = await ctx.parallel([one(x) for x in args["xs"][:4]])
        staged = await ctx.pipeline(args["xs"][:2], one)
        tasks = await ctx.dag({{"a": (task, []), "b": (task, ["a"])}})
        for x in firsts:
            {RUN}
        for x in staged:
            {RUN}
        for x in sorted(tasks.items()):
            {RUN}
    """) == 8


def test_a_race_result_has_no_width() -> None:
    assert ("R03", "`for` loop over `won` has no static bound") in _errors(f"""
    async def orchestrate(ctx, args):
        won = await ctx.race([ctx.run("echo", {{}}), ctx.run("echo", {{}})])
        for x in won:
            {RUN}
    """)


def test_a_parameter_is_bounded_by_every_call_of_its_helper() -> None:
    assert _echo_bound("""
    def rows(results):
        return [f"{r}" for r in results]

    async def emit(ctx, items, k=2):
        for x in items[:k]:
            await ctx.run("echo", {"x": x})
        for x in items:
            await ctx.run("echo", {"x": x})

    async def orchestrate(ctx, args):
        await emit(ctx, args["xs"][:3])
        await emit(ctx, [1, 2, 3, 4, 5], k=4)
        return rows(args["xs"][:7])
    """) == 2 * (4 + 5)


@pytest.mark.parametrize("call", [
    "await emit(ctx, args['xs'])",                       # one call passes unbounded data
    "await emit(ctx, *[args['xs'][:2]])",                # a starred argument hides the binding
    "await ctx.pipeline([args['xs'][:2]], emit_stage)",  # a stage gets its items from the host
])
def test_a_parameter_without_a_visible_bounded_argument_is_unbounded(call: str) -> None:
    src = f"""
    async def emit(ctx, items):
        for x in items:
            {RUN}

    async def orchestrate(ctx, args):
        async def emit_stage(items):
            for x in items:
                {RUN}
        await emit(ctx, args["xs"][:2])
        await emit_stage(args["xs"][:2])
        {call}
    """
    assert any(rule == "R03" for rule, _ in _errors(src))


def test_a_parameter_grown_inside_its_helper_is_unbounded() -> None:
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def emit(ctx, items):
        items.append(0)
        for x in items:
            {RUN}

    async def orchestrate(ctx, args):
        await emit(ctx, [1, 2])
    """))


def test_a_slice_end_clamped_to_a_non_negative_bound_bounds_the_slice() -> None:
    assert _echo_bound(f"""
    MAX = 6
    async def orchestrate(ctx, args):
        count = max(1, min(int(args["count"]), MAX))
        for x in args["xs"][:count]:
            {RUN}
    """) == 6


def test_an_open_slice_of_a_bounded_list_is_bounded_by_the_list() -> None:
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        refs = await ctx.parallel([ctx.run("echo", {{"x": x}}) for x in args["xs"][:4]])
        for x in refs[1:]:
            {RUN}
        for x in refs[:-1]:
            {RUN}
    """) == 4 + 4 + 4  # at most the list; the cut items are not subtracted


def test_a_slice_end_that_may_be_negative_stays_unbounded() -> None:
    # xs[:-2] keeps all but two items: min(n, 6) bounds nothing when n may be negative.
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def orchestrate(ctx, args):
        count = min(int(args["count"]), 6)
        for x in args["xs"][:count]:
            {RUN}
    """))


def test_a_data_method_may_be_a_sort_key() -> None:
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        scores = {{"a": 1, "b": 2}}
        best = max(scores, key=scores.get)
        ranked = sorted(scores, key=scores.get)
        for x in ranked:
            {RUN}
        return best
    """) == 2


def test_a_growing_method_as_a_key_stays_a_hidden_input() -> None:
    assert "R08" in {rule for rule, _ in _errors("""
    async def orchestrate(ctx, args):
        seen = []
        return sorted(args["xs"][:3], key=seen.append)
    """)}


# ---- growth the count cannot see: each made the spend bound unsound or would now --------

@pytest.mark.parametrize("grow", [
    'box = {"k": top}\n    box["k"].extend(args["more"])',
    'box = dict(k=top)\n    box["k"].extend(args["more"])',
    'for alias in [top]:\n        alias.extend(args["more"])',
    'other = {}.get("k", top)\n    other.extend(args["more"])',
    'grown = list(map(list.extend, [top], [args["more"]]))',
    'match top:\n        case alias:\n            alias.extend(args["more"])',
    'keep = [top]\n    keep[0] += args["more"]',
    'pairs = list(map(lambda _: top, range(1)))\n    pairs[0].extend(args["more"])',
    'nest = [[t for t in range(1)] for _ in range(1)]\n    holder = [top for _ in range(1)]\n'
    '    holder[0].extend(args["more"])',
    'list.extend(top, args["more"])',
    'list.insert(top, 0, args["more"])',
    '(top or []).extend(args["more"])',
    '(top if args["a"] else [])[0:0] = args["more"]',
    'start = sum([], top)\n    start.extend(args["more"])',
])
def test_an_escaped_list_grown_through_another_reference_is_unbounded(grow: str) -> None:
    src = f"""
async def orchestrate(ctx, args):
    top = [1, 2]
    {grow}
    for x in top:
        {RUN}
"""
    assert any(rule == "R03" for rule, _ in _errors(src)), src


def test_a_nested_helper_returning_an_outer_list_lets_it_escape() -> None:
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def orchestrate(ctx, args):
        top = [1, 2]
        async def stage(x):
            return top
        res = await ctx.pipeline([1], stage)
        res[0].extend(list(range(500)))
        for x in top:
            {RUN}
    """))


def test_returning_a_parameter_lets_a_shared_default_escape() -> None:
    # Every call without `acc` shares one default list; the caller grows it between calls.
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def collect(ctx, acc=[]):
        for x in acc:
            {RUN}
        return acc

    async def orchestrate(ctx, args):
        for i in range(3):
            grown = await collect(ctx)
            grown.extend(args["xs"])
    """))


def test_growth_inside_a_lambda_is_not_counted_by_the_loops_around_it() -> None:
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def orchestrate(ctx, args):
        top = []
        ranked = sorted(range(500), key=lambda r: top.append(r))
        for x in top:
            {RUN}
    """))


def test_a_slice_store_grows_a_list_by_the_stored_items() -> None:
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        top = [1]
        top[0:0] = list(range(500))
        for x in top:
            {RUN}
    """) == 501
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def orchestrate(ctx, args):
        top = [1]
        top[:] = args["xs"]
        for x in top:
            {RUN}
    """))


def test_an_augmented_slice_store_grows_the_list() -> None:
    assert any(rule == "R03" for rule, _ in _errors(f"""
    async def orchestrate(ctx, args):
        top = [1]
        top[0:0] += args["xs"]
        for x in top:
            {RUN}
    """))


def test_an_escape_without_hidden_growth_keeps_the_bound() -> None:
    # `keep` holds `top`, but nothing grows through anything but a name bound to new lists.
    assert _echo_bound(f"""
    async def orchestrate(ctx, args):
        top = [1, 2]
        keep = {{"top": top, "n": len(top)}}
        acc = []
        for x in top:
            acc.append(x)
            {RUN}
        for x in acc:
            {RUN}
        return keep
    """) == 4


# ---- R03/R05: a bound over a limit says so -------------------------------------------------

def test_range_of_a_power_is_reported_as_over_the_loop_limit() -> None:
    assert _errors(f"""
    async def orchestrate(ctx, args):
        for x in range(10**9):
            {RUN}
    """) == [("R03", "`for` loop over `range(10 ** 9)`: the bound 1000000000 is over the limit "
              "1000 (the maximum loop bound)")]


def test_a_small_power_is_reported_as_not_evaluated() -> None:
    [(rule, message)] = _errors(f"""
    async def orchestrate(ctx, args):
        for x in range(2**5):
            {RUN}
    """)
    assert rule == "R03" and "does not evaluate `**`" in message
    hint = [v.hint for v in _report(f"""
    async def orchestrate(ctx, args):
        for x in range(2**5):
            {RUN}
    """).violations]
    assert hint == ["write the number itself (32)"]


def test_limits_name_the_bound_and_which_limit() -> None:
    messages = [m for _, m in _errors(f"""
    async def orchestrate(ctx, args):
        for x in range(5000):
            {RUN}
        for i in range(200):
            for x in range(100):
                {RUN}
        await ctx.parallel([ctx.run("echo", {{}}) for x in range(10**3)])
    """)]
    assert "`for` loop over `range(5000)`: the bound 5000 is over the limit 1000 " \
           "(the maximum loop bound)" in messages
    assert "nested loops ending in the `for` loop over `range(100)`: the bound 20000 is over " \
           "the limit 10000 (the maximum product of nested loop bounds)" in messages
    assert any("the bound 1000 is over the limit 64 (the envelope's max fanout)" in m
               for m in messages)
    wide = _errors("""
    async def orchestrate(ctx, args):
        await ctx.parallel([ctx.run("echo", {}) for x in range(10**6)])
    """)
    assert ("R05", "`ctx.parallel` over `[ctx.run('echo', {}) for x in range(10 ** 6)]`: the "
            "bound 1000000 is over the limit 64 (the envelope's max fanout)") in wide
