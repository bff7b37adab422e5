"""What a job queue reports about itself: how deep it is, and how long jobs wait and run.

Both queues (Procrastinate's over PostgreSQL, and the embedded default's in-process pool) answer
`/v1/metrics` with these, as Prometheus histograms with cumulative buckets.
"""

from __future__ import annotations

from dataclasses import dataclass

# Latency buckets (seconds) of the queue's histograms: enqueue → start and start → finish.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                   300.0, float("inf"))


@dataclass(frozen=True)
class Histogram:
    """Cumulative bucket counts (upper bound → observations at or below it), count and sum."""

    buckets: tuple[tuple[float, int], ...]
    count: int
    total: float

    @classmethod
    def of(cls, values: list[float]) -> Histogram:
        return cls(tuple((le, sum(1 for v in values if v <= le)) for le in LATENCY_BUCKETS),
                   len(values), float(sum(values)))


class Observations:
    """A running histogram (not thread-safe: its owner holds a lock)."""

    def __init__(self) -> None:
        self._counts = [0] * len(LATENCY_BUCKETS)
        self._count = 0
        self._total = 0.0

    def add(self, value: float) -> None:
        for i, le in enumerate(LATENCY_BUCKETS):
            if value <= le:
                self._counts[i] += 1
        self._count += 1
        self._total += value

    def snapshot(self) -> Histogram:
        return Histogram(tuple(zip(LATENCY_BUCKETS, self._counts, strict=True)), self._count,
                         self._total)


@dataclass(frozen=True)
class QueueStats:
    """What `/v1/metrics` reports about a queue."""

    depth: dict[str, int]  # queued | running → jobs
    start_latency: Histogram  # enqueue → start, seconds
    run_time: Histogram  # start → finish, seconds
