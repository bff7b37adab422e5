"""Invariants of the runtime rule under random shapes and arrival orders."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frostline.errors import RunBusy
from frostline.store import open_store
from tests.runtime.helpers import Slow, echo_ns, local, logged, run

SHAPE = """
async def orchestrate(ctx, args):
    async def branch(i):
        out = []
        for j in range({inner}):
            out.append(await ctx.run("echo", {{"n": i * 10 + j, "delay": args["delays"][i][j]}}))
        return out

    return await ctx.parallel([branch(i) for i in range({width})])
"""


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_identities_do_not_depend_on_arrival_order_and_replay_is_exact(width, inner, data):
    delay = st.sampled_from([0.0, 0.001, 0.004])
    first = [[data.draw(delay) for _ in range(inner)] for _ in range(width)]
    second = [[data.draw(delay) for _ in range(inner)] for _ in range(width)]
    src = SHAPE.format(width=width, inner=inner)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with open_store(f"sqlite:///{work}/f.db") as store:
            p = Slow(local(work))
            a = run(store, "a", src, p, args={"delays": first})
            b = run(store, "b", src, p, args={"delays": second})
            ids = lambda o: sorted(c["identity"] for c in o.calls)  # noqa: E731
            # same identities whatever order the branches' calls arrived in
            assert ids(a) == ids(b) and len(ids(a)) == width * inner
            ns = lambda o: [[x["n"] for x in xs] for xs in o.result]  # noqa: E731
            assert ns(a) == ns(b) == [[i * 10 + j for j in range(inner)] for i in range(width)]
            # a replay with the same args executes nothing and returns the same result
            again = run(store, "a", src, p, args={"delays": first})
            assert (again.executed, again.replayed) == (0, width * inner)
            assert again.result == a.result
            assert len(echo_ns(work / "provider.jsonl")) == 2 * width * inner


def test_two_workers_never_execute_one_run_at_once(store, tmp_path):
    with store.run_lock("r"), pytest.raises(RunBusy):
        run(store, "r", """
        async def orchestrate(ctx, args):
            return await ctx.run("echo", {"n": 1})
        """, local(tmp_path))
    assert echo_ns(tmp_path / "provider.jsonl") == []


LOOP = """
async def orchestrate(ctx, args):
    out = []
    for i in range(6):
        if i < len(args["ps"]):
            out.append(await ctx.run("echo", {"v": args["ps"][i]}))
    return len(out)
"""


def expected(first: list[int], second: list[int], policy: str) -> tuple[str, int, int]:
    """The runtime rule as a model: (status, replayed, executed) of the second attempt."""
    replayed = executed = 0
    for i, value in enumerate(second):
        if i < len(first):
            if value != first[i]:
                return "diverged", replayed, executed
            replayed += 1
        elif policy == "auto" and value in first:  # echo is side-effecting: a repeat is denied
            return "failed", replayed, executed
        else:
            executed += 1
    return "succeeded", replayed, executed


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 3), max_size=6), st.lists(st.integers(0, 3), max_size=6),
       st.sampled_from(["off", "auto"]))
def test_a_revision_never_executes_a_committed_identity_twice(first, second, policy):
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with open_store(f"sqlite:///{work}/f.db") as store:
            p = local(work)
            env = {"ledger_policy": policy}
            one = run(store, "r", LOOP, p, args={"ps": first}, envelope=env)
            assert (one.status, one.executed) == ("succeeded", len(first))
            two = run(store, "r", LOOP, p, args={"ps": second})
            assert (two.status, two.replayed, two.executed) == expected(first, second, policy)
            per_identity: dict[str, int] = {}
            for entry in logged(work / "provider.jsonl"):
                per_identity[entry["identity"]] = per_identity.get(entry["identity"], 0) + 1
            assert all(n == 1 for n in per_identity.values())
