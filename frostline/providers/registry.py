"""The capabilities a configuration yields, and the provider that answers each one.

`open_registry(config)` builds every configured provider (the offline local providers, OpenAI-
compatible endpoints, MCP servers, Python functions), starts what must be started (one MCP
session per server, on one shared background loop), and assembles the catalog:

1. the built-in entries (unless ``builtin = false``), answered by the local providers;
2. the tools of each MCP server (``<provider>.<tool>``) and the decorated Python functions;
3. each ``[capabilities."NAME"]`` table: routes NAME to its ``provider`` and overrides its
   price, effect or description.

The `CapabilityRegistry` is itself a Provider: the broker calls it, and it routes each call to
the provider of that capability. Close it (or use it as a context manager) to stop the MCP
servers. With no configuration file the result is exactly the zero-configuration default: the
built-in catalog and `LocalProviders`.

Secrets stay on the host: an API key is read from the environment variable the file names, at
open, and handed only to the client that sends it; nothing here writes it anywhere.

A host that runs its attempts on one long-lived event loop opens the registry on that loop
instead (`async with await open_registry_async(config)`): the MCP sessions then live on the
attempts' own loop, and a tool call crosses no thread (see `frostline.providers.background`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, WAIT_ENTRIES, Capability, Catalog
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.config import (
    CapabilityConfig,
    Config,
    LocalProvider,
    MCPProvider,
    OpenAIProvider,
    PythonProvider,
)
from frostline.errors import ConfigError, FrostlineError, ProviderError
from frostline.providers.background import BackgroundLoop
from frostline.providers.http import SUPPORTED as OPENAI_CAPABILITIES
from frostline.providers.local import LocalProviders
from frostline.providers.mcp import MCPProviders
from frostline.providers.python import PythonProviders
from frostline.providers.scrub import Secrets

LOCAL = "local"


class CapabilityRegistry:
    """The catalog of a configuration and the provider of each capability; a Provider itself.

    Example::

        with open_registry(load_config()) as registry:
            execute(store, "run-1", source, providers=registry, catalog=registry.catalog, ...)
    """

    def __init__(self, config: Config, catalog: Catalog, routes: Mapping[str, str],
                 providers: Mapping[str, Any], kinds: Mapping[str, str],
                 loop: BackgroundLoop | None = None) -> None:
        self.config = config
        self.catalog = catalog
        self.routes = dict(routes)  # capability -> provider name
        self.providers = dict(providers)  # provider name -> provider
        self.kinds = dict(kinds)  # provider name -> kind
        self._loop = loop
        self._served = frozenset(self.routes)
        # what a provider's error must never carry (frostline.providers.scrub)
        self._secrets = Secrets.of_config(config)

    def provider_of(self, capability: str) -> str | None:
        return self.routes.get(capability)

    def describe(self) -> list[dict[str, Any]]:
        """One row per capability: what `frostline catalog` prints and an agent reads."""
        rows = []
        for cap in self.catalog:
            provider = self.routes.get(cap.name, LOCAL)
            rows.append({"name": cap.name, "provider": provider,
                         "kind": self.kinds.get(provider, LOCAL), "effect": cap.effect,
                         "price_usd": cap.price_usd, "production": cap.production,
                         "description": cap.description, "input_schema": dict(cap.input_schema),
                         "output_schema": None if cap.output_schema is None
                         else dict(cap.output_schema)})
        return rows

    # Provider protocol ---------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        return self._served

    def honours_idempotency_keys(self, capability: str) -> bool:
        provider = self._provider(capability)
        return provider is not None and provider.honours_idempotency_keys(capability)

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        provider = self._provider(capability)
        if provider is None:
            raise ProviderError(f"{capability}: no configured provider serves it", status=404,
                                error_code="UnknownCapability", capability=capability)
        try:
            result: ProviderResult = await provider.invoke(capability, payload, ctx)
        except Exception as exc:  # the remote side's words may quote the key it was sent
            if not self._secrets:
                raise
            raise self._secrets.error(exc, capability) from None
        return result

    def _provider(self, capability: str) -> Provider | None:
        name = self.routes.get(capability)
        return None if name is None else self.providers.get(name)

    # lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every MCP server this registry started (idempotent). A registry opened with
        `open_registry_async` is closed with `aclose` on its loop, or `close` from another
        thread while that loop runs."""
        errors = []
        for provider in self._mcp_providers():
            try:
                provider.close()
            except Exception as exc:  # close the others regardless
                errors.append(exc)
        self._stop_loop(errors)

    async def aclose(self) -> None:
        """`close` from an event loop: the one way to close a hosted registry on its loop."""
        errors: list[Exception] = []
        for provider in self._mcp_providers():
            try:
                await provider.aclose()
            except Exception as exc:  # close the others regardless
                errors.append(exc)
        self._stop_loop(errors)

    def _mcp_providers(self) -> list[MCPProviders]:
        return [p for p in self.providers.values() if isinstance(p, MCPProviders)]

    def _stop_loop(self, errors: list[Exception]) -> None:
        if self._loop is not None:
            self._loop.stop()
            self._loop = None
        if errors:
            raise errors[0]

    def __enter__(self) -> CapabilityRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> CapabilityRegistry:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def open_registry(config: Config | None = None, *, log_path: str | os.PathLike[str] | None = None,
                  latency_s: float = 0.0) -> CapabilityRegistry:
    """Build and start the providers of `config` (None: the zero-configuration default).

    Raises ConfigError for a file that names what cannot be served (an unknown tool, a module
    that cannot be imported, an unset API key variable), ProviderUnavailable for an MCP server
    that cannot be started.
    """
    config = config or Config()
    builder = _Builder(config, log_path, latency_s)
    try:
        builder.prepare(BackgroundLoop("frostline-mcp"))
        for provider in builder.mcp:
            provider.start()
        return builder.build()
    except BaseException:
        builder.close_started()
        raise


async def open_registry_async(config: Config | None = None, *,
                              log_path: str | os.PathLike[str] | None = None,
                              latency_s: float = 0.0) -> CapabilityRegistry:
    """`open_registry` on the running event loop: its MCP sessions live on this loop, so the
    attempts a host runs on it call their tools with no thread hop. Close it on this loop
    (``async with``, or `aclose`), before the loop ends.

    Example::

        async with await open_registry_async(config) as registry:
            outcome = await execute_async(store, "run-1", source, providers=registry, ...)
    """
    config = config or Config()
    builder = _Builder(config, log_path, latency_s)
    try:
        builder.prepare(BackgroundLoop.hosted("frostline-mcp"))
        for provider in builder.mcp:
            await provider.start_async()
        return builder.build()
    except BaseException:
        for provider in builder.mcp:
            with contextlib.suppress(Exception):  # a failed open reports its own error
                await provider.aclose()
        raise


class _Builder:
    def __init__(self, config: Config, log_path: str | os.PathLike[str] | None,
                 latency_s: float) -> None:
        self.config = config
        self.file = config.label
        self.log_path = log_path
        self.latency_s = latency_s
        self.loop: BackgroundLoop | None = None
        self.mcp: list[MCPProviders] = []  # created by prepare, started by the caller
        self.providers: dict[str, Any] = {}
        self.kinds: dict[str, str] = {LOCAL: LOCAL}
        self.entries: dict[str, Capability] = {}
        self.routes: dict[str, str] = {}

    def prepare(self, loop: BackgroundLoop) -> None:
        """Create (not start) the MCP providers, all on `loop` (kept only if one needs it)."""
        for p in self.config.providers.values():
            if isinstance(p, MCPProvider):
                self.loop = loop
                self.mcp.append(self._mcp(p, loop))

    def build(self) -> CapabilityRegistry:
        """The registry, once every prepared MCP provider has started."""
        c = self.config
        if c.builtin or any(n in DEFAULT_CATALOG for n in c.capabilities):
            for cap in DEFAULT_CATALOG:
                if c.builtin or cap.name in c.capabilities:
                    self._add(cap, LOCAL)
        for cap in WAIT_ENTRIES:  # the waits are the host's own: always in the catalog
            if cap.name not in self.entries:
                self._add(cap, LOCAL)
        for p in c.providers.values():
            self.kinds[p.name] = p.kind
            if isinstance(p, MCPProvider):
                for cap in self.providers[p.name].entries():
                    self._add(cap, p.name)
            elif isinstance(p, PythonProvider):
                self._python(p)
        for cap_config in c.capabilities.values():
            self._override(cap_config)
        catalog = Catalog(self.entries.values())
        self._local_and_openai(catalog)
        for provider in self.providers.values():
            if isinstance(provider, MCPProviders):
                provider.with_entries({n: catalog[n] for n in provider.capabilities()})
        return CapabilityRegistry(c, catalog, self.routes, self.providers, self.kinds, self.loop)

    def _add(self, cap: Capability, provider: str) -> None:
        known = self.routes.get(cap.name)
        if known is not None:
            chosen = self.config.capabilities.get(cap.name)
            choice = chosen.provider if chosen is not None else None
            if choice not in (known, provider):
                raise self._error(f'capabilities."{cap.name}".provider',
                                  f"a choice: both {known!r} and {provider!r} declare "
                                  f"{cap.name}", None, missing=True)
            if choice == known:
                return
        self.entries[cap.name] = cap
        self.routes[cap.name] = provider

    def _mcp(self, p: MCPProvider, loop: BackgroundLoop) -> MCPProviders:
        renames = {c.tool: c.name for c in self.config.capabilities.values()
                   if c.provider == p.name and c.tool is not None}
        if p.cwd is not None and self.config.source is not None:
            # A relative folder means: relative to the configuration file, not to wherever
            # frostline happens to be started.
            p = replace(p, cwd=str(self.config.source.parent / p.cwd))
        provider = MCPProviders(p, renames=renames, loop=loop, config_file=self.file,
                                log_path=self.log_path)
        self.providers[p.name] = provider
        return provider

    def _python(self, p: PythonProvider) -> None:
        key = f"providers.{p.name}.module" if p.modules else f"providers.{p.name}.entry_points"
        try:
            folder = self.config.source.parent if self.config.source is not None else None
            provider = PythonProviders.load(p.name, modules=p.modules,
                                            entry_points=p.entry_points, search_path=folder,
                                            log_path=self.log_path)
        except (ImportError, LookupError) as exc:
            raise self._error(key, "importable modules or installed entry points of the group "
                              "'frostline.capabilities'", f"{type(exc).__name__}: {exc}") from exc
        except FrostlineError as exc:
            raise self._error(key, "modules whose functions are marked with "
                              "@frostline.capabilities.capability", exc.message) from exc
        self.providers[p.name] = provider
        for cap in provider.entries():
            self._add(cap, p.name)

    def _override(self, c: CapabilityConfig) -> None:
        key = f'capabilities."{c.name}"'
        cap = self.entries.get(c.name)
        if cap is None:
            raise self._error(key, "a capability some provider serves: a built-in one, an MCP "
                              "tool as <provider>.<tool> (or renamed with tool = ...), or a "
                              f"decorated function; known: {', '.join(sorted(self.entries))}",
                              c.name)
        if c.provider is not None and c.tool is None:
            self._route(c, cap)
        if c.price_usd is not None:
            cap = replace(cap, price_usd=c.price_usd)
        if c.effect is not None:
            cap = cap.with_effect(c.effect)
        if c.description is not None:
            cap = replace(cap, description=c.description)
        if c.approval is not None:
            cap = replace(cap, approval_required=c.approval == "required")
        self.entries[c.name] = cap

    def _route(self, c: CapabilityConfig, cap: Capability) -> None:
        assert c.provider is not None
        kind = self.kinds.get(c.provider, LOCAL)
        key = f'capabilities."{c.name}".provider'
        if kind == "openai" and c.name not in OPENAI_CAPABILITIES:
            raise self._error(key, "an openai provider for image.generate or text.generate "
                              "only", c.provider)
        if kind in ("mcp", "python") and self.routes.get(c.name) != c.provider:
            raise self._error(key, f"a provider that serves {c.name} (it is served by "
                              f"{self.routes.get(c.name)!r})", c.provider)
        if kind == "openai" and c.model is None:
            raise self._error(f'capabilities."{c.name}".model', "the model the endpoint "
                              "should use, e.g. \"gpt-image-1\"", None, missing=True)
        self.routes[c.name] = c.provider

    def _local_and_openai(self, catalog: Catalog) -> None:
        for p in [LocalProvider(LOCAL), *self.config.providers.values()]:
            if isinstance(p, LocalProvider) and (p.name == LOCAL or p.name in self.routes.values()):
                self.providers[p.name] = LocalProviders(latency_s=p.latency_s or self.latency_s,
                                                        log_path=self.log_path, catalog=catalog)
            elif isinstance(p, OpenAIProvider):
                self._openai(p, catalog)

    def _openai(self, p: OpenAIProvider, catalog: Catalog) -> None:
        from frostline.providers.http import OpenAIProviders

        models = {c.name: c.model for c in self.config.capabilities.values()
                  if c.provider == p.name}
        if not models:
            return
        key = os.environ.get(p.api_key_env)
        if not key:
            raise self._error(f"providers.{p.name}.api_key_env", f"the environment variable "
                              f"{p.api_key_env} to hold the API key", None, missing=True)
        self.providers[p.name] = OpenAIProviders(
            p.base_url, key, image_model=models.get("image.generate") or "",
            text_model=models.get("text.generate") or "", timeout=p.timeout_s,
            max_retries=p.max_retries, idempotency_keys=p.idempotency_keys,
            log_path=self.log_path, catalog=catalog)

    def _error(self, key: str, expected: str, got: Any, *, missing: bool = False) -> ConfigError:
        what = "is not set" if missing else f"is {got!r}"
        return ConfigError(f"{self.file}: {key} {what}; expected {expected}", file=self.file,
                           key=key, expected=expected)

    def close_started(self) -> None:
        for provider in self.mcp:
            try:
                provider.close()
            except Exception:  # a failed build reports its own error, not this one
                continue
        if self.loop is not None:
            self.loop.stop()
