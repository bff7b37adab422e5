"""The sandbox-side ctx: fanout paths, container semantics, argument checks.

The transport here is a small recording host: it answers each call from the payload
(``fail`` → provider error, ``stop`` → host stop, ``delay`` → sleep first) and keeps the race
decisions it was asked to record, like the store would.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.errors import CallDenied, PayloadInvalid, ProviderError, RunStopped
from frostline.runtime.ctx import Ctx


class Host:
    def __init__(self, decisions: dict[str, int] | None = None) -> None:
        self.calls: list[tuple[str, tuple[int, ...], dict[str, Any]]] = []
        self.completed: list[dict[str, Any]] = []
        self.decisions = dict(decisions or {})
        self.in_flight = 0
        self.max_in_flight = 0

    async def call(self, site: str, path: list[int], capability: str,
                   payload: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((site, tuple(path), payload))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(payload.get("delay", 0))
        finally:
            self.in_flight -= 1
        self.completed.append(payload)
        if payload.get("stop"):
            return {"ok": False, "error": {"kind": "stop", "type": "Divergence", "message": "stop"}}
        if payload.get("fail"):
            return {"ok": False, "error": {"kind": "raise", "type": "ProviderError",
                                           "message": f"rejected {payload.get('n')}",
                                           "status": 400}}
        return {"ok": True, "result": payload.get("n")}

    async def decide(self, path: list[int], value: int) -> dict[str, Any]:
        key = ".".join(map(str, path))
        return {"ok": True, "result": self.decisions.setdefault(key, value)}


def go(coro_fn, host=None, **kw):
    host = host or Host()
    ctx = Ctx(host, **kw)
    return asyncio.run(coro_fn(ctx)), host


def call(ctx, n, site="s/#0", **extra):
    return ctx.run("echo", {"n": n, **extra}, _site=site)


def test_sequential_calls_have_the_empty_path_and_parallel_pushes_the_branch_index():
    async def script(ctx):
        await call(ctx, "a")

        async def helper(i):
            inner = await ctx.parallel([call(ctx, (i, j), site="s/#2") for j in range(2)])
            return [i, inner]

        return await ctx.parallel([helper(i) for i in range(3)])

    result, host = go(script)
    assert result == [[0, [[0, 0], [0, 1]]], [1, [[1, 0], [1, 1]]], [2, [[2, 0], [2, 1]]]]
    paths = {tuple(p["n"]) if isinstance(p["n"], list) else p["n"]: path
             for _, path, p in host.calls}
    assert paths["a"] == ()
    for i in range(3):
        for j in range(2):
            assert paths[(i, j)] == (i, j)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_nested_parallel_paths_are_the_branch_positions(widths):
    async def level(ctx, depth, prefix):
        if depth == len(widths):
            return await call(ctx, list(prefix))
        return await ctx.parallel([level(ctx, depth + 1, (*prefix, i)) for i in range(widths[depth])])

    _, host = go(lambda ctx: level(ctx, 0, ()))
    assert all(path == tuple(p["n"]) for _, path, p in host.calls)
    assert len(host.calls) == eval("*".join(map(str, widths)))


def test_parallel_waits_for_every_branch_then_raises_the_first_failure_in_branch_order():
    async def script(ctx):
        try:
            await ctx.parallel([call(ctx, 0, fail=True, delay=0.05), call(ctx, 1, fail=True),
                                call(ctx, 2, delay=0.1)])
        except ProviderError as exc:
            return str(exc)

    message, host = go(script)
    assert message == "rejected 0"  # branch 0 failed last but comes first
    assert sorted(p["n"] for p in host.completed) == [0, 1, 2]  # the slow sibling finished


def test_a_stop_wins_over_a_failure_and_cannot_be_swallowed():
    async def script(ctx):
        try:
            await ctx.parallel([call(ctx, 0, fail=True), call(ctx, 1, stop=True)])
        except Exception:
            return "swallowed"

    with pytest.raises(RunStopped):
        go(script)


def test_provider_errors_carry_their_fields():
    async def script(ctx):
        try:
            await call(ctx, 5, fail=True)
        except ProviderError as exc:
            return exc.fields["status"]

    assert go(script)[0] == 400


def test_pipeline_runs_stages_in_order_per_item_under_the_item_path():
    async def script(ctx):
        async def first(item):
            return await call(ctx, f"{item}-1", site="s/#0")

        async def second(value):
            return await call(ctx, f"{value}-2", site="s/#1")

        return await ctx.pipeline(["a", "b", "c"], first, second)

    result, host = go(script, concurrency=2)
    assert result == ["a-1-2", "b-1-2", "c-1-2"]
    by_item = {}
    for _site, path, p in host.calls:
        by_item.setdefault(path, []).append(p["n"])
    assert by_item == {(0,): ["a-1", "a-1-2"], (1,): ["b-1", "b-1-2"], (2,): ["c-1", "c-1-2"]}


def test_dag_paths_are_sorted_positions_and_tasks_receive_their_deps():
    async def script(ctx):
        async def plan(deps):
            return await call(ctx, "plan")

        async def shot(deps):
            return await call(ctx, f"shot<{deps['plan']}>")

        async def zcut(deps):
            return await call(ctx, f"cut<{deps['shot']},{deps['plan']}>")

        return await ctx.dag({"zcut": (zcut, ["shot", "plan"]), "shot": (shot, ["plan"]),
                              "plan": (plan, [])})

    result, host = go(script)
    assert result == {"plan": "plan", "shot": "shot<plan>", "zcut": "cut<shot<plan>,plan>"}
    assert {p["n"]: path for _, path, p in host.calls} == {
        "plan": (0,), "shot<plan>": (1,), "cut<shot<plan>,plan>": (2,)}


@pytest.mark.parametrize(("graph", "message"), [
    ({"a": ("F", ["b"]), "b": ("F", ["a"])}, "cycle: a -> b -> a"),
    ({"a": ("F", ["nope"])}, "unknown task(s) nope"),
    ({"a": ("F",)}, "must be (async_fn, [deps])"),
])
def test_dag_rejects_cycles_and_unknown_deps_at_run_time(graph, message):
    async def noop(deps):
        return None

    async def script(ctx):
        return await ctx.dag({k: tuple(noop if x == "F" else x for x in v) for k, v in graph.items()})

    with pytest.raises(ValueError, match=re.escape(message)):
        go(script)


def test_dag_failure_skips_dependents_and_raises_the_original_error():
    async def script(ctx):
        async def a(deps):
            return await call(ctx, "a", fail=True)

        async def b(deps):
            return await call(ctx, "b")

        async def c(deps):
            return await call(ctx, "c", delay=0.02)

        return await ctx.dag({"b": (b, ["a"]), "a": (a, []), "c": (c, [])})

    with pytest.raises(ProviderError, match="rejected a"):
        go(script)
    host = Host()
    with pytest.raises(ProviderError):
        go(script, host)
    assert sorted(p["n"] for p in host.completed) == ["a", "c"]  # b never ran, c finished


def test_race_returns_the_first_success_and_records_it():
    async def script(ctx):
        return await ctx.race([call(ctx, 0, delay=0.2), call(ctx, 1, fail=True),
                               call(ctx, 2, delay=0.01)])

    result, host = go(script)
    assert result == 2 and host.decisions == {"": 2}


def test_race_replay_returns_the_recorded_winner_even_when_another_finishes_first():
    async def script(ctx):
        return await ctx.race([call(ctx, 0, delay=0.05), call(ctx, 1)])

    result, _ = go(script, Host(decisions={"": 0}))
    assert result == 0


def test_race_with_only_failures_raises_the_first_in_branch_order():
    async def script(ctx):
        return await ctx.race([call(ctx, 0, fail=True, delay=0.02), call(ctx, 1, fail=True)])

    with pytest.raises(ProviderError, match="rejected 0"):
        go(script)


def test_width_above_max_fanout_is_refused_before_any_call():
    async def script(ctx):
        return await ctx.parallel([call(ctx, i) for i in range(3)])

    host = Host()
    with pytest.raises(CallDenied, match="max_fanout of 2"):
        go(script, host, max_fanout=2)
    assert host.calls == []


def test_ctx_concurrency_caps_calls_in_flight():
    async def script(ctx):
        return await ctx.parallel([call(ctx, i, delay=0.01) for i in range(10)])

    result, host = go(script, concurrency=3)
    assert result == list(range(10)) and host.max_in_flight == 3


@pytest.mark.parametrize(("payload", "site", "error"), [
    ({"n": float("nan")}, "s/#0", PayloadInvalid),
    ({"n": {1, 2}}, "s/#0", PayloadInvalid),
    (["not", "a", "dict"], "s/#0", PayloadInvalid),
    ({"n": 1}, None, CallDenied),
])
def test_bad_calls_fail_in_the_script_without_reaching_the_host(payload, site, error):
    host = Host()

    async def script(ctx):
        return await ctx.run("echo", payload, _site=site)

    with pytest.raises(error):
        go(script, host)
    assert host.calls == []


def test_containers_take_coroutines_only():
    async def script(ctx):
        return await ctx.parallel([1, 2])

    with pytest.raises(TypeError, match="expects coroutines"):
        go(script)
