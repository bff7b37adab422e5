"""A provider double's common part: it answers what the provider it wraps answers.

A test or a benchmark that counts, delays or fails calls subclasses `Delegating` and overrides
`invoke`; the catalog and the idempotency-key answer stay the wrapped provider's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frostline.capabilities.provider import CallContext, Provider, ProviderResult


class Delegating:
    """Wraps `inner`; every method answers as `inner` does until a subclass overrides it."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return self.inner.honours_idempotency_keys(capability)

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        return await self.inner.invoke(capability, payload, ctx)
