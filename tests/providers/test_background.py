"""The providers' background loop: a coroutine awaited from another event loop runs on the
loop's own thread, hands back its result or its exception, and is cancelled with its caller."""

from __future__ import annotations

import asyncio
import threading

import pytest

from frostline.providers.background import BackgroundLoop


@pytest.fixture
def bg():
    loop = BackgroundLoop("test-background")
    yield loop
    loop.stop()


def test_results_and_errors_cross_over(bg: BackgroundLoop) -> None:
    async def where(n: int) -> tuple[int, str]:
        await asyncio.sleep(0)
        return n * 2, threading.current_thread().name

    async def boom() -> None:
        raise LookupError("from the background loop")

    async def caller() -> None:
        results = await asyncio.gather(*(bg.run(where(i)) for i in range(50)))
        assert [r[0] for r in results] == [i * 2 for i in range(50)]
        assert {r[1] for r in results} == {"test-background"}
        with pytest.raises(LookupError, match="from the background loop"):
            await bg.run(boom())

    asyncio.run(caller())
    assert bg.run_sync(where(4), timeout=30) == (8, "test-background")


def test_on_its_own_loop_there_is_no_hop(bg: BackgroundLoop) -> None:
    async def inner() -> str:
        return threading.current_thread().name

    async def outer() -> str:
        return await bg.run(inner())  # already on the background loop

    assert bg.run_sync(outer(), timeout=30) == "test-background"


def test_cancelling_the_caller_cancels_the_coroutine(bg: BackgroundLoop) -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def caller() -> None:
        task = asyncio.ensure_future(bg.run(slow()))
        while not started.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(caller())
    assert cancelled.wait(30)


def test_a_cancelled_coroutine_cancels_its_caller(bg: BackgroundLoop) -> None:
    async def cancelled_there() -> None:
        raise asyncio.CancelledError

    async def caller() -> None:
        with pytest.raises(asyncio.CancelledError):
            await bg.run(cancelled_there())

    asyncio.run(caller())


def test_a_hosted_loop_runs_inline_and_serves_other_threads() -> None:
    async def where() -> str:
        return threading.current_thread().name

    async def host() -> None:
        hosted = BackgroundLoop.hosted("test-hosted")
        assert hosted.is_hosted
        here = threading.current_thread().name
        assert await hosted.run(where()) == here  # no hop: the caller's own loop
        with pytest.raises(RuntimeError, match="own thread"):
            hosted.run_sync(where())  # it would wait for itself
        # plain code on another thread reaches it while the loop runs
        other = await asyncio.to_thread(hosted.run_sync, where(), 30)
        assert other == here
        hosted.stop()  # the loop is its owner's: it keeps running
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="stopped"):
            await hosted.run(where())

    asyncio.run(host())
