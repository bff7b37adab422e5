"""OpenTelemetry spans of a job, its attempt and each capability call, read back from the SDK's
in-memory exporter: the run id on every span, the identity on calls, replayed versus executed."""

from __future__ import annotations

import textwrap

import pytest

from frostline.embedded.bodies import host_body
from frostline.embedded.jobs import JobSpec, run_job
from frostline.providers.local import LocalProviders
from frostline.runtime import tracing
from frostline.testing import InProcessRunner

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

SCRIPT = textwrap.dedent('''
    async def orchestrate(ctx, args):
        a = await ctx.run("echo", {"n": 1})
        b = await ctx.run("echo", {"n": args["n"]})
        return [a["n"], b["n"]]
''')
MORE = SCRIPT.replace('    return [a["n"], b["n"]]', '    c = await ctx.run("echo", {"n": 9})\n'
                                                     '    return [a["n"], b["n"], c["n"]]')

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans():
    # The global provider can be set once per process: the first test to ask installs it.
    if not tracing.active():
        provider = sdk.TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def test_a_job_traces_its_attempt_and_every_call(spans, sqlite_store):
    body = host_body(LocalProviders(), InProcessRunner())
    run_job(sqlite_store, JobSpec("attempt", "r1", {"source": SCRIPT, "args": {"n": 2}}), body,
            worker="w1")
    run_job(sqlite_store, JobSpec("attempt", "r1", {"source": MORE, "args": {"n": 2}}), body,
            worker="w1")
    finished = spans.get_finished_spans()
    jobs = [s for s in finished if s.name == "frostline.job"]
    attempts = [s for s in finished if s.name == "frostline.attempt"]
    calls = [s for s in finished if s.name == "frostline.call"]
    assert len(jobs) == 2 and len(attempts) == 2 and len(calls) == 5
    assert all(s.attributes["frostline.run_id"] == "r1" for s in finished)
    assert [s.attributes["frostline.worker"] for s in jobs] == ["w1", "w1"]
    assert [a.attributes["frostline.attempt"] for a in attempts] == [1, 2]
    for attempt, job in zip(attempts, jobs, strict=True):
        assert attempt.parent.span_id == job.context.span_id
    by_attempt = {a.context.span_id: a.attributes["frostline.attempt"] for a in attempts}
    seen = sorted((by_attempt[c.parent.span_id], c.attributes["frostline.identity"],
                   c.attributes["frostline.outcome"], c.attributes["frostline.replayed"])
                  for c in calls)
    assert seen == [(1, "orchestrate/#0@:0", "executed", False),
                    (1, "orchestrate/#1@:0", "executed", False),
                    (2, "orchestrate/#0@:0", "replayed", True),
                    (2, "orchestrate/#1@:0", "replayed", True),
                    (2, "orchestrate/#2@:0", "executed", False)]


def test_without_a_provider_no_span_is_made(monkeypatch):
    monkeypatch.setattr(tracing, "_otel", None)
    assert not tracing.active()
    with tracing.span("frostline.job", run_id="r1") as span:
        assert span is None
    tracing.instant("frostline.call", run_id="r1")
