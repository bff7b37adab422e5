"""Write settlement: the store writes of one attempt, and when each must be known to be durable.

Writes go to the store as typed write objects (`frostline.store.writes`) without a thread
hand-off (`Store.submit`), and the store makes them durable in the order they were queued. A
write is either waited for (`write`: the attempt record, before the effect it precedes) or
*settled* (`settle`: a commit, a failed-call mark, an audit event): queued now, and checked
later, in queue order — by `settled(upto)` before the next dispatch, and by the broker's drain
before the attempt can finish. Queue order makes every write queued before a durable one
durable too, so checking them costs no wait. A settled write that failed stops the run:
the settlement does not keep the run's stop itself, it tells its `on_failure` (the broker's
`RunStop.stop`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from frostline.errors import FrostlineError, StoreUnavailable
from frostline.store.base import Store
from frostline.store.writes import Write

log = logging.getLogger("frostline.broker")

T = TypeVar("T")

OnDone = Callable[[BaseException | None, Any], None]  # (error, value) of a settled write
OnFailure = Callable[[FrostlineError], None]  # stops the run


class Settlement:
    """The write queue of one attempt.

    Example::

        writes = Settlement(store, "run-1", stop.stop)
        call_id = await writes.write(BeginCall(...))           # durable on return
        writes.settle(writes.stops_on_failure("fail_call"), FailCall(call_id, error))
        await writes.settled(writes.queued)                    # checked, in queue order
    """

    def __init__(self, store: Store, run_id: str, on_failure: OnFailure, *,
                 fail_open: bool = False) -> None:
        self._store = store
        self._run_id = run_id
        self._on_failure = on_failure
        self._fail_open = fail_open
        # Writes queued and not yet checked, in queue order: (number, future, method, on_done).
        self._settling: deque[tuple[int, Future[Any], str, OnDone]] = deque()
        self.queued = 0  # settling writes queued so far

    def unavailable(self, operation: str, exc: BaseException) -> FrostlineError:
        """A store failure as the error the run stops on (a FrostlineError passes through)."""
        if isinstance(exc, FrostlineError):
            return exc
        err = StoreUnavailable(f"store failed during {operation}: {type(exc).__name__}: {exc}",
                               run_id=self._run_id)
        err.__cause__ = exc
        return err

    async def write(self, write: Write[T]) -> T:
        """Queue a write and wait until it is durable; any failure becomes StoreUnavailable
        (a FrostlineError the store raised on purpose passes through)."""
        return await self.durable(write.operation, self.start(write))

    def start(self, write: Write[T]) -> Future[T]:
        """Queue a write that will be waited for (with `durable`), and return at once."""
        try:
            return self._store.submit(write)
        except Exception as exc:  # a store that refuses at once fails the future
            failed: Future[T] = Future()
            failed.set_exception(exc)
            return failed

    async def durable(self, operation: str, future: Future[T]) -> T:
        """Wait until a write `start` queued is durable; as `write` says of failures."""
        try:
            return await asyncio.wrap_future(future)
        except Exception as exc:
            raise self.unavailable(operation, exc) from exc

    def settle(self, on_done: OnDone, write: Write[Any]) -> None:
        """Queue a write whose durability no reply waits for; `on_done(error, value)` runs
        once it is settled and checked — before the next dispatch, or in drain."""
        # Nobody waits for it yet: the store may hold it (a `held` write) briefly so that the
        # next attempt record (which is waited for) shares its transaction and fsync.
        future = self._store.submit(write)
        self.queued += 1
        self._settling.append((self.queued, future, write.operation, on_done))

    def pending(self) -> bool:
        """Whether a queued write is still unchecked."""
        return bool(self._settling)

    async def settled(self, upto: int) -> None:
        """Check, in queue order, every settling write numbered up to `upto`.

        The store makes writes durable in queue order, so once a later write is durable these
        are done and this costs no wait; each write is checked once. A failure stops the run.
        """
        while self._settling and self._settling[0][0] <= upto:
            _, future, method, on_done = self._settling[0]
            if not future.done():
                await asyncio.wait([asyncio.wrap_future(future)])
                continue  # another waiter may have checked it meanwhile
            self._settling.popleft()
            if future.cancelled():
                on_done(StoreUnavailable(f"the store write {method} was cancelled",
                                         run_id=self._run_id), None)
            elif (exc := future.exception()) is not None:
                on_done(self.unavailable(method, exc), None)
            else:
                on_done(None, future.result())

    def stops_on_failure(self, operation: str) -> OnDone:
        """The check of a settled write whose failure stops the run (unless fail-open)."""
        def check(exc: BaseException | None, _: Any) -> None:
            if exc is not None:
                self._failed(operation, self.unavailable(operation, exc))
        return check

    def _failed(self, operation: str, exc: FrostlineError) -> None:
        if self._fail_open:
            log.error("FAIL-OPEN: could not record %s for run %s: %s", operation, self._run_id,
                      exc)
            return
        # The audit trail is part of the contract: stop before anything else happens.
        self._on_failure(exc if isinstance(exc, StoreUnavailable) else StoreUnavailable(
            f"could not record {operation}: {exc}", run_id=self._run_id))
