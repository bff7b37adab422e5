"""An event loop on a daemon thread, for provider sessions that outlive one attempt.

An attempt runs in its own event loop (`asyncio.run` per attempt on the command line, a pool of
loops in the HTTP service), but an MCP session is bound to the loop that opened it and should
live from the start of a run (or of `serve`) to its end. So long-lived sessions live here, on
one private loop, and every caller awaits them across loops: `await loop.run(coro)` from any
event loop, or `loop.run_sync(coro)` from plain code. The hop costs tens of microseconds of
latency and about 0.1 ms of CPU per round trip (a wake-up of a sleeping thread and a hand-over
of the interpreter lock each way; `bench/mcp_overhead.py`).

A host that runs its attempts on one long-lived event loop of its own can keep the sessions on
that loop instead (`BackgroundLoop.hosted()`, called on it): a call from that loop then costs no
hop at all, and plain code on other threads still reaches the sessions with `run_sync` while the
host's loop runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """One event loop on one daemon thread, started on first use.

    Example: ``tools = BackgroundLoop("mcp").run_sync(session.open(), timeout=60)``
    """

    def __init__(self, name: str = "frostline-providers") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._hosted = False  # the loop is the host's own: never started nor stopped here

    @classmethod
    def hosted(cls, name: str = "frostline-providers") -> BackgroundLoop:
        """The running event loop itself, as the sessions' loop (call it on that loop).

        Coroutines awaited with `run` from this loop run inline; `run_sync` works from other
        threads while this loop runs (from its own thread it would wait for itself, and
        refuses). `stop` leaves the loop to its owner."""
        self = cls(name)
        self._loop, self._thread = asyncio.get_running_loop(), threading.current_thread()
        self._hosted = True
        return self

    @property
    def is_hosted(self) -> bool:
        return self._hosted

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                if self._hosted:
                    raise RuntimeError(f"{self.name}: the host's event loop was stopped")
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._started())

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the background loop from any event loop (this one included: then
        there is no hop at all). Cancelling the caller cancels `coro`.

        The hop is one callback each way between the two loops, with no thread-safe future
        in between: a `run_coroutine_threadsafe` future wrapped back into the caller's loop
        costs about 1.6 times the CPU per hop (locks, condition, two chained futures), paid on
        every MCP tool call.
        """
        here = asyncio.get_running_loop()
        there = self._started()
        if here is there:
            return await coro
        result: asyncio.Future[T] = here.create_future()
        hop = _Hop(coro, result, here)
        result.add_done_callback(hop.caller_done)
        there.call_soon_threadsafe(hop.start, there)
        return await result

    def run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the background loop and block until it is done."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError(f"run_sync called on {self.name}'s own thread; await run()")
        return self.submit(coro).result(timeout)

    def stop(self) -> None:
        """Stop the loop and its thread (sessions must be closed first)."""
        with self._guard:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None or self._hosted:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()


class _Hop:
    """One coroutine run on the background loop for a caller on another loop."""

    __slots__ = ("caller", "coro", "result", "task", "there")

    def __init__(self, coro: Coroutine[Any, Any, Any], result: asyncio.Future[Any],
                 caller: asyncio.AbstractEventLoop) -> None:
        self.coro = coro
        self.result = result
        self.caller = caller
        self.task: asyncio.Task[Any] | None = None
        self.there: asyncio.AbstractEventLoop | None = None

    def start(self, there: asyncio.AbstractEventLoop) -> None:  # on the background loop
        self.there = there
        if self.result.cancelled():  # the caller gave up before it started
            self.coro.close()
            return
        self.task = there.create_task(self.coro)
        self.task.add_done_callback(self.done)

    def done(self, task: asyncio.Task[Any]) -> None:  # on the background loop
        if not self.caller.is_closed():
            self.caller.call_soon_threadsafe(self.settle, task)

    def settle(self, task: asyncio.Task[Any]) -> None:  # on the caller's loop
        if self.result.done():
            return
        if task.cancelled():
            self.result.cancel()
        elif (exc := task.exception()) is not None:
            self.result.set_exception(exc)
        else:
            self.result.set_result(task.result())

    def caller_done(self, result: asyncio.Future[Any]) -> None:  # on the caller's loop
        there = self.there
        if result.cancelled() and there is not None and not there.is_closed():
            there.call_soon_threadsafe(self._cancel)

    def _cancel(self) -> None:  # on the background loop
        if self.task is not None:
            self.task.cancel()
