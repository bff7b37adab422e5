"""Capability catalog and envelope: plain data that every other layer reads; and the public
names a module of Python functions needs to bring its own capabilities.

Example (a module named by ``[providers.mine] kind = "python" module = "mytools"``)::

    from frostline.capabilities import capability

    @capability("weather.lookup", price_usd=0.001, effect="read_only")
    def lookup(city: str, days: int = 1) -> dict:
        return {"city": city, "days": days, "forecast": "sunny"}

A function may raise `ProviderError` (with ``status`` and ``error_code``) to reject a call; it
is recorded as failed and never committed. It may return `Artifact(bytes, mime)` (or put them in
a returned dict or list) to store binary output. A parameter annotated `CallContext` receives
the call's run id, identity and artifact store.
"""

from frostline.capabilities.catalog import (
    ARTIFACT_REF_PATTERN,
    DEFAULT_CATALOG,
    IMAGE_SIZES,
    Capability,
    Catalog,
)
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.functions import Artifact, capability
from frostline.capabilities.provider import CallContext
from frostline.errors import ProviderError

__all__ = ["ARTIFACT_REF_PATTERN", "DEFAULT_CATALOG", "IMAGE_SIZES", "Artifact", "CallContext",
           "Capability", "Catalog", "Envelope", "ProviderError", "capability"]
