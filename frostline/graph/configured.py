"""Configured capabilities as graph tools: a phase graph's tool vocabulary may be answered by
the providers of the configuration file (MCP servers, Python functions, OpenAI-compatible
endpoints) instead of functions of the bodies module.

A tool the bodies module defines wins; a graph tool it leaves out is served by the configured
capability of the same name. Effects carry over conservatively: a read-only capability is a
read-only tool; every other one is side-effecting (fails closed after a crash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, cast

from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.graph.durable import GraphTool
from frostline.providers.background import BackgroundLoop
from frostline.providers.registry import CapabilityRegistry


class _MemorySink:
    """Artifacts of a graph run that is not durable: kept in memory for its duration."""

    def __init__(self) -> None:
        self._data: dict[str, tuple[bytes, str]] = {}

    def put(self, data: bytes, mime: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        self._data[ref] = (bytes(data), mime)
        return ref

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return self._data.get(ref)


class _ConfiguredTool:
    """Callable both ways a graph calls a tool: `(payload, ctx)` through the broker (durable
    runs: a coroutine the broker awaits) and `(payload)` from the in-memory router."""

    def __init__(self, registry: CapabilityRegistry, name: str, loop: BackgroundLoop,
                 sink: _MemorySink) -> None:
        self.registry, self.name, self._loop, self._sink = registry, name, loop, sink

    def durable(self, payload: Mapping[str, Any], ctx: CallContext) -> Any:
        return self.registry.invoke(self.name, payload, ctx)

    def local(self, payload: Mapping[str, Any]) -> Any:
        ctx = CallContext("graph", self.name, None, self._sink)
        produced: ProviderResult = self._loop.run_sync(
            self.registry.invoke(self.name, payload, ctx))
        return produced.result


def configured_tools(registry: CapabilityRegistry, vocabulary: Iterable[str],
                     defined: Mapping[str, Any], *, durable: bool) -> dict[str, Any]:
    """GraphTools (durable) or plain functions (in memory) for every tool of `vocabulary` that
    `defined` leaves out and the configured catalog serves."""
    loop, sink = BackgroundLoop("frostline-graph-tools"), _MemorySink()
    out: dict[str, Any] = {}
    for name in vocabulary:
        cap = registry.catalog.get(name)
        if name in defined or cap is None or name not in registry.capabilities():
            continue
        tool = _ConfiguredTool(registry, name, loop, sink)
        out[name] = GraphTool(cast(Any, tool.durable), side_effecting=cap.effect != "read_only",
                              input_schema=dict(cap.input_schema), price_usd=cap.price_usd,
                              idempotency_keys=registry.honours_idempotency_keys(name)) \
            if durable else tool.local
    return out
