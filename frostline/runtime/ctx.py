"""The `ctx` object a script receives: one effect primitive and four containers.

This module runs on the sandbox side (inside the child process, or in-process for unit tests).
It never talks to a provider or the store: `ctx.run` sends (σ, π, capability, payload) through a
transport and waits for the host's answer. The host owns every decision that matters — the
occurrence ω, grants, budget, replay, commit — so nothing here is trusted for safety.

The fanout path π lives in a context variable. A container starts each branch as a task whose
context has π + (i,), so every `ctx.run` inside the branch (however deep in helpers) reports
the right path, and sequential code keeps its parent's path.

Containers wait for every branch to settle before they raise: a failing branch never abandons
a sibling's call half-way (the host would complete and commit it anyway, but the script would
not see it). A stop from the host arrives as `RunStopped`, a BaseException the script cannot
swallow with ``except Exception``; a provider rejection arrives as `ProviderError`, which the
script may catch and answer with another call.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Protocol

from frostline.errors import (
    CallDenied,
    DecisionInvalid,
    FrostlineError,
    PayloadInvalid,
    RunStopped,
)
from frostline.errors import (
    DependencyFailed as DependencyFailed,
)

Reply = dict[str, Any]

_PATH: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar("frostline_path",
                                                                          default=())


class Transport(Protocol):
    """How the ctx reaches the host. Replies are the `reply` frames of frostline.runtime.rpc."""

    async def call(self, site: str, path: list[int], capability: str,
                   payload: dict[str, Any]) -> Reply: ...

    async def decide(self, path: list[int], value: int) -> Reply: ...


def error_from_reply(error: Mapping[str, Any]) -> BaseException:
    """Rebuild the exception a failed reply stands for (a stop becomes RunStopped)."""
    if error.get("kind") == "stop":
        return RunStopped(dict(error))
    return FrostlineError.from_dict(error)


def unwrap(reply: Reply) -> Any:
    """Return the result of an ok reply; raise what a failed reply stands for."""
    if reply.get("ok"):
        return reply.get("result")
    raise error_from_reply(reply.get("error") or {})


class Ctx:
    """What `orchestrate(ctx, args)` receives.

    Example::

        async def orchestrate(ctx, args):
            plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
            shots = await ctx.parallel([ctx.run("image.generate", {"prompt": p, "size": "512x512"})
                                        for p in plan["shots"][:4]])
    """

    def __init__(self, transport: Transport, *, concurrency: int = 8, max_fanout: int = 64) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self._transport = transport
        self._concurrency = concurrency
        self._max_fanout = max_fanout
        self._slots: asyncio.Semaphore | None = None

    # the effect primitive ------------------------------------------------------------
    async def run(self, capability: str, payload: dict[str, Any], *,
                  _site: str | None = None) -> Any:
        """Ask the host to run `capability` with `payload`; returns its (JSON) result."""
        if not isinstance(capability, str):
            raise PayloadInvalid("the capability name must be a string literal, e.g. 'image.generate'")
        if not isinstance(_site, str) or not _site:
            raise CallDenied("this ctx.run call carries no callsite; the host annotates every "
                             "call before the script runs, so run the script through frostline")
        if not isinstance(payload, dict):
            raise PayloadInvalid(f"the payload of {capability} must be a dict, not "
                                 f"{type(payload).__name__}", capability=capability)
        try:
            # Only JSON crosses the boundary; a copy also detaches the payload from the script.
            wire = json.loads(json.dumps(payload, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise PayloadInvalid(f"the payload of {capability} is not JSON data: {exc}",
                                 capability=capability) from None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._concurrency)
        async with self._slots:
            reply = await self._transport.call(_site, list(_PATH.get()), capability, wire)
        return unwrap(reply)

    # containers -------------------------------------------------------------------------
    async def parallel(self, branches: Iterable[Awaitable[Any]]) -> list[Any]:
        """Run branches concurrently (branch i under π + (i,)); results in branch order.

        Waits for every branch to settle, then raises the first failure in branch order.
        """
        items = list(branches)
        self._check_width("parallel", len(items))
        parent = _PATH.get()
        tasks = [self._spawn(_as_coroutine(b, "ctx.parallel"), (*parent, i))
                 for i, b in enumerate(items)]
        return await _settle(tasks)

    async def race(self, branches: Iterable[Awaitable[Any]]) -> Any:
        """Return the first successful branch's result.

        The host records the winner index, so a replay returns the same branch. Losers are
        cancelled in the script; a call they already dispatched is completed by the host.
        """
        items = list(branches)
        self._check_width("race", len(items))
        if not items:
            raise ValueError("ctx.race needs at least one branch")
        parent = _PATH.get()
        tasks = [self._spawn(_as_coroutine(b, "ctx.race"), (*parent, i))
                 for i, b in enumerate(items)]
        index = {t: i for i, t in enumerate(tasks)}
        pending: set[asyncio.Task[Any]] = set(tasks)
        first: int | None = None
        try:
            while pending and first is None:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=index.__getitem__):
                    exc = asyncio.CancelledError() if task.cancelled() else task.exception()
                    if isinstance(exc, RunStopped):
                        raise exc
                    if exc is None and first is None:
                        first = index[task]
            if first is None:
                raise _first_failure(tasks)
            winner = unwrap(await self._transport.decide(list(parent), first))
            if not isinstance(winner, int) or not 0 <= winner < len(tasks):
                raise DecisionInvalid(f"the recorded race winner {winner!r} is not a branch of "
                                      f"this race (it has {len(tasks)} branches)")
            return await tasks[winner]
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def pipeline(self, items: Iterable[Any],
                       *stages: Callable[[Any], Awaitable[Any]]) -> list[Any]:
        """Flow item i through `stages` in order under π + (i,); final values in item order."""
        values = list(items)
        self._check_width("pipeline", len(values))
        if not stages:
            raise ValueError("ctx.pipeline needs at least one stage")
        gate = asyncio.Semaphore(self._concurrency)

        async def flow(value: Any) -> Any:
            async with gate:
                for stage in stages:
                    value = await _as_coroutine(stage(value), "a pipeline stage")
                return value

        parent = _PATH.get()
        tasks = [self._spawn(flow(v), (*parent, i)) for i, v in enumerate(values)]
        return await _settle(tasks)

    async def dag(self, graph: Mapping[str, Any]) -> dict[str, Any]:
        """Run named tasks after their dependencies: ``{"name": (async_fn, ["dep", ...])}``.

        Task ``name`` runs under π + (k,) with k its position in sorted order and receives a
        dict of its dependencies' results. Returns every result keyed by name.
        """
        if not isinstance(graph, Mapping):
            raise ValueError("ctx.dag takes a dict {name: (async_fn, [deps])}")
        names = sorted(graph)
        self._check_width("dag", len(names))
        specs: dict[str, tuple[Callable[[dict[str, Any]], Awaitable[Any]], list[str]]] = {}
        for name in names:
            spec = graph[name]
            if (not isinstance(spec, tuple | list) or len(spec) != 2 or not callable(spec[0])
                    or not isinstance(spec[1], list | tuple)):
                raise ValueError(f"dag task {name!r} must be (async_fn, [deps])")
            deps = [str(d) for d in spec[1]]
            unknown = [d for d in deps if d not in graph]
            if unknown:
                raise ValueError(f"dag task {name!r} depends on unknown task(s) "
                                 f"{', '.join(sorted(unknown))}")
            specs[name] = (spec[0], deps)
        cycle = _find_cycle({n: specs[n][1] for n in names})
        if cycle:
            raise ValueError("dag has a cycle: " + " -> ".join(cycle))

        tasks: dict[str, asyncio.Task[Any]] = {}

        async def node(name: str) -> Any:
            fn, deps = specs[name]
            upstream = [tasks[d] for d in deps]
            if upstream:
                await asyncio.wait(upstream)
            for dep, task in zip(deps, upstream, strict=True):
                if task.cancelled() or task.exception() is not None:
                    raise DependencyFailed(f"dag task {name!r} did not run: {dep!r} failed",
                                           task=name, dependency=dep)
            inputs = {dep: task.result() for dep, task in zip(deps, upstream, strict=True)}
            return await _as_coroutine(fn(inputs), f"dag task {name!r}")

        parent = _PATH.get()
        # Tasks start in sorted order; a dependency that sorts later is simply awaited.
        for k, name in enumerate(names):
            tasks[name] = self._spawn(node(name), (*parent, k))
        ordered = [tasks[n] for n in names]
        results = await _settle(ordered, skip=DependencyFailed)
        return dict(zip(names, results, strict=True))

    # helpers --------------------------------------------------------------------------
    def _check_width(self, kind: str, width: int) -> None:
        if width > self._max_fanout:
            raise CallDenied(f"ctx.{kind} with {width} branches exceeds the envelope's "
                             f"max_fanout of {self._max_fanout}; split the work or raise "
                             "max_fanout in the envelope", width=width, max_fanout=self._max_fanout)

    @staticmethod
    def _spawn(coro: Coroutine[Any, Any, Any], path: tuple[int, ...]) -> asyncio.Task[Any]:
        context = contextvars.copy_context()
        context.run(_PATH.set, path)
        return asyncio.get_running_loop().create_task(coro, context=context)


def _as_coroutine(value: Any, where: str) -> Coroutine[Any, Any, Any]:
    if asyncio.iscoroutine(value):
        return value
    raise TypeError(f"{where} expects coroutines (e.g. ctx.run(...) or a call of an async "
                    f"helper), got {type(value).__name__}")


def _first_failure(tasks: Sequence[asyncio.Task[Any]],
                   skip: type[BaseException] | None = None) -> BaseException:
    failures = [t.exception() if not t.cancelled() else asyncio.CancelledError()
                for t in tasks]
    found = [f for f in failures if f is not None]
    for exc in found:  # a stop from the host wins over an ordinary failure
        if isinstance(exc, RunStopped):
            return exc
    for exc in found:
        if skip is None or not isinstance(exc, skip):
            return exc
    return found[0]


async def _settle(tasks: Sequence[asyncio.Task[Any]],
                  skip: type[BaseException] | None = None) -> list[Any]:
    """Wait for every task; then raise the first failure in branch order, or return results."""
    try:
        if tasks:
            await asyncio.wait(tasks)
    finally:
        # Cancelled from outside (e.g. a race loser): still let the branches settle.
        pending = [t for t in tasks if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    if any(t.cancelled() or t.exception() is not None for t in tasks):
        raise _first_failure(tasks, skip)
    return [t.result() for t in tasks]


def _find_cycle(edges: Mapping[str, list[str]]) -> list[str] | None:
    """A cycle in the dependency graph as a name path, or None."""
    state: dict[str, int] = {}  # 1 visiting, 2 done
    for start in sorted(edges):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        trail: list[str] = []
        while stack:
            name, i = stack.pop()
            if i == 0:
                state[name] = 1
                trail.append(name)
            deps = edges[name]
            if i < len(deps):
                stack.append((name, i + 1))
                dep = deps[i]
                if state.get(dep) == 1:
                    return [*trail[trail.index(dep):], dep]
                if not state.get(dep):
                    stack.append((dep, 0))
            else:
                state[name] = 2
                trail.pop()
    return None
