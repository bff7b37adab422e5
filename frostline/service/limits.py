"""The per-principal limits of the HTTP API: `frostline.embedded.limits`, which the MCP server
applies too (kept importable here, where the service has always found them)."""

from __future__ import annotations

from frostline.embedded.limits import (
    BUSY_RETRY_AFTER_S,
    RATE_WINDOW_S,
    LimitExceeded,
    PrincipalLimits,
    ServiceLimits,
)

__all__ = ["BUSY_RETRY_AFTER_S", "RATE_WINDOW_S", "LimitExceeded", "PrincipalLimits",
           "ServiceLimits"]
