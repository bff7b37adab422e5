"""The static spend bound is an upper bound: generated scripts, executed, never make more calls.

Scripts come from the shapes the precision study accepts: a name bound once to a bounded
value (constant slices, sorted/reversed/list of one, comprehensions, zip, literals, the
result of ``ctx.parallel``) and then transformed, iterated, handed to a helper whose
parameter is bounded by its calls, stored in a container or returned, grown with counted
appends; helpers whose defaults name module constants. Every such script must be accepted,
and when it runs (in-process runner, local providers, a SQLite store) with inputs of any
length, the calls it executes never exceed the checker's bound.

A second property adds growth through a reference the count cannot see (a container that
holds the list, a loop variable, a `get` default). Those scripts may be rejected; when one is
accepted, its bound must still hold, because the inputs decide how much it grows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.script import check
from frostline.store import Store, open_store
from frostline.testing import InProcessRunner

SOURCES = (
    'args["xs"][:{a}]',
    'args["xs"][{a}:{b}]',
    'args["xs"][-{c}:]',  # -0 would be the whole list
    "[{literal}]",
    "list(range({a}))",
    '[x for x in args["xs"][:{b}] if x % 2 == 0]',
    'args["xs"][:max(0, min(args["n"], {a}))]',
    'await ctx.parallel([one(x) for x in args["xs"][:{a}]])',
    'list({{x: x for x in args["xs"][:{b}]}})',
    'sorted(set(args["xs"][:{b}]))',
)
STEPS = (
    "sorted({v})",
    "sorted({v}, reverse=True)[:{k}]",
    "list(reversed({v}))",
    "[y + 1 for y in {v}]",
    "[a + b for a, b in zip({v}, {v})]",
    "{v} + [0]",
    "list({v})",
    "{v}[{k}:]",
    "{v}[:-1]",
)
SINKS = (
    'for y in {v}:\n        await ctx.run("echo", {{"y": y}})',
    'await ctx.parallel([ctx.run("echo", {{"y": y}}) for y in {v}])',
    "await emit(ctx, {v})",
    "await emit(ctx, {v}, k={k})",
    "await repeat(ctx)",
    "await repeat(ctx, times={k})",
    'for y in acc:\n        await ctx.run("echo", {{"y": y}})',
    'for i, y in enumerate({v}):\n        if i > {k}:\n            break\n'
    '        await ctx.run("echo", {{"y": y}})',
)
#: Growth through a reference no name counts; `box` holds the last bound name.
HIDDEN = (
    'box["v"].extend(args["xs"])',
    'for held in [{v}]:\n        held.extend(args["xs"])',
    'extra = box.get("w", {v})\n    extra.extend(args["xs"])',
    'box.setdefault("v", []).append(0)',
)

#: Module constants and helpers, each included when the script uses it (a helper nobody
#: calls has parameters nothing binds, so its loops have no bound).
PRELUDE = {
    "": "K = 2\nTIMES = 3\n\n\n",
    "one(": "async def one(x):\n    return x\n\n\n",
    "emit(": '''async def emit(ctx, items, k=K):
    for y in items[:k]:
        await ctx.run("echo", {"y": y, "head": True})
    for y in items:
        await ctx.run("echo", {"y": y})


''',
    "repeat(": '''async def repeat(ctx, times=TIMES):
    for i in range(times):
        await ctx.run("echo", {"i": i})


''',
}


@dataclass(frozen=True)
class Shape:
    source: str
    steps: tuple[str, ...]
    grow: int
    escape: bool
    sinks: tuple[str, ...]
    hidden: str | None

    def script(self) -> str:
        lines = [f"v0 = {self.source}"]
        for i, step in enumerate(self.steps, start=1):
            lines.append(f"v{i} = {step.format(v=f'v{i - 1}', k=2)}")
        last = f"v{len(self.steps)}"
        lines.append("acc = []")
        if self.grow:
            lines.append(f"for y in {last}[:{self.grow}]:\n        acc.append(y)")
            lines.append(f"acc.extend({last})")
        if self.escape or self.hidden:
            lines.append(f'box = {{"v": {last}, "n": len({last})}}')
        if self.hidden:
            lines.append(self.hidden.format(v=last))
        for sink in self.sinks:
            lines.append(sink.format(v=last, k=3))
        lines.append(f'return {{"last": {last}, "acc": acc' + (', "box": box' if self.escape
                                                                 or self.hidden else "") + "}")
        body = "".join(f"    {line}\n" for line in lines)
        prelude = "".join(text for use, text in PRELUDE.items() if use in body)
        return prelude + "async def orchestrate(ctx, args):\n" + body


@st.composite
def shapes(draw: st.DrawFn, hidden: bool = False) -> Shape:
    a, b = draw(st.integers(0, 6)), draw(st.integers(0, 8))
    literal = ", ".join(str(i) for i in draw(st.lists(st.integers(0, 9), max_size=5)))
    source = draw(st.sampled_from(SOURCES)).format(a=a, b=b, c=a + 1, literal=literal)
    steps = tuple(draw(st.lists(st.sampled_from(STEPS), max_size=3)))
    sinks = tuple(draw(st.lists(st.sampled_from(SINKS), min_size=1, max_size=3)))
    return Shape(source, steps, draw(st.integers(0, 3)), draw(st.booleans()), sinks,
                 draw(st.sampled_from(HIDDEN)) if hidden else None)


inputs = st.fixed_dictionaries({
    "xs": st.lists(st.integers(0, 20), max_size=12),
    "n": st.integers(-3, 10),
})

_RUNS = itertools.count()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("soundness") / "frostline.db"
    opened = open_store(f"sqlite:///{path}")
    yield opened
    opened.close()


def _run(store: Store, source: str, args: dict[str, Any]) -> Any:
    return execute(store, f"sound-{next(_RUNS)}", source, args=args,
                   providers=LocalProviders(), runner=InProcessRunner())


def _violations(source: str) -> str:
    report = check(source)
    return "\n".join(f"{v.rule} {v.line}: {v.message}" for v in report.violations)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(shape=shapes(), args=inputs)
def test_accepted_shapes_never_call_more_than_their_bound(store: Store, shape: Shape,
                                                         args: dict[str, Any]) -> None:
    source = shape.script()
    report = check(source)
    assert report.valid, f"{source}\n{_violations(source)}"
    bound = report.facts.spend_bound
    assert bound.bounded
    outcome = _run(store, source, args)
    assert outcome.status == "succeeded", (source, args, outcome.error)
    assert outcome.executed <= sum(bound.calls.values()), (source, args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(shape=shapes(hidden=True), args=inputs)
def test_hidden_growth_never_breaks_an_accepted_bound(store: Store, shape: Shape,
                                                      args: dict[str, Any]) -> None:
    source = shape.script()
    report = check(source)
    if not report.valid:
        return  # rejected before anything runs: nothing to bound
    outcome = _run(store, source, args)
    assert outcome.status == "succeeded", (source, args, outcome.error)
    assert outcome.executed <= sum(report.facts.spend_bound.calls.values()), (source, args)


def test_hidden_growth_into_an_iterated_list_is_rejected() -> None:
    # The non-vacuous half of the property above: growing the iterated list through the
    # container that holds it must cost the bound.
    shape = Shape('args["xs"][:2]', (), 0, True,
                  ('for y in {v}:\n        await ctx.run("echo", {{"y": y}})',), HIDDEN[0])
    assert "R03" in {v.rule for v in check(shape.script()).violations}
