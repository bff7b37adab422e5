"""The queue's metrics in Prometheus text format: depth, enqueue → start latency, run time,
and the workers taking jobs. Read from the queue at each scrape (for Procrastinate, from its
tables), so every API process reports the same figures whichever host ran the jobs."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from frostline.embedded.jobs import JobQueue
from frostline.embedded.queue_stats import Histogram

CONTENT_TYPE = CONTENT_TYPE_LATEST


class QueueCollector(Collector):
    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        stats = self.queue.stats()
        depth = GaugeMetricFamily("frostline_jobs", "Jobs waiting or running, by state",
                                  labels=["state"])
        for state, count in sorted(stats.depth.items()):
            depth.add_metric([state], count)
        yield depth
        yield _histogram("frostline_job_start_latency_seconds",
                         "Seconds from enqueue to start, per job", stats.start_latency)
        yield _histogram("frostline_job_run_seconds", "Seconds from start to finish, per job",
                         stats.run_time)
        yield GaugeMetricFamily("frostline_workers", "Workers registered with the queue",
                                value=len(self.queue.workers()))


def _histogram(name: str, doc: str, h: Histogram) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc)
    family.add_metric([], [(_le(le), float(count)) for le, count in h.buckets], h.total)
    return family


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


def render(queue: JobQueue) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(QueueCollector(queue))
    return generate_latest(registry)
