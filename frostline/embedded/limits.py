"""How much a single principal may hold at once, on every surface that serves several: the
HTTP API (`frostline serve`) and the MCP server over HTTP (`frostline mcp`).

Without these bounds one token could fill the job queue and every worker with its scripts, or
every connection with event streams, and starve every other principal. Each principal gets its
own counters; a request beyond a bound is answered at once with 429 and a `Retry-After`, and
nothing is created or started for it. The defaults are far above what a person or a modest
automation does; an operator sets them with `frostline serve` flags, or in the configuration
file's ``[service.limits]`` table with the keys of `ServiceLimits.KEYS`.

The executing bound counts jobs, not requests: a job holds its slot from the moment it is
queued until it ends, whether its request waits for it (``?wait=``) or answered 202 at once.
The queue counts a principal's jobs waiting or running (on a PostgreSQL store, every server's
and every submitter's); this process adds the submissions it is making right now, under one
lock per principal, so a burst of concurrent requests cannot all pass the same count. A
resume (an answered wait, a due timer) is admitted the same way: it takes one of its owner's
slots, and waits for a free one when there is none (`frostline.service.resumer`).

Answers to waits (signals and approvals) count against a rate per principal, like runs: each
one commits a row and may queue a resume, so a flood of them must not go unbounded either.
The MCP server runs a script in the request itself (no queue): `attempt_slot` counts the
principal's scripts executing in this process against the same `executing_attempts`.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from frostline.errors import (
    DefinitionError,
)
from frostline.errors import (
    LimitExceeded as LimitExceeded,
)

# When a slot frees up is unknown (an attempt runs until it ends); clients retry after this.
BUSY_RETRY_AFTER_S = 5
RATE_WINDOW_S = 60.0


@dataclass(frozen=True)
class ServiceLimits:
    """Per-principal bounds of one service process.

    executing_attempts: jobs (attempts, repairs, resumes, new runs' first attempts) waiting or
        executing at once, from the moment they are queued until they end.
    event_streams: event streams (`GET /v1/runs/{id}/events`) open at once.
    runs_per_minute: runs created in any 60-second window.
    answers_per_minute: signals and approvals sent in any 60-second window.
    """

    executing_attempts: int = 8
    event_streams: int = 16
    runs_per_minute: int = 120
    answers_per_minute: int = 120

    KEYS: ClassVar[tuple[str, ...]] = ("executing_attempts", "event_streams", "runs_per_minute",
                                       "answers_per_minute")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DefinitionError(f"service limit {f.name} is a whole number of at least 1, "
                                      f"not {value!r}", key=f.name)

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> ServiceLimits:
        """Limits from a configuration table; keys left out keep their defaults."""
        unknown = sorted(set(table) - set(cls.KEYS))
        if unknown:
            raise DefinitionError(f"unknown service limit {unknown[0]!r}; known: "
                                  f"{', '.join(cls.KEYS)}", key=unknown[0])
        return cls(**dict(table))


class PrincipalLimits:
    """The counters behind `ServiceLimits`, shared by every request thread of one app."""

    def __init__(self, limits: ServiceLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._submitting: dict[str, threading.Lock] = {}
        self._streams: dict[str, int] = {}
        self._attempts: dict[str, int] = {}
        self._created: dict[str, deque[float]] = {}
        self._answered: dict[str, deque[float]] = {}

    @contextmanager
    def job_slot(self, who: str, open_jobs: Callable[[], int]) -> Iterator[None]:
        """Reserve one of `who`'s executing slots for the job the block queues.

        `open_jobs()` is the queue's count of `who`'s jobs waiting or running. The block runs
        under `who`'s submission lock, so the job it queues is counted before the next
        submission of `who` is; LimitExceeded (nothing queued) when the slots are all taken.
        """
        with self._lock:
            submitting = self._submitting.setdefault(who, threading.Lock())
        with submitting:
            held = open_jobs()
            cap = self.limits.executing_attempts
            if held >= cap:
                raise LimitExceeded(f"{who!r} already has {held} jobs waiting or executing (the "
                                    "limit); retry when one has finished",
                                    limit="executing_attempts", retry_after_s=BUSY_RETRY_AFTER_S)
            yield

    def open_stream(self, who: str) -> Callable[[], None]:
        """Take one of `who`'s stream slots; returns the call that gives it back (once)."""
        self._take(self._streams, who, self.limits.event_streams, "event_streams",
                   "event streams open at once")
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                self._give_back(self._streams, who)

        return release

    @contextmanager
    def attempt_slot(self, who: str) -> Iterator[None]:
        """One of `who`'s executing slots for an attempt the block runs itself (the MCP
        server's run_script); LimitExceeded at once when they are all taken."""
        self._take(self._attempts, who, self.limits.executing_attempts, "executing_attempts",
                   "attempts executing")
        try:
            yield
        finally:
            self._give_back(self._attempts, who)

    def admit_run(self, who: str) -> None:
        """Count a run `who` is about to create; LimitExceeded if the window is full."""
        self._admit(self._created, who, self.limits.runs_per_minute, "runs_per_minute",
                    "created {cap} runs")

    def admit_answer(self, who: str) -> None:
        """Count a signal or approval `who` is about to send; LimitExceeded if the window is
        full."""
        self._admit(self._answered, who, self.limits.answers_per_minute, "answers_per_minute",
                    "sent {cap} signals and approvals")

    def _admit(self, windows: dict[str, deque[float]], who: str, cap: int, limit: str,
               what: str) -> None:
        with self._lock:
            now = self._clock()
            window = windows.setdefault(who, deque())
            while window and window[0] <= now - RATE_WINDOW_S:
                window.popleft()
            if len(window) >= cap:
                wait = max(1, math.ceil(window[0] + RATE_WINDOW_S - now))
                raise LimitExceeded(f"{who!r} {what.format(cap=cap)} in the last minute; retry "
                                    f"in {wait} s", limit=limit, retry_after_s=wait)
            window.append(now)

    def _take(self, counts: dict[str, int], who: str, cap: int, limit: str, what: str) -> None:
        with self._lock:
            held = counts.get(who, 0)
            if held >= cap:
                raise LimitExceeded(f"{who!r} already has {held} {what} (the limit); retry when "
                                    "one has finished", limit=limit,
                                    retry_after_s=BUSY_RETRY_AFTER_S)
            counts[who] = held + 1

    def _give_back(self, counts: dict[str, int], who: str) -> None:
        with self._lock:
            left = counts[who] - 1
            if left:
                counts[who] = left
            else:
                del counts[who]
