"""Configured secrets never travel in a provider's error.

A provider's error carries what the remote side said, and a hostile or careless endpoint may
say the key it was sent ("invalid key: Bearer sk-…"): that text becomes the call's error, the
run's events and the attempt's record, which its owner reads and the store keeps. Every
secret the configuration names (the API keys and bearer tokens it reads from the environment,
the variables it passes to an MCP server, the literal `env` values it gives one) is replaced
by `***` in a provider's error before anything stores or shows it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from frostline.config import Config, MCPProvider, OpenAIProvider
from frostline.errors import ProviderCrashed, ProviderError

MASK = "***"
# Shorter values are not treated as secrets: masking "1" or "on" would mangle every message.
MIN_SECRET_LENGTH = 6


class Secrets:
    """The secret values to remove from provider messages.

    Example: ``Secrets(["sk-abc123"]).scrub("bad key sk-abc123")`` → ``"bad key ***"``
    """

    def __init__(self, values: Iterable[str]) -> None:
        found = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
        found |= {quote(v, safe="") for v in found}  # as it appears in a URL
        # Longest first, so a secret that contains another is masked whole.
        self._values = sorted(found, key=len, reverse=True)

    @classmethod
    def of_config(cls, config: Config, environ: Mapping[str, str] | None = None) -> Secrets:
        """The secrets `config` reads from `environ` (default: the process environment)."""
        env = os.environ if environ is None else environ
        names: list[str] = [m.api_key_env for m in config.models.values()]
        literals: list[str] = []
        for p in config.providers.values():
            if isinstance(p, OpenAIProvider):
                names.append(p.api_key_env)
            elif isinstance(p, MCPProvider):
                names.extend(p.pass_env)
                if p.bearer_token_env:
                    names.append(p.bearer_token_env)
                literals.extend(p.env.values())
        return cls([*(env.get(n, "") for n in names), *literals])

    def __bool__(self) -> bool:
        return bool(self._values)

    def scrub(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def scrub_value(self, value: Any) -> Any:
        """`value` (JSON data) with every string scrubbed."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {self.scrub(str(k)): self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub_value(v) for v in value]
        return value

    def error(self, exc: BaseException, capability: str) -> ProviderError:
        """`exc`, raised by a provider of `capability`, as the ProviderError to record: its
        message and fields scrubbed. Anything else a provider raises becomes the
        ProviderError the broker would make of it, scrubbed the same way."""
        if isinstance(exc, ProviderError):
            scrubbed = ProviderError.__new__(type(exc))
            ProviderError.__init__(scrubbed, self.scrub(exc.message),
                                   **self.scrub_value(exc.fields))
            return scrubbed
        return ProviderCrashed(self.scrub(f"provider for {capability} failed: "
                                          f"{type(exc).__name__}: {exc}"))
