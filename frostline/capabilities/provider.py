"""The provider interface: what the broker calls to execute one capability.

A provider receives a schema-valid payload and returns a ProviderResult. Binary outputs
(images, video) are returned as `artifacts`; the broker stores them content-addressed and the
provider refers to them in `result` by the reference that `ArtifactSink.put` returned.
A provider signals a rejection (e.g. HTTP 400 InvalidParameter) by raising ProviderError with
`status` and `error_code` fields; such a call is recorded as failed, never committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class ArtifactSink(Protocol):
    """Where providers put and read binary artifacts (backed by the run store)."""

    def put(self, data: bytes, mime: str) -> str:
        """Store bytes; returns a content reference 'sha256:<hex>'."""

    def get(self, ref: str) -> tuple[bytes, str] | None:
        """Return (bytes, mime) for a reference, or None."""


@dataclass(frozen=True)
class CallContext:
    """What a provider may know about the call besides its payload."""

    run_id: str
    identity: str  # text form of ι
    idempotency_key: str | None
    artifacts: ArtifactSink


@dataclass(frozen=True)
class ProviderResult:
    result: Any  # JSON value returned to the script
    usage: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"cost_usd": 0.02, "tokens": 0}


class Provider(Protocol):
    """Executes capabilities. `honours_idempotency_keys(cap)` says whether retrying with the
    same key is safe (the provider deduplicates), which lets the broker retry an unresolved
    attempt automatically."""

    def capabilities(self) -> frozenset[str]: ...

    def honours_idempotency_keys(self, capability: str) -> bool: ...

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult: ...
