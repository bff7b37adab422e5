"""OpenTelemetry spans for jobs, attempts and capability calls, when OpenTelemetry is installed.

The spans answer the operator's questions across hosts: which worker ran a job, how long its
attempt took, and, per capability call, its identity and whether the call was replayed from the
prefix or executed (paid). Every span carries the run id. Tracing is optional (the `otel`
extra): without `opentelemetry-api` every helper here is a no-op, and with the API but no SDK
configured, OpenTelemetry's own no-op tracer answers. frostline never configures an exporter;
the embedding application or the environment does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

try:
    from opentelemetry import trace as _otel
except ImportError:  # the `otel` extra is not installed
    _otel = None  # type: ignore[assignment]

TRACER = "frostline"


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span named `name` with `frostline.<key>` attributes (None values are left out).

    Yields the span (or None without OpenTelemetry); `annotate(span, ...)` adds attributes
    learnt while it runs.
    """
    if not active():
        yield None
        return
    tracer = _otel.get_tracer(TRACER)
    with tracer.start_as_current_span(name, attributes=_attrs(attributes)) as current:
        yield current


def active() -> bool:
    """True once an application installed a tracer provider (OpenTelemetry's SDK): until then
    frostline makes no span at all, not even a no-op one, on its per-call hot path."""
    if _otel is None:
        return False
    provider = _otel.get_tracer_provider()
    return not isinstance(provider, _otel.ProxyTracerProvider | _otel.NoOpTracerProvider)


def instant(name: str, **attributes: Any) -> None:
    """A span that starts and ends now: a call decided without waiting (a replay)."""
    if active():
        _otel.get_tracer(TRACER).start_span(name, attributes=_attrs(attributes)).end()


def annotate(current: Any, **attributes: Any) -> None:
    """Add attributes to a span from `span()` (a no-op for None)."""
    if current is not None:
        current.set_attributes(_attrs(attributes))


def _attrs(attributes: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        out[f"frostline.{key}"] = value if isinstance(value, bool | int | float | str) \
            else str(value)
    return out
