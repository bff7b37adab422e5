"""Shared helpers for runtime tests: run a script through `execute`, test providers."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.errors import ProviderError
from frostline.providers.local import LocalProviders
from frostline.providers.provider_log import ProviderLog
from frostline.runtime.execute import AttemptOutcome, execute
from frostline.runtime.runners import Runner
from frostline.store.base import Store
from frostline.testing import Delegating, InProcessRunner


def run(store: Store, run_id: str, source: str, providers: Provider, *,
        runner: Runner | None = None, envelope: Envelope | Mapping[str, Any] | None = None,
        args: Any = None, **kwargs: Any) -> AttemptOutcome:
    return execute(store, run_id, textwrap.dedent(source), args=args, envelope=envelope,
                   providers=providers, runner=runner or InProcessRunner(), **kwargs)


def logged(path: Path) -> list[dict[str, Any]]:
    """Real executions recorded by LocalProviders' provider log."""
    return ProviderLog(path).read() if path.exists() else []


def echo_ns(path: Path) -> list[Any]:
    return [e["payload"].get("n") for e in logged(path) if e["capability"] == "echo" and e["ok"]]


class Gauge(Delegating):
    """Wraps a provider and measures how many invocations are in flight at once.

    Each invocation waits until `target` invocations are in flight together (or all `total`
    have started), so a cap that is too loose shows as max_in_flight > target, and a cap that
    holds shows as exactly target — without depending on timing.
    """

    def __init__(self, inner: Provider, *, target: int, total: int) -> None:
        super().__init__(inner)
        self.target = target
        self.total = total
        self.started = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        self.started += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            while self.in_flight < self.target and self.started < self.total:
                await asyncio.sleep(0.001)
            for _ in range(10):  # let any call the cap wrongly admitted arrive too
                await asyncio.sleep(0)
            return await self.inner.invoke(capability, payload, ctx)
        finally:
            self.in_flight -= 1


class Slow(Delegating):
    """Wraps a provider; sleeps `payload["delay"]` seconds before delegating."""

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        await asyncio.sleep(float(payload.get("delay", 0)))
        return await self.inner.invoke(capability, payload, ctx)


class Flaky(Delegating):
    """Wraps a provider; rejects payloads whose `fail` key is true with an HTTP-400-like error."""

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        if payload.get("fail"):
            raise ProviderError(f"{capability}: rejected (HTTP 400 InvalidParameter)",
                                status=400, error_code="InvalidParameter")
        return await self.inner.invoke(capability, payload, ctx)


def local(tmp_path: Path, catalog: Catalog = DEFAULT_CATALOG, **kw: Any) -> LocalProviders:
    return LocalProviders(log_path=tmp_path / "provider.jsonl", catalog=catalog, **kw)
